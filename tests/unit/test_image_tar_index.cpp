// Tests for the tar index: archives written by GNU tar (pax and GNU formats, long names, xattrs,
// base-256 numbers) and libarchive compared member by member, and a table of broken headers.
#include <doctest/doctest.h>

#include <archive.h>
#include <archive_entry.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "image/tar_index.hpp"
#include "support/temp_dir.hpp"
#include "util/sha256.hpp"

using namespace rootlock;
using namespace rootlock::image;
using rootlock::testing::TempDir;

namespace {

std::string read_host(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void run(const std::string& command) {
    INFO(command);
    REQUIRE(std::system((command + " 2>/dev/null").c_str()) == 0);
}

// Everything a stream yields, read in pieces of `piece` bytes.
std::string drain(util::ByteStream& stream, size_t piece = 4096) {
    std::string out;
    std::vector<std::byte> buffer(piece);
    while (true) {
        auto count = stream.read(buffer);
        if (!count.ok())
            FAIL(count.error().text());
        if (count.value() == 0)
            return out;
        out.append(reinterpret_cast<const char*>(buffer.data()), count.value());
    }
}

TarIndex index_ok(const std::string& path) {
    auto index = index_tar(path);
    if (!index.ok())
        FAIL(index.error().text());
    return std::move(index).value();
}

// Bytes that do not repeat within a block, so a misplaced offset cannot read the same text.
std::string pattern(size_t size, unsigned seed) {
    std::string out(size, '\0');
    uint32_t state = seed * 2654435761U + 1;
    for (char& ch : out) {
        state = state * 1103515245U + 12345U;
        ch = static_cast<char>(state >> 24);
    }
    return out;
}

// A ustar header block: `fields` are written raw over a valid header of a regular file, then the
// checksum is computed unless `keep_checksum`.
struct Field {
    size_t offset;
    std::string bytes;
};

std::string ustar(std::string_view name, char type, uint64_t size,
                  const std::vector<Field>& fields = {}, bool keep_checksum = false) {
    std::string block(512, '\0');
    auto put = [&](size_t offset, std::string_view bytes) {
        block.replace(offset, bytes.size(), bytes);
    };
    put(0, name);
    put(100, "0000644");
    put(108, "0000000");
    put(116, "0000000");
    put(124, fmt::format("{:011o}", size));
    put(136, "14473760400");
    block[156] = type;
    put(257, std::string_view("ustar\0"
                              "00",
                              8));
    for (const Field& field : fields)
        put(field.offset, field.bytes);
    if (!keep_checksum) {
        block.replace(148, 8, 8, ' ');
        unsigned sum = 0;
        for (char ch : block)
            sum += static_cast<unsigned char>(ch);
        put(148, fmt::format("{:06o}", sum) + std::string(1, '\0'));
    }
    return block;
}

std::string padded(std::string data) {
    data.resize((data.size() + 511) / 512 * 512, '\0');
    return data;
}

// One "LEN key=value\n" pax record, LEN counting itself.
std::string pax_record(std::string_view key, std::string_view value) {
    const size_t body = key.size() + value.size() + 3;
    size_t length = body + 1;
    while (fmt::format("{}", length).size() + body != length)
        ++length;
    return fmt::format("{} {}={}\n", length, key, value);
}

const std::string k_end(1024, '\0');

// A pax extended header holding one record, padded to whole blocks.
std::string pax(std::string_view key, std::string_view value) {
    const std::string record = pax_record(key, value);
    return ustar("./PaxHeaders/x", 'x', record.size()) + padded(record);
}

}  // namespace

TEST_SUITE("rootlock::image") {
    TEST_CASE("a pax tarball from GNU tar indexes every member with its metadata and bytes") {
        TempDir dir;
        const std::string big = pattern(3 * 1024 * 1024 + 17, 1);
        const std::string long_dir = std::string(120, 'd') + "/" + std::string(90, 'e');
        const std::string long_name = long_dir + "/" + std::string(110, 'f') + ".txt";
        dir.write_file("root/etc/passwd", "root:x:0:0\n");
        dir.write_file("root/usr/lib/big.so", big);
        dir.write_file("root/" + long_name, "deep");
        dir.write_file("root/empty", "");
        dir.make_dirs("root/var/empty");
        dir.make_symlink("root/usr/lib/link.so", "big.so");
        std::filesystem::create_hard_link(dir / "root/etc/passwd", dir / "root/etc/passwd-");
        REQUIRE(::mkfifo((dir / "root/run.fifo").c_str(), 0600) == 0);
        REQUIRE(::chmod((dir / "root/usr/lib/big.so").c_str(), 0755) == 0);
        run("tar --format=pax --sort=name --numeric-owner --owner=1234 --group=5678 "
            "--mtime=@1700000000.123456789 -C " +
            dir.path() + "/root -cf " + dir.path() + "/out.tar .");

        const TarIndex index = index_ok(dir / "out.tar");
        REQUIRE(index.members.size() == 15);
        CHECK(index.members[0].stored_path == "./");
        CHECK(index.members[0].path == "/");
        CHECK(index.members[0].type == TarMemberType::directory);
        const TarMember* passwd = index.find("/etc/passwd");
        REQUIRE(passwd != nullptr);
        CHECK(passwd->stored_path == "./etc/passwd");
        CHECK(passwd->type == TarMemberType::regular);
        CHECK(passwd->uid == 1234);
        CHECK(passwd->gid == 5678);
        CHECK(passwd->mtime == 1700000000);
        CHECK(passwd->mtime_nsec == 123456789);
        CHECK(passwd->mode == 0644);
        CHECK(drain(*open_member(index, *passwd)) == "root:x:0:0\n");
        const TarMember* hard = index.find("/etc/passwd-");
        REQUIRE(hard != nullptr);
        CHECK(hard->type == TarMemberType::hardlink);
        CHECK(hard->link_target == "/etc/passwd");
        CHECK(hard->size == 0);
        const TarMember* so = index.find("/usr/lib/big.so");
        REQUIRE(so != nullptr);
        CHECK(so->mode == 0755);
        CHECK(so->size == big.size());
        CHECK(drain(*open_member(index, *so), 1U << 20) == big);
        CHECK(drain(*open_member(index, *so), 999) == big);
        const TarMember* link = index.find("/usr/lib/link.so");
        REQUIRE(link != nullptr);
        CHECK(link->type == TarMemberType::symlink);
        CHECK(link->link_target == "big.so");
        const TarMember* deep = index.find("/" + long_name);
        REQUIRE(deep != nullptr);
        CHECK(deep->stored_path == "./" + long_name);
        CHECK(drain(*open_member(index, *deep)) == "deep");
        CHECK(index.find("/run.fifo")->type == TarMemberType::fifo);
        CHECK(index.find("/run.fifo")->mode == 0600);
        CHECK(index.find("/var/empty")->type == TarMemberType::directory);
        CHECK(drain(*open_member(index, *index.find("/empty"))).empty());
        CHECK(index.find("/missing") == nullptr);
        // GNU tar's own listing agrees on the names, in archive order.
        std::string listing;
        for (const TarMember& member : index.members)
            listing += member.stored_path + "\n";
        run("tar -tf " + dir.path() + "/out.tar > " + dir.path() + "/list.txt");
        CHECK(listing == read_host(dir / "list.txt"));
    }

    TEST_CASE("GNU format long names and link targets come from L and K records") {
        TempDir dir;
        const std::string name = std::string(150, 'n') + "/" + std::string(120, 'm');
        const std::string target = "../" + std::string(180, 't');
        dir.write_file("root/" + name, "long");
        dir.make_symlink("root/s", target);
        run("tar --format=gnu --sort=name -C " + dir.path() + "/root -cf " + dir.path() +
            "/out.tar " + name + " s");
        const TarIndex index = index_ok(dir / "out.tar");
        REQUIRE(index.members.size() == 2);
        CHECK(index.members[0].path == "/" + name);
        CHECK(drain(*open_member(index, index.members[0])) == "long");
        CHECK(index.members[1].type == TarMemberType::symlink);
        CHECK(index.members[1].link_target == target);
    }

    TEST_CASE("base-256 numbers hold large ids and times before the epoch") {
        TempDir dir;
        dir.write_file("root/a", "abc");
        run("tar --format=gnu --numeric-owner --owner=3000000 --group=4000000 --mtime=@-1000 -C " +
            dir.path() + "/root -cf " + dir.path() + "/out.tar a");
        const TarIndex index = index_ok(dir / "out.tar");
        REQUIRE(index.members.size() == 1);
        CHECK(index.members[0].uid == 3000000);
        CHECK(index.members[0].gid == 4000000);
        CHECK(index.members[0].mtime == -1000);
        CHECK(drain(*open_member(index, index.members[0])) == "abc");
    }

    TEST_CASE("xattrs from GNU tar --xattrs are kept as raw bytes, sorted by name") {
        TempDir dir;
        const std::string file = dir.write_file("root/f", "x");
        const std::string binary("\x00\x01value\n", 8);
        if (::setxattr(file.c_str(), "user.zz", binary.data(), binary.size(), 0) != 0) {
            MESSAGE("no user xattrs on this file system; skipped");
            return;
        }
        REQUIRE(::setxattr(file.c_str(), "user.aa", "1", 1, 0) == 0);
        run("tar --format=pax --xattrs --xattrs-include='user.*' -C " + dir.path() + "/root -cf " +
            dir.path() + "/out.tar f");
        const TarIndex index = index_ok(dir / "out.tar");
        REQUIRE(index.members.size() == 1);
        const auto& xattrs = index.members[0].xattrs;
        REQUIRE(xattrs.size() == 2);
        CHECK(xattrs[0].first == "user.aa");
        CHECK(xattrs[0].second == "1");
        CHECK(xattrs[1].first == "user.zz");
        CHECK(xattrs[1].second == binary);
    }

    TEST_CASE("devices keep their numbers and members read in any interleaving") {
        TempDir dir;
        const std::string path = dir / "dev.tar";
        struct archive* out = archive_write_new();
        archive_write_set_format_pax_restricted(out);
        REQUIRE(archive_write_open_filename(out, path.c_str()) == ARCHIVE_OK);
        const std::string one = pattern(70000, 2), two = pattern(5000, 3);
        for (int i = 0; i < 4; ++i) {
            struct archive_entry* entry = archive_entry_new();
            const std::string& data = i == 2 ? one : two;
            archive_entry_set_pathname(entry, fmt::format("./dev/e{}", i).c_str());
            archive_entry_set_perm(entry, 0640);
            archive_entry_set_filetype(entry, i == 0 ? AE_IFCHR : i == 1 ? AE_IFBLK : AE_IFREG);
            archive_entry_set_rdev(entry, i == 0 ? makedev(1, 3) : makedev(259, 70000));
            if (i >= 2)
                archive_entry_set_size(entry, static_cast<la_int64_t>(data.size()));
            REQUIRE(archive_write_header(out, entry) == ARCHIVE_OK);
            if (i >= 2)
                archive_write_data(out, data.data(), data.size());
            archive_entry_free(entry);
        }
        archive_write_close(out);
        archive_write_free(out);
        const TarIndex index = index_ok(path);
        REQUIRE(index.members.size() == 4);
        CHECK(index.members[0].type == TarMemberType::char_device);
        CHECK(index.members[0].dev_major == 1);
        CHECK(index.members[0].dev_minor == 3);
        CHECK(index.members[1].type == TarMemberType::block_device);
        CHECK(index.members[1].dev_major == 259);
        CHECK(index.members[1].dev_minor == 70000);
        auto a = open_member(index, index.members[2]);
        auto b = open_member(index, index.members[3]);
        std::string got_a, got_b;
        std::vector<std::byte> buffer(1000);
        for (bool more = true; more;) {
            more = false;
            for (auto [stream, got] : {std::pair{a.get(), &got_a}, std::pair{b.get(), &got_b}}) {
                auto count = stream->read(buffer);
                REQUIRE(count.ok());
                got->append(reinterpret_cast<const char*>(buffer.data()), count.value());
                more = more || count.value() > 0;
            }
        }
        CHECK(got_a == one);
        CHECK(got_b == two);
    }

    TEST_CASE("an archive without end blocks, or an empty file, still indexes") {
        TempDir dir;
        auto index = index_tar(dir.write_file("a.tar", ustar("./a", '0', 3) + padded("abc")));
        REQUIRE(index.ok());
        REQUIRE(index->members.size() == 1);
        CHECK(drain(*open_member(*index, index->members[0])) == "abc");
        auto empty = index_tar(dir.write_file("e.tar", ""));
        REQUIRE(empty.ok());
        CHECK(empty->members.empty());
        auto missing = index_tar(dir / "none.tar");
        REQUIRE_FALSE(missing.ok());
        CHECK(missing.error().where == dir / "none.tar");
    }

    TEST_CASE("canonical paths drop dots and slashes and refuse climbing out") {
        CHECK(canonical_tar_path("./usr//lib/./x/").value() == "/usr/lib/x");
        CHECK(canonical_tar_path("/etc/x").value() == "/etc/x");
        CHECK(canonical_tar_path(".").value() == "/");
        CHECK(canonical_tar_path("").error().message == "empty member path");
        CHECK(canonical_tar_path("a/../../b").error().message ==
              "member path climbs out of the root: a/../../b");
    }

    TEST_CASE("malformed archives give one located error each") {
        TempDir dir;
        const std::string ok_member = ustar("./ok", '0', 2) + padded("ok");
        // '.' -> 'b' after the checksum was computed: the sum grows by 'b' - '.'.
        std::string bad_checksum = ustar("./a", '0', 0);
        bad_checksum[0] = 'b';
        const unsigned stored =
            static_cast<unsigned>(std::stoul(bad_checksum.substr(148, 6), nullptr, 8));
        const std::string checksum_error =
            fmt::format("@0x0: header checksum mismatch (stored 0{:o}, computed 0{:o})", stored,
                        stored + ('b' - '.'));
        const std::string pax_ok = pax_record("path", "x");
        const std::string big_pax(2U << 20, 'p');
        struct Case {
            std::string bytes;
            std::string error;
        };
        const std::vector<Case> cases = {
            {bad_checksum + k_end, checksum_error},
            {ustar("./a", '0', 0).substr(0, 300), "@0x0: truncated header (300 of 512 bytes)"},
            {ok_member + ustar("./a", '0', 0).substr(0, 100),
             "@0x400: truncated header (100 of 512 bytes)"},
            {ustar("./a", '0', 10000) + padded("x"),
             "@0x0: member data of 10000 bytes runs past the end of the file (1024 bytes)"},
            {ustar("./a", '0', 0, {{124, std::string("\x81") + std::string(11, '\0')}}) + k_end,
             "@0x0: size: bad base-256 number (first byte 0x81)"},
            {ustar("./a", '0', 0, {{124, "\x80\x80" + std::string(10, '\0')}}) + k_end,
             "@0x0: size: base-256 number too large"},
            {ustar("./a", '0', 0, {{108, "\xff\xff\xff\xff\xff\xff\xff\xfe"}}) + k_end,
             "@0x0: uid: negative value"},
            {ustar("./a", '0', 0, {{100, std::string("0644x\0\0", 8)}}) + k_end,
             "@0x0: mode: bad octal number \"0644x\""},
            {ustar("./a", '0', 0, {{257, "ustaR"}}) + k_end,
             "@0x0: not a ustar header (no \"ustar\" magic)"},
            {ustar("./a", 'V', 0) + k_end, "@0x0: unsupported member type 'V'"},
            {ustar("./a", 'S', 0) + k_end, "@0x0: GNU sparse members are not supported"},
            {ok_member + ustar("../etc/x", '0', 0) + k_end,
             "@0x400: member path climbs out of the root: ../etc/x"},
            {ustar("./h", '1', 0, {{157, "a/../../b"}}) + k_end,
             "@0x0: hard link target: member path climbs out of the root: a/../../b"},
            {ustar("./s", '2', 5) + padded("xxxxx") + k_end,
             "@0x0: a symbolic link declares 5 data bytes"},
            {ustar("./x", 'x', 7) + padded("path=x\n") + ustar("./a", '0', 0) + k_end,
             "@0x200: bad pax record length"},
            {ustar("./x", 'x', 9) + padded("99 path=x") + ustar("./a", '0', 0) + k_end,
             "@0x200: pax record length 99 is out of bounds"},
            {ustar("./x", 'x', 9) + padded("9 path=xy") + ustar("./a", '0', 0) + k_end,
             "@0x200: pax record does not end with a newline"},
            {ustar("./x", 'x', pax_ok.size() + 8) + padded(pax_ok + "8 =abcd\n") +
                 ustar("./a", '0', 0) + k_end,
             "@0x209: pax record without a keyword"},
            {pax("size", "-12") + ustar("./a", '0', 0) + k_end,
             "@0x200: pax size: bad number \"-12\""},
            {pax("mtime", "1.2.3") + ustar("./a", '0', 0) + k_end,
             "@0x200: pax mtime: bad time \"1.2.3\""},
            {pax("GNU.sparse.major", "1") + ustar("./a", '0', 0) + k_end,
             "@0x200: GNU sparse members are not supported"},
            {ok_member + ustar("./x", 'x', pax_ok.size()) + padded(pax_ok) + k_end,
             "@0x400: extended header not followed by a member"},
            {ustar("./x", 'x', big_pax.size()) + big_pax + k_end,
             "@0x0: extended header of 2097152 bytes is larger than 1048576"},
            {pax("size", "9") + ustar("./a", '0', 0),
             "@0x400: member data of 9 bytes runs past the end of the file (1536 bytes)"},
        };
        for (const Case& bad : cases) {
            const std::string path = dir.write_file("bad.tar", bad.bytes);
            auto index = index_tar(path);
            INFO(bad.error);
            REQUIRE_FALSE(index.ok());
            CHECK(index.error().text() == path + bad.error);
        }
    }

    TEST_CASE("pax records override header fields and an empty value restores them") {
        TempDir dir;
        const std::string records = pax_record("path", "./long/name") + pax_record("uid", "77") +
                                    pax_record("mtime", "-1.25") + pax_record("size", "3") +
                                    pax_record("uid", "");
        const std::string bytes = ustar("./x", 'x', records.size()) + padded(records) +
                                  ustar("./short", '0', 0, {{108, "0000011"}}) + padded("abc") +
                                  k_end;
        const TarIndex index = index_ok(dir.write_file("p.tar", bytes));
        REQUIRE(index.members.size() == 1);
        const TarMember& member = index.members[0];
        CHECK(member.path == "/long/name");
        CHECK(member.uid == 9);
        CHECK(member.mtime == -2);
        CHECK(member.mtime_nsec == 750000000);
        CHECK(member.size == 3);
        CHECK(member.header_offset == 0);
        CHECK(member.data_offset == 1536);
        CHECK(drain(*open_member(index, member)) == "abc");
    }

    TEST_CASE("compressed tarballs decompress to the exact plain tar, atomically") {
        TempDir dir;
        dir.write_file("root/a", pattern(300000, 4));
        dir.write_file("root/b", std::string(100000, 'b'));
        run("tar --format=gnu -C " + dir.path() + "/root -cf " + dir.path() + "/plain.tar a b");
        const std::string plain = read_host(dir / "plain.tar");
        run("gzip -k " + dir.path() + "/plain.tar");
        run("xz -k " + dir.path() + "/plain.tar");
        run("zstd -q -k " + dir.path() + "/plain.tar");
        for (const std::string suffix : {".gz", ".xz", ".zst", ""}) {
            INFO(suffix);
            const std::string out = dir / ("cache/out" + suffix + ".tar");
            auto digest = decompress_to_plain_tar(dir / ("plain.tar" + suffix), out);
            if (!digest.ok())
                FAIL(digest.error().text());
            CHECK(digest.value() == util::sha256_hex(plain));
            CHECK(read_host(out) == plain);
            CHECK(index_ok(out).members.size() == 2);
        }
        // A corrupt stream leaves neither the target nor a temporary file behind.
        std::string broken = read_host(dir / "plain.tar.gz");
        broken.resize(broken.size() / 2);
        const std::string broken_path = dir.write_file("broken.tar.gz", broken);
        auto failed = decompress_to_plain_tar(broken_path, dir / "fail/out.tar");
        REQUIRE_FALSE(failed.ok());
        CHECK(failed.error().where == broken_path);
        CHECK((!std::filesystem::exists(dir / "fail") || std::filesystem::is_empty(dir / "fail")));
        auto missing = decompress_to_plain_tar(dir / "none.tar.gz", dir / "x.tar");
        REQUIRE_FALSE(missing.ok());
        CHECK(missing.error().text() == dir / "none.tar.gz" + ": no such file or directory");
    }
}
