// Tests for the zip index: stored and deflated wheels, ZIP64 written by hand and by Python's
// zipfile, members read interleaved, a table of broken archives, and a throughput message.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "fs/zip_index.hpp"
#include "support/temp_dir.hpp"
#include "support/zip_writer.hpp"
#include "util/sha256.hpp"

using namespace rootlock;
using namespace rootlock::fs;
using rootlock::testing::TempDir;
using TestMember = rootlock::testing::ZipMember;

namespace {

std::string read_host(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// stdout of a shell command, which must succeed.
std::string run(const std::string& command) {
    std::unique_ptr<FILE, int (*)(FILE*)> pipe(::popen(command.c_str(), "r"), ::pclose);
    REQUIRE(pipe != nullptr);
    std::string text;
    char buffer[4096];
    size_t got = 0;
    while ((got = std::fread(buffer, 1, sizeof buffer, pipe.get())) > 0)
        text.append(buffer, got);
    REQUIRE(::pclose(pipe.release()) == 0);
    return text;
}

util::Result<std::string> drain(util::ByteStream& stream, size_t piece = 4096) {
    std::string out;
    std::vector<std::byte> buffer(piece);
    while (true) {
        auto count = stream.read(buffer);
        if (!count.ok())
            return count.error();
        if (count.value() == 0)
            return out;
        out.append(reinterpret_cast<const char*>(buffer.data()), count.value());
    }
}

std::string read_member(const ZipIndex& index, std::string_view name, size_t piece = 4096) {
    const fs::ZipMember* member = index.find(name);
    REQUIRE_MESSAGE(member != nullptr, std::string(name));
    auto bytes = drain(*open_member(index, *member), piece);
    if (!bytes.ok())
        FAIL(bytes.error().text());
    return bytes.value();
}

ZipIndex index_ok(const std::string& path) {
    auto index = index_zip(path, "x.whl");
    if (!index.ok())
        FAIL(index.error().text());
    return std::move(index).value();
}

std::string pattern(size_t size, unsigned seed) {
    std::string out(size, '\0');
    uint32_t state = seed * 2654435761U + 1;
    for (char& ch : out) {
        state = state * 1103515245U + 12345U;
        ch = static_cast<char>((state >> 24) & 0x3FU);  // compressible, not trivially
    }
    return out;
}

void put(std::string& out, uint64_t value, int bytes) {
    for (int i = 0; i < bytes; ++i)
        out += static_cast<char>((value >> (8 * i)) & 0xFFU);
}

void poke(std::string& bytes, size_t at, uint64_t value, int size) {
    std::string field;
    put(field, value, size);
    bytes.replace(at, field.size(), field);
}

// One stored member "a" holding `content`, every size and offset moved to ZIP64 records.
std::string zip64_by_hand(const std::string& content, uint32_t crc, bool short_extra = false) {
    std::string out;
    put(out, 0x04034b50U, 4);
    put(out, 45, 2);
    put(out, 0, 2);
    put(out, 0, 2);
    put(out, 0, 4);  // time, date
    put(out, crc, 4);
    put(out, content.size(), 4);
    put(out, content.size(), 4);
    put(out, 1, 2);
    put(out, 0, 2);
    out += "a" + content;
    const uint64_t cd_offset = out.size();
    std::string extra;
    put(extra, 1, 2);
    put(extra, short_extra ? 16 : 24, 2);
    put(extra, content.size(), 8);
    put(extra, content.size(), 8);
    if (!short_extra)
        put(extra, 0, 8);
    put(out, 0x02014b50U, 4);
    put(out, (3U << 8) | 45U, 2);
    put(out, 45, 2);
    put(out, 0, 2);
    put(out, 0, 2);
    put(out, 0, 4);
    put(out, crc, 4);
    put(out, 0xFFFFFFFFU, 4);
    put(out, 0xFFFFFFFFU, 4);
    put(out, 1, 2);
    put(out, extra.size(), 2);
    put(out, 0, 2);
    put(out, 0, 2);
    put(out, 0, 2);
    put(out, uint64_t{0100640} << 16, 4);
    put(out, 0xFFFFFFFFU, 4);
    out += "a" + extra;
    const uint64_t cd_size = out.size() - cd_offset;
    const uint64_t end64 = out.size();
    put(out, 0x06064b50U, 4);
    put(out, 44, 8);
    put(out, 45, 2);
    put(out, 45, 2);
    put(out, 0, 4);
    put(out, 0, 4);
    put(out, 1, 8);
    put(out, 1, 8);
    put(out, cd_size, 8);
    put(out, cd_offset, 8);
    put(out, 0x07064b50U, 4);
    put(out, 0, 4);
    put(out, end64, 8);
    put(out, 1, 4);
    put(out, 0x06054b50U, 4);
    put(out, 0, 4);
    put(out, 0xFFFF, 2);
    put(out, 0xFFFF, 2);
    put(out, 0xFFFFFFFFU, 4);
    put(out, 0xFFFFFFFFU, 4);
    put(out, 0, 2);
    return out;
}

}  // namespace

TEST_SUITE("rootlock::fs") {
    TEST_CASE("a stored zip indexes names, sizes and Unix modes and reads every member") {
        TempDir dir;
        const std::string big = pattern(2500000, 1);
        const std::vector<TestMember> members = {
            {"pkg/", "", testing::k_zip_dir_mode, {}},
            {"pkg/__init__.py", "", testing::k_zip_file_mode, {}},
            {"pkg/lib.so", big, testing::k_zip_executable_mode, {}},
            {"pkg/link", "lib.so", testing::k_zip_symlink_mode, {}},
        };
        const std::string path = dir / "x.whl";
        testing::write_zip(path, members);
        const ZipIndex index = index_ok(path);
        REQUIRE(index.members.size() == 4);
        for (size_t i = 0; i < members.size(); ++i) {
            CHECK(index.members[i].name == members[i].name);
            CHECK(index.members[i].method == k_zip_stored);
            CHECK(index.members[i].unix_mode == members[i].unix_mode);
            CHECK(index.members[i].uncompressed_size == members[i].content.size());
            CHECK(read_member(index, members[i].name) == members[i].content);
        }
        CHECK(read_member(index, "pkg/lib.so", 3U << 20) == big);
        CHECK(index.find("pkg/none") == nullptr);
    }

    TEST_CASE("deflated members inflate to their bytes, interleaved and in any order") {
        TempDir dir;
        const std::string one = pattern(3000000, 2), two = pattern(70000, 3);
        const std::string path = dir / "x.whl";
        testing::write_deflated_zip(path, {{"a/one", one, testing::k_zip_executable_mode, {}},
                                           {"b/two", two, testing::k_zip_file_mode, {}},
                                           {"c/empty", "", testing::k_zip_file_mode, {}}});
        const ZipIndex index = index_ok(path);
        REQUIRE(index.members.size() == 3);
        CHECK(index.members[0].method == k_zip_deflated);
        CHECK(index.members[0].compressed_size < one.size());
        CHECK(read_member(index, "c/empty").empty());
        auto a = open_member(index, index.members[0]);
        auto b = open_member(index, index.members[1]);
        std::string got_a, got_b;
        std::vector<std::byte> buffer(777);
        for (bool more = true; more;) {
            more = false;
            for (auto [stream, got] : {std::pair{a.get(), &got_a}, std::pair{b.get(), &got_b}}) {
                auto count = stream->read(buffer);
                if (!count.ok())
                    FAIL(count.error().text());
                got->append(reinterpret_cast<const char*>(buffer.data()), count.value());
                more = more || count.value() > 0;
            }
        }
        CHECK(got_a == one);
        CHECK(got_b == two);
        CHECK(read_member(index, "a/one", 1U << 20) == one);
    }

    TEST_CASE("ZIP64 end records and extra fields are followed") {
        TempDir dir;
        const std::string content = "sixty-four";
        const std::string crc =
            run("python3 -c \"import zlib; print(zlib.crc32(b'" + content + "'))\"");
        // Python's zipfile is the referee for the hand-made archive: it checks the CRC too.
        const std::string path =
            dir.write_file("z.whl", zip64_by_hand(content, static_cast<uint32_t>(std::stoul(crc))));
        CHECK(run("python3 -c \"import zipfile,sys; print(zipfile.ZipFile(sys.argv[1]).read('a')"
                  ".decode())\" " +
                  path) == content + "\n");
        const ZipIndex index = index_ok(path);
        REQUIRE(index.members.size() == 1);
        CHECK(index.members[0].compressed_size == content.size());
        CHECK(index.members[0].local_header_offset == 0);
        CHECK(index.members[0].unix_mode == 0100640);
        CHECK(read_member(index, "a") == content);
    }

    TEST_CASE("Python's zipfile writes a ZIP64 directory for 65540 members and all are read") {
        TempDir dir;
        const std::string path = dir / "many.whl";
        run("python3 -c \"import zipfile,sys\nwith zipfile.ZipFile(sys.argv[1],'w',"
            "zipfile.ZIP_DEFLATED) as z:\n    for i in range(65540): z.writestr(f'm/{i:05d}', "
            "str(i)*(i%7))\" " +
            path);
        const ZipIndex index = index_ok(path);
        REQUIRE(index.members.size() == 65540);
        for (size_t i : {size_t{0}, size_t{6}, size_t{65535}, size_t{65539}}) {
            std::string expected;
            for (size_t k = 0; k < i % 7; ++k)
                expected += std::to_string(i);
            CHECK(read_member(index, fmt::format("m/{:05d}", i)) == expected);
        }
    }

    TEST_CASE("malformed zips give one exact error each") {
        TempDir dir;
        // "a.txt" stored: local header at 0 (40 bytes), central record at 40, end record at 91.
        const std::string good = testing::build_zip({{"a.txt", "hello", 0100644, {}}});
        REQUIRE(good.size() == 113);
        struct Case {
            std::string bytes;
            std::string error;  // of index_zip, or of reading "a.txt" when the index is fine
        };
        auto tampered = [&](size_t at, uint64_t value, int size) {
            std::string bytes = good;
            poke(bytes, at, value, size);
            return bytes;
        };
        std::string renamed = good;
        renamed[30] = 'b';
        const std::vector<Case> cases = {
            {"short", "x.whl: no end of central directory record (not a zip archive)"},
            {good.substr(0, 90) + std::string(30, 'z'),
             "x.whl: no end of central directory record (not a zip archive)"},
            {tampered(91 + 16, 500, 4),
             "x.whl@0x5b: central directory (51 bytes at 0x1f4) lies outside the file"},
            {tampered(91 + 12, 60, 4),
             "x.whl@0x5b: central directory (60 bytes at 0x28) lies outside the file"},
            {tampered(91 + 10, 2, 2),
             "x.whl@0x5b: 2 entries cannot fit in a central directory of 51 bytes"},
            {tampered(91 + 4, 1, 2), "x.whl@0x5b: multi-disk archives are not supported"},
            {tampered(40, 0x02014b51U, 4), "x.whl@0x28: bad central directory record signature"},
            {tampered(40 + 28, 9, 2),
             "x.whl@0x28: central directory record runs past the directory's end"},
            {tampered(40 + 42, 20, 4),
             "x.whl@0x28: local header offset 0x14 lies outside the member data"},
            {tampered(40 + 16, 0x12345678U, 4), "x.whl: a.txt: CRC-32 mismatch"},
            {tampered(40 + 10, 12, 2), "x.whl: a.txt: unsupported compression method 12"},
            {tampered(40 + 8, 1, 2), "x.whl: a.txt: encrypted members are not supported"},
            {tampered(0, 0x04034b51U, 4), "x.whl: a.txt: no local header at 0x0"},
            {renamed, "x.whl: a.txt: local header name differs from the central directory"},
            {tampered(40 + 24, 4, 4),
             "x.whl: a.txt: stored member's sizes differ (5 compressed, 4 uncompressed)"},
            {tampered(40 + 20, 100, 4), "x.whl: a.txt: member data runs past the end of the file"},
            {zip64_by_hand("abc", 0, true), "x.whl@0x22: ZIP64 extra field too short"},
        };
        for (const Case& bad : cases) {
            INFO(bad.error);
            const std::string path = dir.write_file("bad.whl", bad.bytes);
            auto index = index_zip(path, "x.whl");
            if (!index.ok()) {
                CHECK(index.error().text() == bad.error);
                continue;
            }
            REQUIRE(index->members.size() == 1);
            auto bytes = drain(*open_member(*index, index->members[0]));
            REQUIRE_FALSE(bytes.ok());
            CHECK(bytes.error().text() == bad.error);
        }
    }

    TEST_CASE("broken deflate data and lying sizes are caught while inflating") {
        TempDir dir;
        const std::string path = dir / "d.whl";
        const std::string content = pattern(100000, 5);
        testing::write_deflated_zip(path, {{"a.txt", content, 0100644, {}}});
        const std::string good = read_host(path);
        const ZipIndex index = index_ok(path);
        const fs::ZipMember member = index.members.at(0);
        // The central record sits after the member data; find it by its offset in the end record.
        const size_t eocd = good.size() - 22;
        const size_t central =
            static_cast<unsigned char>(good[eocd + 16]) |
            (static_cast<size_t>(static_cast<unsigned char>(good[eocd + 17])) << 8) |
            (static_cast<size_t>(static_cast<unsigned char>(good[eocd + 18])) << 16);
        const size_t data = member.local_header_offset + 30 + 5 +
                            (static_cast<unsigned char>(good[28]) |
                             (static_cast<size_t>(static_cast<unsigned char>(good[29])) << 8));
        struct Case {
            std::string bytes;
            std::string error;
        };
        std::string corrupt = good;
        corrupt[data] = '\x07';  // BTYPE 11: reserved
        std::string shorter = good;
        poke(shorter, central + 20, member.compressed_size / 2, 4);
        std::string smaller = good;
        poke(smaller, central + 24, content.size() - 1, 4);
        std::string larger = good;
        poke(larger, central + 24, content.size() + 1, 4);
        const std::vector<Case> cases = {
            {corrupt, "x.whl: a.txt: bad deflate data (invalid block type)"},
            {shorter, "x.whl: a.txt: deflate data ends early"},
            {smaller, "x.whl: a.txt: more than the declared 99999 uncompressed bytes"},
            {larger, "x.whl: a.txt: 100000 uncompressed bytes, 100001 declared"},
        };
        for (const Case& bad : cases) {
            INFO(bad.error);
            const std::string bad_path = dir.write_file("bad.whl", bad.bytes);
            const ZipIndex bad_index = index_ok(bad_path);
            auto stream = open_member(bad_index, bad_index.members.at(0));
            auto bytes = drain(*stream);
            REQUIRE_FALSE(bytes.ok());
            CHECK(bytes.error().text() == bad.error);
            // The failure sticks: a stream never resumes after an error.
            std::vector<std::byte> buffer(16);
            auto again = stream->read(buffer);
            REQUIRE_FALSE(again.ok());
            CHECK(again.error().text() == bad.error);
        }
    }

    TEST_CASE("throughput of a large deflated member (a message, not a check of speed)") {
        // ROOTLOCK_ZIP_BENCH_MB=200 gives the figure for a torch-sized library.
        const char* env = std::getenv("ROOTLOCK_ZIP_BENCH_MB");
        const size_t megabytes = env != nullptr ? std::stoul(env) : 16;
        TempDir dir;
        const std::string path = dir / "big.whl";
        // Half random, half zero 4 KiB runs: about as compressible as a shared library.
        const std::string digest = run(
            "python3 -c \"import zipfile,sys,random,hashlib\nr=random.Random(7)\nh=hashlib."
            "sha256()\nwith zipfile.ZipFile(sys.argv[1],'w',zipfile.ZIP_DEFLATED,compresslevel=6)"
            " as z:\n  with z.open('torch/lib/big.so','w') as f:\n    for i in range(" +
            std::to_string(megabytes * 128) +
            "):\n      b=r.randbytes(4096)+bytes(4096)\n      h.update(b)\n      f.write(b)\n"
            "print(h.hexdigest())\" " +
            path);
        const ZipIndex index = index_ok(path);
        const auto start = std::chrono::steady_clock::now();
        auto stream = open_member(index, index.members.at(0));
        util::Sha256 hash;
        std::vector<std::byte> buffer(1U << 20);
        uint64_t total = 0;
        while (true) {
            auto count = stream->read(buffer);
            if (!count.ok())
                FAIL(count.error().text());
            if (count.value() == 0)
                break;
            hash.update(std::span<const std::byte>(buffer).first(count.value()));
            total += count.value();
        }
        const double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        CHECK(total == megabytes << 20);
        CHECK(hash.hex_digest() + "\n" == digest);
        MESSAGE(
            fmt::format("open_member: {} MiB deflated ({} MiB compressed) read and hashed in "
                        "{:.2f} s, {:.0f} MiB/s",
                        megabytes, index.members[0].compressed_size >> 20, seconds,
                        static_cast<double>(megabytes) / seconds));
    }
}
