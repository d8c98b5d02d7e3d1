// Tests for TarTree over tarballs written while the test runs (libarchive's writer; nothing
// binary is committed): one-pass ELF parsing, links, retained files, unsafe entries, bad input.
#include <doctest/doctest.h>

#include <archive.h>
#include <archive_entry.h>
#include <sys/resource.h>
#include <sys/sysmacros.h>

#include <clocale>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "elf/elf_reader.hpp"
#include "fs/path_resolve.hpp"
#include "fs/tar_tree.hpp"
#include "support/host.hpp"
#include "support/temp_dir.hpp"

using namespace rootlock;
using namespace rootlock::fs;
using rootlock::testing::read_host_text;
using rootlock::testing::TempDir;

namespace {

constexpr const char* k_host_libz = "/lib/x86_64-linux-gnu/libz.so.1";

// One member of a generated tarball.
struct Member {
    std::string name;
    char type = 'f';         // f file, d directory, l symlink, h hard link, c character device
    std::string data;        // file content, or the link target for 'l' and 'h'
    uint64_t zero_tail = 0;  // zero bytes appended to a file's content, written in chunks
    uint32_t mode = 0644;
};

// Writes `members` as a pax tarball through `filter` ("none", "gzip", "xz", "zstd").
void write_tarball(const std::string& path, const std::vector<Member>& members,
                   const std::string& filter = "none") {
    std::setlocale(LC_ALL, "C.UTF-8");
    struct archive* out = archive_write_new();
    archive_write_set_format_pax_restricted(out);
    if (filter == "gzip")
        archive_write_add_filter_gzip(out);
    if (filter == "xz")
        archive_write_add_filter_xz(out);
    if (filter == "zstd")
        archive_write_add_filter_zstd(out);
    if (archive_write_open_filename(out, path.c_str()) != ARCHIVE_OK) {
        throw std::runtime_error(archive_error_string(out));
    }
    const std::string zeros(1U << 20, '\0');
    for (const auto& member : members) {
        struct archive_entry* entry = archive_entry_new();
        archive_entry_set_pathname(entry, member.name.c_str());
        archive_entry_set_perm(entry, member.mode);
        archive_entry_set_mtime(entry, 0, 0);
        switch (member.type) {
            case 'd':
                archive_entry_set_filetype(entry, AE_IFDIR);
                break;
            case 'l':
                archive_entry_set_filetype(entry, AE_IFLNK);
                archive_entry_set_symlink(entry, member.data.c_str());
                break;
            case 'h':
                archive_entry_set_filetype(entry, AE_IFREG);
                archive_entry_set_hardlink(entry, member.data.c_str());
                break;
            case 'c':
                archive_entry_set_filetype(entry, AE_IFCHR);
                archive_entry_set_rdev(entry, makedev(1, 3));
                break;
            default:
                archive_entry_set_filetype(entry, AE_IFREG);
                archive_entry_set_size(
                    entry, static_cast<la_int64_t>(member.data.size() + member.zero_tail));
        }
        if (archive_write_header(out, entry) != ARCHIVE_OK) {
            throw std::runtime_error(archive_error_string(out));
        }
        if (member.type == 'f') {
            archive_write_data(out, member.data.data(), member.data.size());
            for (uint64_t left = member.zero_tail; left > 0;) {
                size_t chunk = static_cast<size_t>(std::min<uint64_t>(left, zeros.size()));
                archive_write_data(out, zeros.data(), chunk);
                left -= chunk;
            }
        }
        archive_entry_free(entry);
    }
    archive_write_close(out);
    archive_write_free(out);
}

std::unique_ptr<TarTree> open_tar(const std::string& path, const TarOptions& options = {}) {
    auto tree = TarTree::open(path, options);
    if (!tree.ok())
        FAIL(tree.error().text());
    return std::move(tree).value();
}

elf::ElfInfo read_host_elf(const std::string& path, bool symbols) {
    auto source = util::FileSource::open(path, path);
    REQUIRE(source.ok());
    auto info = elf::read_elf(**source, {.symbols = symbols});
    REQUIRE(info.ok());
    return std::move(info).value();
}

// The fields a check relies on, compared one by one (ElfInfo has no operator==).
void check_same_elf(const elf::ElfInfo& got, const elf::ElfInfo& expected) {
    CHECK(got.elf_class == expected.elf_class);
    CHECK(got.machine == expected.machine);
    CHECK(got.type == expected.type);
    CHECK(got.soname == expected.soname);
    CHECK(got.needed == expected.needed);
    CHECK(got.interpreter == expected.interpreter);
    CHECK(got.rpath == expected.rpath);
    CHECK(got.runpath == expected.runpath);
    CHECK(got.flags == expected.flags);
    CHECK(got.flags_1 == expected.flags_1);
    REQUIRE(got.version_needs.size() == expected.version_needs.size());
    for (size_t i = 0; i < got.version_needs.size(); ++i) {
        CHECK(got.version_needs[i].file == expected.version_needs[i].file);
        REQUIRE(got.version_needs[i].versions.size() == expected.version_needs[i].versions.size());
        for (size_t j = 0; j < got.version_needs[i].versions.size(); ++j) {
            CHECK(got.version_needs[i].versions[j].name ==
                  expected.version_needs[i].versions[j].name);
        }
    }
    REQUIRE(got.version_defs.size() == expected.version_defs.size());
    for (size_t i = 0; i < got.version_defs.size(); ++i) {
        CHECK(got.version_defs[i].name == expected.version_defs[i].name);
    }
    CHECK(got.symbols_read == expected.symbols_read);
    REQUIRE(got.symbols.size() == expected.symbols.size());
    for (size_t i = 0; i < got.symbols.size(); ++i) {
        CHECK(got.symbols[i].name == expected.symbols[i].name);
        CHECK(got.symbols[i].version == expected.symbols[i].version);
    }
}

std::vector<Member> rootfs_members() {
    std::string libz = read_host_text(k_host_libz);
    return {
        {"./", 'd', "", 0, 0755},
        {"./usr/", 'd', "", 0, 0755},
        {"./usr/lib/", 'd', "", 0, 0755},
        {"./usr/lib/x86_64-linux-gnu/", 'd', "", 0, 0755},
        {"./usr/lib/x86_64-linux-gnu/libz.so.1.2.13", 'f', libz, 0, 0644},
        {"./usr/lib/x86_64-linux-gnu/libz.so.1", 'l', "libz.so.1.2.13", 0, 0777},
        {"./usr/lib/x86_64-linux-gnu/libc.so", 'f',
         "/* GNU ld script */\nOUTPUT_FORMAT(elf64-x86-64)\nGROUP ( "
         "/lib/x86_64-linux-gnu/libc.so.6 "
         "/usr/lib/x86_64-linux-gnu/libc_nonshared.a )\n",
         0, 0644},
        {"./usr/lib/x86_64-linux-gnu/libshort.so", 'f', "INPUT(-lc)", 0, 0644},
        {"./lib", 'l', "usr/lib", 0, 0777},
        {"./opt/copy/libz-copy.so", 'h', "./usr/lib/x86_64-linux-gnu/libz.so.1.2.13", 0, 0644},
        {"./etc/ld.so.conf", 'f', "include /etc/ld.so.conf.d/*.conf\n", 0, 0644},
        {"./etc/ld.so.conf.d/x86_64-linux-gnu.conf", 'f', "/usr/lib/x86_64-linux-gnu\n", 0, 0644},
        {"./venv/lib/python3.11/site-packages/numpy-2.0.dist-info/RECORD", 'f', "numpy/x.py,,\n", 0,
         0644},
        {"./usr/share/doc/README", 'f', "documentation that nobody retains\n", 0, 0644},
        {"./dev/null", 'c', "", 0, 0666},
    };
}

size_t peak_rss_bytes() {
    struct rusage usage {};
    getrusage(RUSAGE_SELF, &usage);
    return static_cast<size_t>(usage.ru_maxrss) * 1024U;
}

}  // namespace

TEST_SUITE("rootlock::fs") {
    TEST_CASE("path_matches globs within and across components") {
        CHECK(path_matches("/etc/ld.so.conf.d/*", "/etc/ld.so.conf.d/libc.conf"));
        CHECK_FALSE(path_matches("/etc/ld.so.conf.d/*", "/etc/ld.so.conf.d/sub/x.conf"));
        CHECK_FALSE(path_matches("/etc/ld.so.conf.d/*", "/etc/ld.so.conf"));
        CHECK(path_matches("**/pyvenv.cfg", "/venv/pyvenv.cfg"));
        CHECK(path_matches("**/pyvenv.cfg", "/pyvenv.cfg"));
        CHECK_FALSE(path_matches("**/pyvenv.cfg", "/venv/pyvenv.cfg.bak"));
        CHECK(path_matches("**/*.dist-info/RECORD",
                           "/venv/lib/python3.11/site-packages/torch-2.5.1.dist-info/RECORD"));
        CHECK_FALSE(path_matches("**/*.dist-info/RECORD", "/venv/lib/a/b.dist-info/x/RECORD"));
        CHECK(path_matches("/etc/?s-release", "/etc/os-release"));
        CHECK_FALSE(path_matches("/etc/os-release", "/etc/os-release2"));
    }

    TEST_CASE("TarTree reads a rootfs tarball in one pass whatever its compression") {
        TempDir dir;
        auto members = rootfs_members();
        auto expected = read_host_elf(k_host_libz, false);
        for (const char* filter : {"none", "gzip", "xz", "zstd"}) {
            CAPTURE(filter);
            std::string path = dir / (std::string("rootfs-") + filter + ".tar");
            write_tarball(path, members, filter);
            auto tree = open_tar(path);
            CHECK(tree->describe() == path);
            CHECK(tree->issues().empty());

            auto libz = resolve(*tree, "/lib/x86_64-linux-gnu/libz.so.1");
            REQUIRE(libz);
            CHECK(libz->path == "/usr/lib/x86_64-linux-gnu/libz.so.1.2.13");
            CHECK(libz->stat.size == std::filesystem::file_size(k_host_libz));
            auto probe = tree->probe_elf(libz->path);
            REQUIRE(probe.outcome == ElfProbe::Outcome::elf);
            check_same_elf(*probe.info, expected);

            // The hard link is the same file, parsed once.
            auto copy = tree->lstat("/opt/copy/libz-copy.so");
            REQUIRE(copy);
            CHECK(copy->identity == libz->stat.identity);
            CHECK(tree->probe_elf("/opt/copy/libz-copy.so").info == probe.info);

            auto script = tree->probe_elf("/usr/lib/x86_64-linux-gnu/libc.so");
            CHECK(script.outcome == ElfProbe::Outcome::not_elf);
            CHECK(script.error == "invalid ELF header");
            auto short_probe = tree->probe_elf("/usr/lib/x86_64-linux-gnu/libshort.so");
            CHECK(short_probe.outcome == ElfProbe::Outcome::too_short);
            CHECK(short_probe.error == "file too short");
            CHECK(tree->probe_elf("/lib").outcome == ElfProbe::Outcome::not_regular);
            CHECK(tree->probe_elf("/usr/lib/nope.so").outcome == ElfProbe::Outcome::missing);

            CHECK(tree->read_file("/etc/ld.so.conf").value() ==
                  "include /etc/ld.so.conf.d/*.conf\n");
            CHECK(tree->read_file("/etc/ld.so.conf.d/x86_64-linux-gnu.conf").value() ==
                  "/usr/lib/x86_64-linux-gnu\n");
            CHECK(tree->read_file("/venv/lib/python3.11/site-packages/numpy-2.0.dist-info/RECORD")
                      .value() == "numpy/x.py,,\n");
            CHECK(tree->read_file("/usr/share/doc/README").error().text() ==
                  "/usr/share/doc/README: not retained from the tarball");
            CHECK(tree->read_file("/etc/ld.so.conf", 4).error().text() ==
                  "/etc/ld.so.conf: file is 33 bytes, over the 4-byte limit");

            CHECK(tree->lstat("/usr/lib/x86_64-linux-gnu/libz.so.1")->kind == NodeKind::symlink);
            CHECK(tree->readlink("/lib").value() == "usr/lib");
            CHECK(tree->lstat("/dev/null")->kind == NodeKind::other);
            CHECK(tree->lstat("/usr/lib/x86_64-linux-gnu/libz.so.1.2.13")->mode == 0644);
            // Parents that had no entry of their own exist as directories.
            CHECK(tree->lstat("/venv/lib/python3.11")->kind == NodeKind::directory);

            auto top = tree->list("/");
            REQUIRE(top.ok());
            std::vector<std::string> names;
            for (const auto& entry : *top)
                names.push_back(entry.name);
            CHECK(names == std::vector<std::string>{"dev", "etc", "lib", "opt", "usr", "venv"});
            auto libdir = tree->list("/usr/lib/x86_64-linux-gnu");
            REQUIRE(libdir.ok());
            REQUIRE(libdir->size() == 4);
            CHECK((*libdir)[0].name == "libc.so");
            CHECK((*libdir)[1].name == "libshort.so");
            CHECK((*libdir)[2].name == "libz.so.1");
            CHECK((*libdir)[3].name == "libz.so.1.2.13");
        }
    }

    TEST_CASE("TarTree reads dynamic symbols only when asked to") {
        TempDir dir;
        std::string path = dir / "rootfs.tar.zst";
        write_tarball(path, rootfs_members(), "zstd");
        auto plain = open_tar(path);
        auto without = plain->probe_elf("/usr/lib/x86_64-linux-gnu/libz.so.1.2.13", true);
        REQUIRE(without.outcome == ElfProbe::Outcome::elf);
        CHECK_FALSE(without.info->symbols_read);

        auto with = open_tar(path, TarOptions{.symbols = true});
        auto probe = with->probe_elf("/usr/lib/x86_64-linux-gnu/libz.so.1.2.13", true);
        REQUIRE(probe.outcome == ElfProbe::Outcome::elf);
        check_same_elf(*probe.info, read_host_elf(k_host_libz, true));
        CHECK(with->probe_elf("/opt/copy/libz-copy.so", true).info == probe.info);
    }

    TEST_CASE("TarTree shows every byte of each ELF member to an observer, and only those") {
        // A scanner that must see a whole member (device code at the far end of a library)
        // gets all of it, in order, then end(); scripts and data are not shown to anyone.
        struct Seen {
            std::string bytes;
            bool ended = false;
        };
        auto seen = std::make_shared<std::map<std::string, Seen>>();
        struct Recorder final : util::StreamObserver {
            Recorder(std::shared_ptr<std::map<std::string, Seen>> all, std::string path)
                : m_all(std::move(all)), m_path(std::move(path)) {}
            void feed(std::span<const std::byte> bytes) override {
                (*m_all)[m_path].bytes.append(reinterpret_cast<const char*>(bytes.data()),
                                              bytes.size());
            }
            void end() override { (*m_all)[m_path].ended = true; }
            std::shared_ptr<std::map<std::string, Seen>> m_all;
            std::string m_path;
        };
        TempDir dir;
        std::string path = dir / "rootfs.tar.zst";
        write_tarball(path, rootfs_members(), "zstd");
        TarOptions options;
        options.observe_elf = [seen](const std::string& member, uint64_t) {
            return std::unique_ptr<util::StreamObserver>(std::make_unique<Recorder>(seen, member));
        };
        auto tree = open_tar(path, options);
        REQUIRE(seen->size() == 1);
        const Seen& libz = seen->at("/usr/lib/x86_64-linux-gnu/libz.so.1.2.13");
        CHECK(libz.ended);
        CHECK(libz.bytes == read_host_text(k_host_libz));
        // The ELF metadata is read from the same pass all the same.
        CHECK(tree->probe_elf("/usr/lib/x86_64-linux-gnu/libz.so.1.2.13").outcome ==
              ElfProbe::Outcome::elf);
    }

    TEST_CASE("TarTree keeps unsafe entries out of the tree and reports them") {
        TempDir dir;
        std::string path = dir / "hostile.tar";
        write_tarball(path, {
                                {"./etc/passwd", 'f', "root:x:0:0::/root:/bin/sh\n", 0, 0644},
                                {"../evil", 'f', "outside", 0, 0644},
                                {"a/../../evil2", 'f', "outside", 0, 0644},
                                {"/abs/file", 'f', "absolute", 0, 0644},
                                {"./a/esc", 'l', "../../etc/passwd", 0, 0777},
                                {"./a/ok", 'l', "../etc/passwd", 0, 0777},
                                {"./h", 'h', "./nope", 0, 0644},
                                {"./h2", 'h', "../etc/passwd", 0, 0644},
                                {"./tmp/sda", 'c', "", 0, 0600},
                                {"./link", 'l', "etc", 0, 0777},
                                {"./link/shadow", 'f', "through a symlink", 0, 0644},
                                {"./etc", 'f', "replaces a directory", 0, 0644},
                            });
        auto tree = open_tar(path);
        const auto& issues = tree->issues();
        REQUIRE(issues.size() == 9);
        CHECK(issues[0].path == "../evil");
        CHECK(issues[0].problem == "entry escapes the root with '..'");
        CHECK_FALSE(issues[0].kept);
        CHECK(issues[1].path == "a/../../evil2");
        CHECK(issues[1].problem == "entry escapes the root with '..'");
        CHECK(issues[2].path == "/abs/file");
        CHECK(issues[2].problem == "absolute entry name taken relative to the root");
        CHECK(issues[2].kept);
        CHECK(issues[3].path == "./a/esc");
        CHECK(issues[3].problem == "symlink target escapes the root: ../../etc/passwd");
        CHECK(issues[3].kept);
        CHECK(issues[4].path == "./h");
        CHECK(issues[4].problem == "hard link target ./nope is missing");
        CHECK_FALSE(issues[4].kept);
        CHECK(issues[5].path == "./h2");
        CHECK(issues[5].problem == "hard link target escapes the root with '..'");
        CHECK(issues[6].path == "./tmp/sda");
        CHECK(issues[6].problem == "device node outside /dev");
        CHECK(issues[6].kept);
        CHECK(issues[7].path == "./link/shadow");
        CHECK(issues[7].problem == "parent /link is not a directory");
        CHECK(issues[8].path == "./etc");
        CHECK(issues[8].problem == "entry would replace a directory that is not empty");

        CHECK_FALSE(tree->lstat("/evil"));
        CHECK_FALSE(tree->lstat("/evil2"));
        CHECK(tree->lstat("/abs/file")->kind == NodeKind::regular);
        CHECK(tree->lstat("/a/esc")->kind == NodeKind::symlink);
        CHECK_FALSE(resolve(*tree, "/a/esc"));
        CHECK(resolve(*tree, "/a/ok")->path == "/etc/passwd");
        CHECK_FALSE(tree->lstat("/h"));
        CHECK_FALSE(tree->lstat("/h2"));
        CHECK(tree->lstat("/tmp/sda")->kind == NodeKind::other);
        CHECK_FALSE(tree->lstat("/etc/shadow"));
        CHECK(tree->lstat("/etc")->kind == NodeKind::directory);
    }

    TEST_CASE("TarTree reports a missing, garbage or truncated archive in one line") {
        TempDir dir;
        CHECK(TarTree::open(dir / "missing.tar", {}).error().text() ==
              dir / "missing.tar" + ": no such file or directory");
        CHECK(TarTree::open(dir.path(), {}).error().text() == dir.path() + ": not a regular file");

        std::string garbage = dir.write_file("garbage.tar", std::string(4096, 'x'));
        CHECK(TarTree::open(garbage, {}).error().text() ==
              garbage + ": Unrecognized archive format");

        // One entry of 100000 zero bytes: a cut after 8 KiB leaves 7680 of its 100352 padded
        // bytes behind the 512-byte header, and skipping the entry finds the end of input.
        std::vector<Member> one_file = {{"./usr/share/zeros.bin", 'f', "", 100000, 0644}};
        std::string whole = dir / "whole.tar";
        write_tarball(whole, one_file);
        std::string cut = dir.write_file("cut.tar", read_host_text(whole).substr(0, 8192));
        CHECK(TarTree::open(cut, {}).error().text() ==
              cut + ": Truncated input file (needed 100352 bytes, only 7680 available)");

        std::string zst = dir / "whole.tar.zst";
        write_tarball(zst, rootfs_members(), "zstd");
        std::string zst_bytes = read_host_text(zst);
        std::string cut_zst =
            dir.write_file("cut.tar.zst", zst_bytes.substr(0, zst_bytes.size() / 2));
        CHECK(TarTree::open(cut_zst, {}).error().text() == cut_zst + ": Truncated zstd input");

        std::string empty = dir.write_file("empty.tar", "");
        CHECK(TarTree::open(empty, {}).error().text() == empty + ": Unrecognized archive format");
    }

    TEST_CASE("TarTree streams large entries without holding them in memory") {
        TempDir dir;
        std::string path = dir / "large.tar.zst";
        constexpr uint64_t k_large = 128U << 20;
        write_tarball(path,
                      {
                          {"./usr/lib/libbig.so", 'f', read_host_text(k_host_libz), k_large, 0644},
                          {"./usr/share/big.bin", 'f', "not elf", k_large, 0644},
                          // Named like a retained file but over TarOptions::max_retained_size.
                          {"./etc/ld.so.cache", 'f', "glibc-ld.so.cache1.1", 17U << 20, 0644},
                      },
                      "zstd");
        size_t before = peak_rss_bytes();
        auto tree = open_tar(path);
        size_t after = peak_rss_bytes();
        CHECK(after - before < (48U << 20));
        CHECK(tree->retained_bytes() == 0);
        CHECK(tree->lstat("/usr/share/big.bin")->size == k_large + 7);
        CHECK(tree->read_file("/usr/share/big.bin").error().text() ==
              "/usr/share/big.bin: not retained from the tarball");
        CHECK(tree->read_file("/etc/ld.so.cache").error().text() ==
              "/etc/ld.so.cache: not retained from the tarball");
        auto big = tree->probe_elf("/usr/lib/libbig.so");
        REQUIRE(big.outcome == ElfProbe::Outcome::elf);
        CHECK(big.info->soname == "libz.so.1");
    }
}
