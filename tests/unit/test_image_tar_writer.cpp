// Tests for the deterministic rootfs tar writer: identical bytes across runs and thread counts,
// what libarchive, GNU tar, zstd and xz read back, and one exact error text per bad entry.
#include <doctest/doctest.h>

#include <archive.h>
#include <archive_entry.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <clocale>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "fs/archive_reader.hpp"
#include "image/tar_writer.hpp"
#include "support/host.hpp"
#include "support/temp_dir.hpp"
#include "util/sha256.hpp"

namespace ROOTLOCK_UNIT_ID {

using namespace rootlock;
using namespace rootlock::image;
using rootlock::testing::have_tool;
using rootlock::testing::pseudo_text;
using rootlock::testing::read_host_text;
using rootlock::testing::run_shell;
using rootlock::testing::TempDir;

namespace {

TarEntry dir(std::string path, uint32_t mode = 0755) {
    TarEntry entry;
    entry.path = std::move(path);
    entry.kind = EntryKind::directory;
    entry.mode = mode;
    entry.mtime = 1700000000;
    return entry;
}

TarEntry file(std::string path, uint64_t size, uint32_t mode = 0644) {
    TarEntry entry;
    entry.path = std::move(path);
    entry.size = size;
    entry.mode = mode;
    entry.mtime = 1700000000;
    return entry;
}

TarEntry link(std::string path, EntryKind kind, std::string target) {
    TarEntry entry;
    entry.path = std::move(path);
    entry.kind = kind;
    entry.mode = kind == EntryKind::symlink ? 0777 : 0755;
    entry.link_target = std::move(target);
    entry.mtime = 1700000000;
    return entry;
}

const std::string k_capability(
    "\x01\x00\x00\x02\x00\x20\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"
    "\x00\x00\x00\x00",
    20);
// 4 components of 71 characters and a file name: 301 characters in all.
const std::string k_long_dir = "/opt/" + std::string(71, 'a') + "/" + std::string(71, 'b') + "/" +
                               std::string(71, 'c') + "/" + std::string(71, 'd');
const std::string k_long_path = k_long_dir + "/file.txt";

// A small rootfs, in component order, with the content of every regular file.
std::vector<std::pair<TarEntry, std::string>> sample_root(size_t big_size = 256U << 10) {
    std::vector<std::pair<TarEntry, std::string>> root;
    auto add = [&](TarEntry entry, std::string content = {}) {
        root.emplace_back(std::move(entry), std::move(content));
    };
    add(dir("/"));
    add(link("/bin", EntryKind::symlink, "usr/bin"));
    add(dir("/etc"));
    add(file("/etc/caf\xc3\xa9.conf", 6), "caf\xc3\xa9\n");
    add(file("/etc/passwd", 32), "root:x:0:0:root:/root:/bin/bash\n");
    add(file("/etc/shadow", 0, 0640));
    root.back().first.gid = 42;
    add(dir("/opt"));
    for (size_t end = k_long_dir.find('/', 5); end != std::string::npos;
         end = k_long_dir.find('/', end + 1)) {
        add(dir(k_long_dir.substr(0, end)));
    }
    add(dir(k_long_dir));
    add(file(k_long_path, 5), "long\n");
    add(dir("/tmp", 01777));
    add(dir("/usr"));
    add(dir("/usr/bin"));
    add(file("/usr/bin/big", big_size, 0755), pseudo_text(big_size, 7));
    add(file("/usr/bin/ping", 4, 04755), "ELF!");
    root.back().first.xattrs = {{"security.capability", k_capability}, {"user.note", "x"}};
    add(link("/usr/bin/ping4", EntryKind::hardlink, "/usr/bin/ping"));
    add(file("/usr/bin/tool", 3, 0750), "sh\n");
    root.back().first.uid = 1000;
    root.back().first.gid = 1000;
    root.back().first.mtime = 1234567890;
    return root;
}

// Writes `root` to `host_path`; the test fails on any error.
void write_root(const std::string& host_path, const TarWriterOptions& options,
                const std::vector<std::pair<TarEntry, std::string>>& root) {
    std::setlocale(LC_ALL, "C.UTF-8");
    auto writer = TarWriter::create(host_path, options);
    REQUIRE(writer.ok());
    for (const auto& [entry, content] : root) {
        auto status = (*writer)->add_bytes(entry, content);
        if (!status.ok())
            FAIL(status.error().text());
    }
    CHECK((*writer)->entries() == root.size());
    auto status = (*writer)->finish();
    if (!status.ok())
        FAIL(status.error().text());
}

// Everything one header holds, read with libarchive's reader (owners, times, xattrs).
struct ReadBack {
    std::string name;
    uint32_t type = 0;
    uint32_t mode = 0;
    int64_t uid = -1, gid = -1, mtime = -1;
    bool has_atime = false, has_ctime = false;
    std::string uname, gname, symlink, hardlink, content;
    std::vector<std::pair<std::string, std::string>> xattrs;
};

std::vector<ReadBack> read_back(const std::string& host_path) {
    struct archive* in = archive_read_new();
    archive_read_support_filter_gzip(in);
    archive_read_support_filter_xz(in);
    archive_read_support_filter_zstd(in);
    archive_read_support_format_tar(in);
    REQUIRE(archive_read_open_filename(in, host_path.c_str(), 65536) == ARCHIVE_OK);
    std::vector<ReadBack> out;
    struct archive_entry* entry = nullptr;
    while (archive_read_next_header(in, &entry) == ARCHIVE_OK) {
        ReadBack r;
        r.name = archive_entry_pathname(entry);
        r.type = archive_entry_filetype(entry);
        r.mode = archive_entry_perm(entry);
        r.uid = archive_entry_uid(entry);
        r.gid = archive_entry_gid(entry);
        r.mtime = archive_entry_mtime(entry);
        r.has_atime = archive_entry_atime_is_set(entry) != 0;
        r.has_ctime = archive_entry_ctime_is_set(entry) != 0;
        auto text = [](const char* s) { return std::string(s != nullptr ? s : ""); };
        r.uname = text(archive_entry_uname(entry));
        r.gname = text(archive_entry_gname(entry));
        r.symlink = text(archive_entry_symlink(entry));
        r.hardlink = text(archive_entry_hardlink(entry));
        archive_entry_xattr_reset(entry);
        const char* name = nullptr;
        const void* value = nullptr;
        size_t size = 0;
        while (archive_entry_xattr_next(entry, &name, &value, &size) == ARCHIVE_OK)
            r.xattrs.emplace_back(name, std::string(static_cast<const char*>(value), size));
        char buffer[65536];
        la_ssize_t count = 0;
        while ((count = archive_read_data(in, buffer, sizeof(buffer))) > 0)
            r.content.append(buffer, static_cast<size_t>(count));
        out.push_back(std::move(r));
    }
    archive_read_free(in);
    return out;
}

// The member name the writer must give `entry`.
std::string expected_name(const TarEntry& entry) {
    std::string name = "." + entry.path;
    if (entry.kind == EntryKind::directory && name.back() != '/')
        name += '/';
    return name;
}

// A stream of `size` bytes, mostly zeros with a counter every 4 KiB, made as it is read: the
// throughput test never holds the content in memory.
class ZerosStream final : public util::ByteStream {
  public:
    explicit ZerosStream(uint64_t size) : m_left(size) {}
    util::Result<size_t> read(std::span<std::byte> out) override {
        const size_t count = static_cast<size_t>(std::min<uint64_t>(out.size(), m_left));
        std::memset(out.data(), 0, count);
        for (size_t i = 0; i < count; ++i) {
            if ((m_offset + i) % 4096 == 0)
                out[i] = static_cast<std::byte>((m_offset + i) / 4096 % 251);
        }
        m_offset += count;
        m_left -= count;
        return count;
    }

  private:
    uint64_t m_left;
    uint64_t m_offset = 0;
};

// A stream that gives `text` in 1-byte pieces, then fails or ends.
class DribbleStream final : public util::ByteStream {
  public:
    DribbleStream(std::string text, bool fail) : m_text(std::move(text)), m_fail(fail) {}
    util::Result<size_t> read(std::span<std::byte> out) override {
        if (m_at == m_text.size()) {
            if (m_fail)
                return util::make_error("source@0x3", "read failed");
            return size_t{0};
        }
        out[0] = static_cast<std::byte>(m_text[m_at++]);
        return size_t{1};
    }

  private:
    std::string m_text;
    bool m_fail;
    size_t m_at = 0;
};

}  // namespace

TEST_SUITE("rootlock::image") {
    TEST_CASE("component order puts a directory right before its contents") {
        CHECK(component_less("a", "a/b"));
        CHECK(component_less("a/b", "a.b"));
        CHECK(component_less("a", "a.b"));
        CHECK_FALSE(component_less("a.b", "a/b"));
        CHECK_FALSE(component_less("a/b", "a"));
        CHECK_FALSE(component_less("a", "a"));
        CHECK(component_less("/", "/a"));
        CHECK_FALSE(component_less("/", "/"));
        // strcmp would put "/a-b" first: '-' sorts before '/'.
        CHECK(component_less("/a/zzz", "/a-b"));
        CHECK(component_less("/usr/lib/x/y", "/usr/lib64"));
        // Bytewise: upper case before lower case, UTF-8 after ASCII.
        CHECK(component_less("/B", "/a"));
        CHECK(component_less("/z", "/\xc3\xa9"));
        std::vector<std::string> paths = {"/usr/lib64", "/a.b", "/usr/lib/x", "/a/b",    "/",
                                          "/a",         "/a-b", "/usr",       "/usr/lib"};
        std::sort(paths.begin(), paths.end(), component_less);
        const std::vector<std::string> expected = {
            "/", "/a", "/a/b", "/a-b", "/a.b", "/usr", "/usr/lib", "/usr/lib/x", "/usr/lib64"};
        CHECK(paths == expected);
    }

    TEST_CASE("the compression comes from the image name's suffix") {
        CHECK(compression_for("out/root.tar.zst").value() == Compression::zstd);
        CHECK(compression_for("root.tar.xz").value() == Compression::xz);
        CHECK(compression_for("root.tar.gz").value() == Compression::gzip);
        CHECK(compression_for("root.tar").value() == Compression::none);
        for (const char* name : {"root.tzst", "root.tar.bz2", "root.zst", "root", "root.TAR", ""}) {
            CAPTURE(name);
            auto parsed = compression_for(name);
            REQUIRE_FALSE(parsed.ok());
            CHECK(parsed.error().text() ==
                  std::string(name) + (*name != '\0' ? ": " : "") +
                      "unknown image type (use .tar.zst, .tar.xz, .tar.gz or .tar)");
        }
    }

    TEST_CASE("the same entries give the same bytes, whatever the compression") {
        TempDir tmp;
        const auto root = sample_root();
        for (auto compression :
             {Compression::none, Compression::gzip, Compression::xz, Compression::zstd}) {
            CAPTURE(static_cast<int>(compression));
            TarWriterOptions options;
            options.compression = compression;
            write_root(tmp / "a", options, root);
            write_root(tmp / "b", options, root);
            const std::string a = read_host_text(tmp / "a");
            CHECK(a.size() > 512);
            CHECK(a == read_host_text(tmp / "b"));
            if (compression == Compression::gzip) {
                REQUIRE(a.size() > 10);
                CHECK(a.substr(0, 2) == "\x1f\x8b");
                CHECK(a.substr(4, 4) == std::string(4, '\0'));  // no timestamp
            }
        }
    }

    TEST_CASE("zstd and xz give the same bytes with 1, 2 and 4 threads") {
        TempDir tmp;
        // Large enough for several zstd jobs and, at xz level 1 (3 MiB blocks), two blocks.
        const auto root = sample_root(4U << 20);
        for (auto compression : {Compression::zstd, Compression::xz}) {
            std::optional<std::string> first;
            for (int threads : {1, 2, 4}) {
                CAPTURE(threads);
                TarWriterOptions options;
                options.compression = compression;
                options.threads = threads;
                options.xz_level = 1;
                write_root(tmp / "t", options, root);
                const std::string bytes = read_host_text(tmp / "t");
                if (!first)
                    first = bytes;
                CHECK(bytes == *first);
            }
        }
    }

    TEST_CASE("libarchive reads back names, kinds, modes, owners, links, xattrs and contents") {
        TempDir tmp;
        const auto root = sample_root();
        TarWriterOptions options;
        options.compression = Compression::zstd;
        write_root(tmp / "root.tar.zst", options, root);
        const auto entries = read_back(tmp / "root.tar.zst");
        REQUIRE(entries.size() == root.size());
        for (size_t i = 0; i < root.size(); ++i) {
            const TarEntry& want = root[i].first;
            const ReadBack& got = entries[i];
            CAPTURE(want.path);
            CHECK(got.name == expected_name(want));
            CHECK(got.mode == want.mode);
            CHECK(got.uid == want.uid);
            CHECK(got.gid == want.gid);
            CHECK(got.mtime == want.mtime);
            CHECK_FALSE(got.has_atime);
            CHECK_FALSE(got.has_ctime);
            CHECK(got.uname.empty());
            CHECK(got.gname.empty());
            CHECK(got.xattrs == want.xattrs);
            CHECK(got.content == root[i].second);
            switch (want.kind) {
                case EntryKind::regular:
                    CHECK(got.type == AE_IFREG);
                    break;
                case EntryKind::directory:
                    CHECK(got.type == AE_IFDIR);
                    break;
                case EntryKind::symlink:
                    CHECK(got.type == AE_IFLNK);
                    CHECK(got.symlink == want.link_target);
                    break;
                case EntryKind::hardlink:
                    CHECK(got.hardlink == "." + want.link_target);
                    break;
            }
        }
        CHECK(entries[0].name == "./");
        CHECK(entries[3].name == "./etc/caf\xc3\xa9.conf");
        CHECK(k_long_path.size() == 301);
        CHECK(std::any_of(entries.begin(), entries.end(), [](const ReadBack& e) {
            return e.name == "." + k_long_path && e.content == "long\n";
        }));
    }

    TEST_CASE("the project's ArchiveReader reads every compression back") {
        TempDir tmp;
        const auto root = sample_root();
        for (const char* name : {"r.tar", "r.tar.gz", "r.tar.xz", "r.tar.zst"}) {
            CAPTURE(name);
            TarWriterOptions options;
            options.compression = compression_for(name).value();
            write_root(tmp / name, options, root);
            auto reader = fs::ArchiveReader::open(tmp / name);
            REQUIRE(reader.ok());
            for (const auto& [want, content] : root) {
                auto next = (*reader)->next();
                REQUIRE(next.ok());
                REQUIRE(next->has_value());
                const fs::ArchiveEntry& got = **next;
                CHECK(got.path == expected_name(want));
                CHECK(got.mode == want.mode);
                if (want.kind == EntryKind::hardlink) {
                    CHECK(got.type == fs::ArchiveEntryType::hardlink);
                    CHECK(got.link_target == "." + want.link_target);
                } else if (want.kind == EntryKind::symlink) {
                    CHECK(got.link_target == want.link_target);
                }
                std::string data;
                std::vector<std::byte> buffer(1U << 16);
                while (true) {
                    auto count = (*reader)->read(buffer);
                    REQUIRE(count.ok());
                    if (*count == 0)
                        break;
                    data.append(reinterpret_cast<const char*>(buffer.data()), *count);
                }
                CHECK(data == content);
            }
            auto end = (*reader)->next();
            REQUIRE(end.ok());
            CHECK_FALSE(end->has_value());
        }
    }

    TEST_CASE("GNU tar lists ./ names with numeric owners and reads the capability xattr") {
        if (!have_tool("tar")) {
            MESSAGE("GNU tar not installed: skipped");
            return;
        }
        TempDir tmp;
        const auto root = sample_root();
        for (const char* name : {"r.tar", "r.tar.gz", "r.tar.xz", "r.tar.zst"}) {
            CAPTURE(name);
            if (std::string(name).ends_with(".zst") && !have_tool("zstd"))
                continue;
            TarWriterOptions options;
            options.compression = compression_for(name).value();
            write_root(tmp / name, options, root);
            auto [names, status] = run_shell("tar -tf " + (tmp / name));
            CHECK(status == 0);
            std::string expected;
            for (const auto& [entry, content] : root)
                expected += expected_name(entry) + "\n";
            CHECK(names == expected);
        }
        auto [listing, status] = run_shell(
            "TZ=UTC tar --numeric-owner --xattrs --xattrs-include='*' -tvvf " + (tmp / "r.tar"));
        CAPTURE(listing);
        CHECK(status == 0);
        CHECK(listing.find("tar:") == std::string::npos);  // no warning at all
        CHECK(listing.find("drwxr-xr-x  0/0               0 2023-11-14 22:13 ./\n") == 0);
        // GNU tar's --utc would hide the xattr lines, hence TZ. It lists xattrs in reverse.
        CHECK(listing.find("-rwsr-xr-x* 0/0               4 2023-11-14 22:13 ./usr/bin/ping\n"
                           "  x: 1 user.note\n"
                           "  x: 20 security.capability\n") != std::string::npos);
        CHECK(listing.find("-rwxr-x---  1000/1000         3 2009-02-13 23:31 ./usr/bin/tool\n") !=
              std::string::npos);
        CHECK(listing.find("hrwxr-xr-x  0/0               0 2023-11-14 22:13 ./usr/bin/ping4 "
                           "link to ./usr/bin/ping\n") != std::string::npos);
        CHECK(listing.find("-rw-r-----  0/42              0 2023-11-14 22:13 ./etc/shadow\n") !=
              std::string::npos);
        CHECK(listing.find("drwxrwxrwt  0/0               0 2023-11-14 22:13 ./tmp/\n") !=
              std::string::npos);
    }

    TEST_CASE("zstd -t, xz -t and gzip -t accept the images") {
        TempDir tmp;
        const auto root = sample_root();
        for (const auto& [name, tool] :
             {std::pair{"r.tar.zst", "zstd"}, {"r.tar.xz", "xz"}, {"r.tar.gz", "gzip"}}) {
            if (!have_tool(tool)) {
                MESSAGE(tool << " not installed: skipped");
                continue;
            }
            TarWriterOptions options;
            options.compression = compression_for(name).value();
            write_root(tmp / name, options, root);
            auto [output, status] = run_shell(std::string(tool) + " -t " + (tmp / name));
            CAPTURE(output);
            CHECK(status == 0);
        }
    }

    TEST_CASE("bad entries are refused with exact errors and leave the writer usable") {
        std::setlocale(LC_ALL, "C.UTF-8");
        TempDir tmp;
        TarWriterOptions options;
        options.compression = Compression::none;
        auto writer = TarWriter::create(tmp / "r.tar", options);
        REQUIRE(writer.ok());
        TarWriter& w = **writer;
        REQUIRE(w.add_bytes(dir("/"), "").ok());
        REQUIRE(w.add_bytes(dir("/etc"), "").ok());
        REQUIRE(w.add_bytes(file("/etc/a", 1), "a").ok());

        struct Case {
            TarEntry entry;
            std::string content;
            std::string error;
        };
        TarEntry bad_mode = file("/etc/m", 0, 0100644);
        TarEntry unsorted = file("/etc/x", 0);
        unsorted.xattrs = {{"user.b", "1"}, {"user.a", "2"}};
        TarEntry repeated = file("/etc/x", 0);
        repeated.xattrs = {{"user.a", "1"}, {"user.a", "2"}};
        TarEntry bad_xattr = file("/etc/x", 0);
        bad_xattr.xattrs = {{"user.a=b", "1"}};
        TarEntry dir_target = dir("/etc/d");
        dir_target.link_target = "/etc/a";
        const Case cases[] = {
            {dir("/bin"), "", "/bin: out of order after /etc/a"},
            {file("/etc", 0), "", "/etc: out of order after /etc/a"},
            {file("/etc/a", 1), "a", "/etc/a: duplicate entry"},
            {file("/etc/../x", 0), "", "/etc/../x: path has a \"..\" component"},
            {file("/etc/./x", 0), "", "/etc/./x: path has a \".\" component"},
            {file("etc/x", 0), "", "etc/x: path is not absolute"},
            {file("/etc//x", 0), "", "/etc//x: path has an empty component"},
            {file("/etc/x/", 0), "", "/etc/x/: path ends with a slash"},
            {file("", 0), "", "empty path"},
            {file(std::string("/etc/x\0y", 8), 0), "", "/etc/x\\x00y: path holds a NUL byte"},
            {file("/etc/b", 5), "abc", "/etc/b: content has 3 bytes, the entry declares 5"},
            {file("/etc/b", 2), "abc", "/etc/b: content has 3 bytes, the entry declares 2"},
            {dir("/etc/d"), "abc", "/etc/d: content has 3 bytes, the entry declares 0"},
            {link("/etc/h", EntryKind::hardlink, "/etc/zz"), "",
             "/etc/h: hard link to /etc/zz, which is not a file written before it"},
            {link("/etc/h", EntryKind::hardlink, "/etc"), "",
             "/etc/h: hard link to /etc, which is not a file written before it"},
            {link("/etc/h", EntryKind::hardlink, "etc/a"), "",
             "/etc/h: hard link target: path is not absolute"},
            {link("/etc/l", EntryKind::symlink, ""), "", "/etc/l: symlink with an empty target"},
            {link("/etc/l", EntryKind::symlink, std::string("a\0", 2)), "",
             "/etc/l: symlink target holds a NUL byte"},
            {dir_target, "", "/etc/d: a directory has no link target"},
            {bad_mode, "", "/etc/m: mode 0100644 has bits outside 07777"},
            {unsorted, "", "/etc/x: xattr user.a is not after the one before it"},
            {repeated, "", "/etc/x: xattr user.a is not after the one before it"},
            {bad_xattr, "", "/etc/x: bad xattr name \"user.a=b\""},
        };
        for (const Case& c : cases) {
            CAPTURE(c.error);
            auto status = w.add_bytes(c.entry, c.content);
            REQUIRE_FALSE(status.ok());
            CHECK(status.error().text() == c.error);
        }
        TarEntry sized_dir = dir("/etc/d");
        sized_dir.size = 3;
        CHECK(w.add(sized_dir, nullptr).error().text() ==
              "/etc/d: a directory has no content, the entry declares 3 bytes");
        DribbleStream extra("xy", false);
        CHECK(w.add(link("/etc/l", EntryKind::symlink, "a"), &extra).error().text() ==
              "/etc/l: content has 2 bytes, the entry declares 0");

        // After every refusal the writer goes on, and only good entries are in the image.
        REQUIRE(w.add_bytes(link("/etc/h", EntryKind::hardlink, "/etc/a"), "").ok());
        REQUIRE(w.finish().ok());
        CHECK(w.entries() == 4);
        CHECK(w.add_bytes(dir("/var"), "").error().text() ==
              tmp / "r.tar" + ": the image is already finished");
        std::vector<std::string> names;
        for (const auto& entry : read_back(tmp / "r.tar"))
            names.push_back(entry.name);
        CHECK(names == std::vector<std::string>{"./", "./etc/", "./etc/a", "./etc/h"});
    }

    TEST_CASE("a stream of the wrong length or that fails ends the image with its error") {
        std::setlocale(LC_ALL, "C.UTF-8");
        TempDir tmp;
        struct Case {
            std::string text;
            bool fail;
            std::string error;
        };
        const Case cases[] = {
            {"abc", false, "/f: content has 3 bytes, the entry declares 5"},
            {"abcdefgh", false, "/f: content has 8 bytes, the entry declares 5"},
            {"abc", true, "source@0x3: read failed"},
            {"abcdefgh", true, "source@0x3: read failed"},
        };
        for (const Case& c : cases) {
            CAPTURE(c.error);
            auto writer = TarWriter::create(tmp / "r.tar", TarWriterOptions{});
            REQUIRE(writer.ok());
            DribbleStream stream(c.text, c.fail);
            auto status = (*writer)->add(file("/f", 5), &stream);
            REQUIRE_FALSE(status.ok());
            CHECK(status.error().text() == c.error);
            const std::string later =
                tmp / "r.tar" + ": an earlier error left the image incomplete";
            CHECK((*writer)->add_bytes(file("/g", 0), "").error().text() == later);
            CHECK((*writer)->finish().error().text() == later);
        }
    }

    TEST_CASE("a writer dropped without finish leaves no end of archive") {
        std::setlocale(LC_ALL, "C.UTF-8");
        TempDir tmp;
        for (auto compression : {Compression::none, Compression::zstd}) {
            CAPTURE(static_cast<int>(compression));
            TarWriterOptions options;
            options.compression = compression;
            {
                auto writer = TarWriter::create(tmp / "r", options);
                REQUIRE(writer.ok());
                REQUIRE((*writer)->add_bytes(dir("/"), "").ok());
                const std::string big = pseudo_text(3U << 20, 3);
                REQUIRE((*writer)->add_bytes(file("/big", big.size()), big).ok());
            }
            auto reader = fs::ArchiveReader::open(tmp / "r");
            bool failed = !reader.ok();
            while (!failed) {
                auto next = (*reader)->next();
                if (!next.ok() || !next->has_value()) {
                    failed = !next.ok();
                    break;
                }
                std::vector<std::byte> buffer(1U << 16);
                for (auto count = (*reader)->read(buffer); !failed && count.ok() && *count > 0;
                     count = (*reader)->read(buffer)) {
                }
                failed = !(*reader)->read(buffer).ok();
            }
            CHECK(failed);
        }
    }

    TEST_CASE("the digest is the sha256 of the file's bytes, for every compression") {
        std::setlocale(LC_ALL, "C.UTF-8");
        TempDir tmp;
        for (auto compression :
             {Compression::none, Compression::gzip, Compression::xz, Compression::zstd}) {
            CAPTURE(static_cast<int>(compression));
            TarWriterOptions options;
            options.compression = compression;
            auto writer = TarWriter::create(tmp / "r", options);
            REQUIRE(writer.ok());
            REQUIRE((*writer)->add_bytes(dir("/"), "").ok());
            const std::string big = pseudo_text(5U << 20, 11);
            REQUIRE((*writer)->add_bytes(file("/big", big.size()), big).ok());
            REQUIRE((*writer)->finish().ok());
            CHECK(util::Sha256::to_hex((*writer)->digest()) ==
                  util::sha256_hex(read_host_text(tmp / "r")));
        }
    }

    TEST_CASE("a full disk ends the image with the reason") {
        std::setlocale(LC_ALL, "C.UTF-8");
        TarWriterOptions options;
        options.compression = Compression::none;
        auto writer = TarWriter::create("/dev/full", options);
        REQUIRE(writer.ok());
        REQUIRE((*writer)->add_bytes(dir("/"), "").ok());
        // 64 MiB of content: the sink's queue fills, and some add() meets the error.
        const std::string big = pseudo_text(1U << 20, 5);
        std::optional<util::Error> error;
        for (int i = 0; i < 64 && !error; ++i) {
            auto added = (*writer)->add_bytes(file(fmt::format("/f{:02}", i), big.size()), big);
            if (!added.ok())
                error = added.error();
        }
        REQUIRE(error.has_value());
        CHECK(error->text() == "/dev/full: no space left on device");
        CHECK((*writer)->finish().error().text() ==
              "/dev/full: an earlier error left the image incomplete");
    }

    TEST_CASE("bad options and unwritable paths fail at create") {
        TempDir tmp;
        TarWriterOptions options;
        options.threads = 0;
        CHECK(TarWriter::create(tmp / "r.tar.zst", options).error().text() ==
              tmp / "r.tar.zst" + ": threads must be at least 1, not 0");
        options.threads = 2;
        options.zstd_level = 99;
        CHECK(TarWriter::create(tmp / "r.tar.zst", options).error().text() ==
              tmp / "r.tar.zst" + ": zstd level 99 is not in 1..22");
        options.compression = Compression::xz;
        options.xz_level = -1;
        CHECK(TarWriter::create(tmp / "r.tar.zst", options).error().text() ==
              tmp / "r.tar.zst" + ": xz level -1 is not in 0..9");
        CHECK_FALSE(std::filesystem::exists(tmp / "r.tar.zst"));  // nothing left behind
        CHECK(TarWriter::create(tmp / "none/r.tar", TarWriterOptions{}).error().text() ==
              tmp / "none/r.tar" + ": no such file or directory");
    }

    TEST_CASE("under the C locale a non-ASCII name is an error, not a crash") {
        TempDir tmp;
        std::setlocale(LC_ALL, "C");
        auto writer = TarWriter::create(tmp / "r.tar", TarWriterOptions{});
        REQUIRE(writer.ok());
        auto status = (*writer)->add_bytes(file("/caf\xc3\xa9", 0), "");
        std::setlocale(LC_ALL, "C.UTF-8");
        REQUIRE_FALSE(status.ok());
        CHECK(status.error().text() ==
              "/caf\xc3\xa9: Can't translate pathname './caf\xc3\xa9' to UTF-8");
    }

    TEST_CASE("throughput on 200 MB of mostly zeros" * doctest::skip()) {
        // Run with --no-skip; it prints sizes and wall times and asserts only correctness.
        std::setlocale(LC_ALL, "C.UTF-8");
        TempDir tmp;
        constexpr uint64_t k_size = 200'000'000;
        for (const char* name : {"r.tar", "r.tar.gz", "r.tar.xz", "r.tar.zst"}) {
            TarWriterOptions options;
            options.compression = compression_for(name).value();
            const auto start = std::chrono::steady_clock::now();
            auto writer = TarWriter::create(tmp / name, options);
            REQUIRE(writer.ok());
            REQUIRE((*writer)->add_bytes(dir("/"), "").ok());
            ZerosStream zeros(k_size);
            REQUIRE((*writer)->add(file("/zeros", k_size), &zeros).ok());
            REQUIRE((*writer)->finish().ok());
            const std::chrono::duration<double> seconds = std::chrono::steady_clock::now() - start;
            struct stat st {};
            REQUIRE(::stat((tmp / name).c_str(), &st) == 0);
            struct rusage usage {};
            ::getrusage(RUSAGE_SELF, &usage);
            MESSAGE(fmt::format(
                "{}: {} bytes in, {} bytes out, {:.2f} s, {:.0f} MB/s, peak RSS {} MiB", name,
                k_size, st.st_size, seconds.count(),
                static_cast<double>(k_size) / 1e6 / seconds.count(), usage.ru_maxrss / 1024));
        }
    }

    TEST_CASE("an OCI layer is compressed in process: its diff_id is the tar's own digest") {
        TempDir tmp;
        const std::string text = pseudo_text(3 << 20, 7);
        // Writes the same three entries with `options`; returns the writer's digests and size.
        auto write = [&](const std::string& name, TarWriterOptions options) {
            auto writer = TarWriter::create(tmp / name, options);
            REQUIRE(writer.ok());
            REQUIRE((*writer)->add_bytes(dir("/opt"), "").ok());
            REQUIRE((*writer)->add_bytes(file("/opt/a", text.size()), text).ok());
            REQUIRE((*writer)->add_bytes(file("/opt/b", 5), "hello").ok());
            REQUIRE((*writer)->finish().ok());
            return std::make_tuple(util::Sha256::to_hex((*writer)->digest()),
                                   util::Sha256::to_hex((*writer)->uncompressed_digest()),
                                   (*writer)->size());
        };
        TarWriterOptions plain;
        plain.compression = Compression::none;
        const auto [tar_digest, tar_again, tar_size] = write("plain.tar", plain);
        CHECK(tar_digest == tar_again);
        const std::string tar = read_host_text(tmp / "plain.tar");
        CHECK(tar_size == tar.size());

        for (const auto compression : {Compression::gzip, Compression::zstd}) {
            const bool gzip = compression == Compression::gzip;
            CAPTURE(gzip);
            TarWriterOptions layer;
            layer.compression = compression;
            layer.in_process = true;
            layer.threads = 1;
            const std::string name = gzip ? "layer.tar.gz" : "layer.tar.zst";
            const auto [blob, diff_id, size] = write(name, layer);
            const std::string bytes = read_host_text(tmp / name);
            CHECK(diff_id == tar_digest);
            CHECK(blob == util::sha256_hex(bytes));
            CHECK(size == bytes.size());
            CHECK(bytes.size() < tar.size() / 2);
            // The real decompressors give back the very tar the plain writer wrote.
            const auto [out, status] =
                run_shell((gzip ? "gzip -dc " : "zstd -dcq ") + (tmp / name) + " | sha256sum");
            CHECK(status == 0);
            CHECK(out.substr(0, 64) == tar_digest);
            // The same bytes again, and with more threads (zstd's workers change nothing).
            layer.threads = 2;
            const auto [blob_again, diff_again, size_again] = write(name + ".2", layer);
            CHECK(blob_again == blob);
            CHECK(diff_again == diff_id);
        }
        // gzip's header: no name, no mtime, so nothing of the machine or the moment.
        const std::string gz = read_host_text(tmp / "layer.tar.gz");
        REQUIRE(gz.size() > 10);
        CHECK(gz.substr(0, 4) == std::string("\x1f\x8b\x08\x00", 4));
        CHECK(gz.substr(4, 4) == std::string(4, '\0'));

        TarWriterOptions xz;
        xz.compression = Compression::xz;
        xz.in_process = true;
        auto refused = TarWriter::create(tmp / "x.tar.xz", xz);
        REQUIRE_FALSE(refused.ok());
        CHECK(refused.error().message == "only gzip and zstd layers are compressed in process");
        TarWriterOptions level;
        level.compression = Compression::gzip;
        level.in_process = true;
        level.gzip_level = 0;
        auto bad_level = TarWriter::create(tmp / "l.tar.gz", level);
        REQUIRE_FALSE(bad_level.ok());
        CHECK(bad_level.error().message == "gzip level 0 is not in 1..9");
    }
}

}  // namespace ROOTLOCK_UNIT_ID
