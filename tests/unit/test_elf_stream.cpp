// read_elf_stream: it must agree with read_elf on every object (also on thousands of mutated
// ones), keep only the metadata (not a 64 MiB text segment), and fail clearly where it skipped.
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <random>
#include <sstream>

#include <fmt/format.h>

#include "elf/elf_reader.hpp"
#include "support/elf_writer.hpp"
#include "support/temp_dir.hpp"

namespace ROOTLOCK_UNIT_ID {
namespace {

using namespace rootlock;
using elf::ElfInfo;
using elf::ReadOptions;
using testing::ElfSpec;

// Serves a host file front to back, as an archive member would be.
class FileStream final : public util::ByteStream {
  public:
    explicit FileStream(const std::string& path) : m_in(path, std::ios::binary) {}
    util::Result<size_t> read(std::span<std::byte> out) override {
        m_in.read(reinterpret_cast<char*>(out.data()), static_cast<std::streamsize>(out.size()));
        return static_cast<size_t>(m_in.gcount());
    }

  private:
    std::ifstream m_in;
};

// Every field of an ElfInfo as text, so two results compare in one CHECK with a readable diff.
std::string describe(const ElfInfo& info) {
    std::ostringstream out;
    out << "class " << static_cast<int>(info.elf_class) << " order "
        << static_cast<int>(info.byte_order) << " abi " << static_cast<int>(info.os_abi) << " type "
        << info.type << " machine " << info.machine << " dynamic " << info.has_dynamic
        << "\ninterp " << info.interpreter << "\nsoname " << info.soname << "\n";
    for (const auto& name : info.needed)
        out << "needed " << name << "\n";
    auto path = [&](const char* what, const auto& list) {
        if (!list)
            return;
        out << what;
        for (const auto& part : *list)
            out << " [" << part << "]";
        out << "\n";
    };
    path("rpath", info.rpath);
    path("runpath", info.runpath);
    out << "flags " << info.flags << " " << info.flags_1 << "\n";
    for (const auto& need : info.version_needs) {
        out << "need " << need.file << "\n";
        for (const auto& v : need.versions) {
            out << "  " << v.name << " " << v.hash << " " << v.index << " " << v.weak << "\n";
        }
    }
    for (const auto& def : info.version_defs) {
        out << "def " << def.name << " " << def.index << " " << def.flags << " " << def.hash;
        for (const auto& parent : def.parents)
            out << " " << parent;
        out << "\n";
    }
    out << "symbols " << info.symbols_read << " " << info.symbols.size() << "\n";
    for (const auto& s : info.symbols) {
        out << s.name << "@" << s.version << " " << s.defined << s.hidden << " "
            << static_cast<int>(s.binding) << " " << static_cast<int>(s.type) << "\n";
    }
    return out.str();
}

std::string outcome(const util::Result<ElfInfo>& result) {
    return result ? describe(*result) : "error: " + result.error().text();
}

// Reads `bytes` both ways and requires the same outcome; returns the stream's statistics.
elf::StreamStats check_same(const std::vector<std::byte>& bytes, ReadOptions options = {true}) {
    util::MemorySource source("lib.so", bytes);
    auto direct = elf::read_elf(source, options);
    testing::MemoryStream stream(bytes);
    elf::StreamStats stats;
    auto streamed = elf::read_elf_stream(stream, bytes.size(), "lib.so", options, stats);
    CHECK(direct.ok());
    CHECK(outcome(streamed) == outcome(direct));
    return stats;
}

ElfSpec library_spec() {
    ElfSpec spec;
    spec.interpreter = "/lib/ld-linux-aarch64.so.1";
    spec.soname = "libs.so.1";
    spec.needed = {"libc.so.6"};
    spec.runpath = "$ORIGIN";
    spec.version_defs = {{"S_1", 2, 0, {}}, {"S_2", 3, 0, {"S_1"}}};
    spec.version_needs = {{"libc.so.6", {{"GLIBC_2.17", 4, false}}}};
    spec.symbols = {{"s", true, elf::k_stb_global, elf::k_stt_func, 3, false},
                    {"s", true, elf::k_stb_global, elf::k_stt_func, 2, true},
                    {"malloc", false, elf::k_stb_global, elf::k_stt_func, 4, false}};
    return spec;
}

constexpr const char* k_libc = "/lib/x86_64-linux-gnu/libc.so.6";

// Reads `bytes` both ways: it must not crash, and the stream must agree with read_elf unless it
// met metadata in a part it had already skipped. Returns whether the object parsed.
bool survive(const std::vector<std::byte>& bytes) {
    util::MemorySource source("fuzz.so", bytes);
    auto direct = elf::read_elf(source, ReadOptions{true});
    testing::MemoryStream stream(bytes);
    auto streamed = elf::read_elf_stream(stream, bytes.size(), "fuzz.so", ReadOptions{true});
    const std::string expected = outcome(direct);
    const std::string actual = outcome(streamed);
    if (actual != expected && actual.find("skipped by the streaming reader") == std::string::npos) {
        FAIL_CHECK("read_elf: " << expected << "\nread_elf_stream: " << actual);
    }
    return direct.ok();
}

}  // namespace

TEST_SUITE("rootlock::elf") {
    TEST_CASE("streams writer-built objects to the same result as read_elf") {
        ElfSpec spec = library_spec();
        check_same(testing::build_elf(spec));
        spec.elf_class = elf::ElfClass::elf32;
        spec.byte_order = elf::ByteOrder::big;
        check_same(testing::build_elf(spec));
        spec.gnu_hash = true;
        spec.sysv_hash = false;
        spec.base_address = 0x10000;
        check_same(testing::build_elf(spec));
        check_same(testing::build_elf(spec), ReadOptions{false});
        ElfSpec fixed;
        fixed.dynamic = false;
        check_same(testing::build_elf(fixed));
        fixed.program_headers = false;
        check_same(testing::build_elf(fixed));
    }

    TEST_CASE("keeps the metadata but not a 64 MiB text segment") {
        ElfSpec spec = library_spec();
        spec.text_size = uint64_t{64} << 20;
        testing::ElfLayout layout;
        auto bytes = testing::build_elf(spec, &layout);
        elf::StreamStats stats = check_same(bytes);
        CHECK(stats.consumed_bytes > layout.text_offset + layout.text_size);
        CHECK(stats.retained_bytes < 128 * 1024);
        CHECK(stats.largest_range <= layout.text_offset);
    }

    TEST_CASE("keeps only a window of a first segment that also holds the text") {
        ElfSpec spec = library_spec();
        spec.separate_code = false;
        spec.text_size = uint64_t{64} << 20;
        ReadOptions options{true};
        options.stream_head_window = uint64_t{1} << 20;
        elf::StreamStats stats = check_same(testing::build_elf(spec), options);
        CHECK(stats.retained_bytes < (uint64_t{1} << 20) + 128 * 1024);
    }

    TEST_CASE("fails with a located error when the tables lie past the head window") {
        ElfSpec spec = library_spec();
        spec.separate_code = false;
        testing::ElfLayout layout;
        auto bytes = testing::build_elf(spec, &layout);
        testing::MemoryStream stream(bytes);
        ReadOptions options;
        options.stream_head_window = 256;
        auto result = elf::read_elf_stream(stream, bytes.size(), "lib.so", options);
        REQUIRE_FALSE(result.ok());
        CHECK(result.error().text() ==
              fmt::format("lib.so@0x{0:x}: bytes 0x{0:x}-0x{1:x} were skipped by the streaming "
                          "reader before the ELF metadata pointed at them",
                          layout.dynstr_offset, layout.dynstr_offset + layout.dynstr_size));
    }

    TEST_CASE("reads forward for tables placed after the dynamic segment, as patchelf does") {
        ElfSpec spec = library_spec();
        spec.trailing_metadata = true;
        spec.gnu_hash = true;
        spec.text_size = uint64_t{4} << 20;
        elf::StreamStats stats = check_same(testing::build_elf(spec));
        CHECK(stats.retained_bytes < 128 * 1024);
    }

    TEST_CASE("streams libc.so.6, whose PT_INTERP lies between the head and the dynamic section") {
        auto source = util::FileSource::open(k_libc, k_libc);
        REQUIRE(source.ok());
        auto direct = elf::read_elf(**source, ReadOptions{true});
        REQUIRE(direct.ok());
        FileStream stream(k_libc);
        elf::StreamStats stats;
        auto streamed =
            elf::read_elf_stream(stream, (*source)->size(), k_libc, ReadOptions{true}, stats);
        CHECK(outcome(streamed) == outcome(direct));
        CHECK(stats.retained_bytes < (*source)->size() / 4);
    }

    TEST_CASE("streams gcc output with and without separate code segments") {
        testing::TempDir dir;
        constexpr const char* k_source = "#include <stdio.h>\nint f(void) { return puts(\"\"); }\n";
        check_same(testing::compile_c(dir.path(), "libsep.so", k_source,
                                      "-shared -fPIC -Wl,-z,separate-code -Wl,-soname,libsep.so"));
        check_same(testing::compile_c(dir.path(), "libflat.so", k_source,
                                      "-shared -fPIC -Wl,-z,noseparate-code -Wl,-soname,lf.so"));
    }

    TEST_CASE("fails with a located error when metadata lies in a part it skipped") {
        ElfSpec spec = library_spec();
        spec.text_size = 3 * 4096;
        testing::ElfImage image = testing::build_elf_image(spec);
        const testing::ElfLayout& layout = image.layout();
        // Move the string table into the text segment, which the stream skips on its way to the
        // dynamic section. read_elf happily reads zeros there (every string is empty).
        const uint64_t moved = layout.text_offset + 4096;
        image.patch_dynamic(testing::k_dt_strtab, layout.vaddr(moved));
        util::MemorySource source("lib.so", image.bytes());
        CHECK(elf::read_elf(source).ok());
        testing::MemoryStream stream(image.bytes());
        auto result = elf::read_elf_stream(stream, image.bytes().size(), "lib.so");
        REQUIRE_FALSE(result.ok());
        CHECK(result.error().text() ==
              fmt::format("lib.so@0x{0:x}: bytes 0x{0:x}-0x{1:x} were skipped by the streaming "
                          "reader before the ELF metadata pointed at them",
                          moved, moved + layout.dynstr_size));
    }

    TEST_CASE("fails instead of retaining more than its limit") {
        ElfSpec spec = library_spec();
        auto bytes = testing::build_elf(spec);
        testing::MemoryStream stream(bytes);
        ReadOptions options;
        options.stream_retain_limit = 256;
        auto result = elf::read_elf_stream(stream, bytes.size(), "big.so", options);
        REQUIRE_FALSE(result.ok());
        CHECK(result.error().text() ==
              "big.so@0x40: streamed ELF metadata would need more than the retention limit of 256 "
              "bytes");
    }

    TEST_CASE("reports a stream that ends before its declared size") {
        auto bytes = testing::build_elf(library_spec());
        std::vector<std::byte> cut(bytes.begin(), bytes.begin() + 1000);
        testing::MemoryStream stream(cut);
        auto result = elf::read_elf_stream(stream, bytes.size(), "cut.so");
        REQUIRE_FALSE(result.ok());
        CHECK(result.error().text() == "cut.so@0x3e8: stream ended after 1000 of " +
                                           std::to_string(bytes.size()) + " bytes");
    }

    TEST_CASE("reports a stream shorter than an ELF header like read_elf does") {
        std::vector<std::byte> bytes(10, std::byte{0x7f});
        testing::MemoryStream stream(bytes);
        auto result = elf::read_elf_stream(stream, bytes.size(), "tiny");
        REQUIRE_FALSE(result.ok());
        CHECK(result.error().text() == "tiny@0x0: file too short for an ELF header (10 bytes)");
    }

    TEST_CASE("survives every byte flip in the first 4 KiB and random mutations, on both paths") {
        // Each object with the byte ranges worth flipping: in writer objects the metadata and the
        // dynamic section (the rest is padding and zeros), in the gcc object its first 4 KiB.
        struct Target {
            std::vector<std::byte> bytes;
            std::vector<std::pair<size_t, size_t>> ranges;
        };
        std::vector<Target> targets;
        auto add_writer_object = [&](const ElfSpec& spec) {
            testing::ElfLayout layout;
            auto bytes = testing::build_elf(spec, &layout);
            targets.push_back(
                {bytes,
                 {{0, layout.meta_size},
                  {layout.dynamic_offset, layout.dynamic_offset + layout.dynamic_entries.size() *
                                                                      layout.dynamic_entry_size}}});
        };
        add_writer_object(library_spec());
        ElfSpec big_endian = library_spec();
        big_endian.elf_class = elf::ElfClass::elf32;
        big_endian.byte_order = elf::ByteOrder::big;
        big_endian.gnu_hash = true;
        add_writer_object(big_endian);
        testing::TempDir dir;
        auto compiled = testing::compile_c(
            dir.path(), "libfuzz.so", "#include <stdio.h>\nint f(void) { return puts(\"f\"); }\n",
            "-shared -fPIC -Wl,-soname,libfuzz.so.1 -Wl,-rpath,'$ORIGIN' -Wl,--hash-style=both");
        targets.push_back({compiled, {{0, std::min<size_t>(compiled.size(), 4096)}}});

        size_t parsed = 0;
        size_t runs = 0;
        for (const auto& target : targets) {
            REQUIRE(survive(target.bytes));
            std::vector<std::byte> bytes = target.bytes;
            for (const auto& [begin, end] : target.ranges) {
                for (size_t i = begin; i < end; ++i) {
                    bytes[i] ^= std::byte{0xff};
                    if (survive(bytes)) {
                        ++parsed;
                    }
                    ++runs;
                    bytes[i] ^= std::byte{0xff};
                }
            }
        }
        std::mt19937 random(20240611);
        for (int round = 0; round < 1500; ++round) {
            std::vector<std::byte> bytes =
                targets[static_cast<size_t>(round) % targets.size()].bytes;
            std::uniform_int_distribution<size_t> position(0, bytes.size() - 1);
            std::uniform_int_distribution<int> count(1, 8);
            std::uniform_int_distribution<int> value(0, 255);
            for (int n = count(random); n > 0; --n) {
                bytes[position(random)] = static_cast<std::byte>(value(random));
            }
            if (round % 7 == 0) {
                bytes.resize(position(random));
            }
            if (survive(bytes)) {
                ++parsed;
            }
            ++runs;
        }
        // Many mutations hit bytes the reader never looks at, so plenty still parse.
        CHECK(parsed > 0);
        CHECK(parsed < runs);
    }
}

}  // namespace ROOTLOCK_UNIT_ID
