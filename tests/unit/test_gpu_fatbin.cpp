// Fatbin sections built byte by byte in memory (container and entry headers as nvcc 13.0 writes
// them), wrapped in a minimal ELF: what read_fatbin finds, what it reads, and a malformed table.
#include <doctest/doctest.h>

#include <functional>

#include <fmt/format.h>

#include "elf/elf_sections.hpp"
#include "gpu/fatbin.hpp"
#include "gpu/fatbin_stream.hpp"
#include "support/fatbin_bytes.hpp"
#include "support/section_elf.hpp"

namespace rootlock::testing::ROOTLOCK_UNIT_ID {
namespace {

using gpu::FatbinCompression;
using gpu::FatbinKind;
using gpu::SmVariant;

// A host object holding `fatbin` in .nv_fatbin and, when given, `relocatable` in __nv_relfatbin.
SectionElf object_with(std::optional<std::vector<std::byte>> fatbin,
                       std::optional<std::vector<std::byte>> relocatable = std::nullopt,
                       elf::ElfClass elf_class = elf::ElfClass::elf64,
                       elf::ByteOrder order = elf::ByteOrder::little) {
    SectionElfSpec spec;
    spec.elf_class = elf_class;
    spec.byte_order = order;
    spec.sections.push_back({".text", elf::k_sht_progbits, std::vector<std::byte>(24), 16, {}});
    if (fatbin)
        spec.sections.push_back({".nv_fatbin", elf::k_sht_progbits, *fatbin, 8, {}});
    if (relocatable)
        spec.sections.push_back({"__nv_relfatbin", elf::k_sht_progbits, *relocatable, 8, {}});
    return build_section_elf(spec);
}

// What both readers must agree on, as one comparable text.
std::string describe(const std::optional<gpu::FatbinSummary>& summary) {
    if (!summary)
        return "no device code";
    std::string out =
        fmt::format("containers {} embedded {} section {} compressed {}\n", summary->containers,
                    summary->embedded_containers, summary->section_size, summary->any_compressed);
    for (const auto& e : summary->entries) {
        out += fmt::format("{} {} {} {} {} {}.{} @{} {}+{} {:x} {}\n", e.raw_kind, e.sm,
                           static_cast<int>(e.variant), static_cast<int>(e.compression), e.kernels,
                           e.ptx_major, e.ptx_minor, e.offset, e.header_size, e.payload_size,
                           e.flags, e.uncompressed_size);
    }
    for (const auto& name : summary->architectures)
        out += name.text() + " ";
    if (const auto& r = summary->relocatable) {
        out +=
            fmt::format("\nrelocatable {} {} {} {} {}", r->containers, r->entries,
                        fmt::join(r->cubin_sms, ","), fmt::join(r->ptx_sms, ","), r->section_size);
    }
    return out;
}

// The object fed to the streaming scanner `chunk` bytes at a time.
util::Result<std::optional<gpu::FatbinSummary>> stream(const std::vector<std::byte>& bytes,
                                                       size_t chunk) {
    gpu::FatbinStreamScanner scanner("m.so", bytes.size());
    for (size_t at = 0; at < bytes.size(); at += chunk)
        scanner.feed(std::span(bytes).subspan(at, std::min(chunk, bytes.size() - at)));
    return scanner.finish();
}

// read_fatbin's answer, checked against the streaming scanner's in several chunkings (aligned
// words cut at every place), so that each case of this file is a case of both readers.
gpu::FatbinSummary read(const SectionElf& object) {
    util::MemorySource source("m.so", object.bytes);
    auto summary = gpu::read_fatbin(source);
    REQUIRE(summary.ok());
    REQUIRE(summary->has_value());
    for (size_t chunk :
         {size_t{1}, size_t{3}, size_t{8}, size_t{13}, size_t{4096}, object.bytes.size()}) {
        auto streamed = stream(object.bytes, chunk);
        REQUIRE_MESSAGE(streamed.ok(), streamed.error().text());
        CHECK_MESSAGE(describe(*streamed) == describe(*summary), "chunk ", chunk);
    }
    return std::move(**summary);
}

std::vector<std::string> names(const gpu::FatbinSummary& summary) {
    std::vector<std::string> out;
    for (const auto& name : summary.architectures)
        out.push_back(name.text());
    return out;
}

// Counts what a reader asks for, to prove that payloads are skipped.
class CountingSource final : public util::ByteSource {
  public:
    explicit CountingSource(const util::ByteSource& inner) : m_inner(inner) {}
    uint64_t size() const override { return m_inner.size(); }
    util::Status read_at(uint64_t offset, std::span<std::byte> out) const override {
        ++reads;
        bytes += out.size();
        return m_inner.read_at(offset, out);
    }
    const std::string& name() const override { return m_inner.name(); }
    mutable uint64_t reads = 0;
    mutable uint64_t bytes = 0;

  private:
    const util::ByteSource& m_inner;
};

// The object the malformed table corrupts: container A (sm_75 cubin, compute_86 PTX) at 0,
// container B (sm_90a cubin) at 240; __nv_relfatbin with one sm_80 cubin.
constexpr uint64_t k_b = 240;
constexpr uint64_t k_e1 = 16 + 96;

SectionElf base_object() {
    auto fatbin = fatbin_bytes({{{{2, 75, 0x11, 64, 32}, {1, 86, 0x8011, 80, 48, 0, 9, 900}}, 0},
                                {{{2, 90, 0x100011, 64, 16}}, 0}});
    REQUIRE(fatbin.size() == 336);
    return object_with(fatbin, fatbin_bytes({{{{2, 80, 0x11, 64, 8}}, 0}}));
}

void patch_le(SectionElf& object, uint64_t offset, uint64_t value, size_t width) {
    for (size_t i = 0; i < width; ++i)
        object.bytes[offset + i] = static_cast<std::byte>((value >> (8 * i)) & 0xff);
}

}  // namespace

TEST_SUITE("rootlock::gpu") {
    TEST_CASE("reads every container's cubins and PTX with SMs, variants and compression") {
        auto fatbin = fatbin_bytes({
            {{{2, 75, 0x11, 64, 40},
              {2, 86, 0x8011, 64, 24, 0, 0, 4000},
              {1, 86, 0x8011, 80, 48, 0, 9, 900}},
             0},
            {{{2, 90, 0x100011, 64, 16},
              {1, 100, 0x208011, 80, 8, 1, 9, 300},
              {2, 100, 0x1002011, 112, 56, 0, 0, 7000}},
             0},
        });
        const SectionElf object = object_with(fatbin);
        const gpu::FatbinSummary summary = read(object);
        CHECK(summary.containers == 2);
        CHECK(summary.section_size == fatbin.size());
        CHECK(summary.any_compressed);
        CHECK_FALSE(summary.relocatable);
        REQUIRE(summary.entries.size() == 6);
        const uint64_t start = object.layout.data_offsets[1];
        const gpu::FatbinEntry& first = summary.entries[0];
        CHECK(first.kind == FatbinKind::cubin);
        CHECK(first.raw_kind == 2);
        CHECK(first.sm == 75);
        CHECK(first.variant == SmVariant::plain);
        CHECK_FALSE(first.compressed());
        CHECK_FALSE(first.debug);
        CHECK(first.offset == start + 16);
        CHECK(first.header_size == 64);
        CHECK(first.payload_size == 40);
        CHECK(summary.entries[1].compression == FatbinCompression::zstd);
        CHECK(summary.entries[1].uncompressed_size == 4000);
        CHECK(summary.entries[1].offset == start + 16 + 104);
        const gpu::FatbinEntry& ptx = summary.entries[2];
        CHECK(ptx.kind == FatbinKind::ptx);
        CHECK(ptx.ptx_major == 9);
        CHECK(ptx.ptx_minor == 0);
        CHECK(ptx.name().text() == "compute_86");
        CHECK(summary.entries[3].variant == SmVariant::arch_specific);
        CHECK(summary.entries[3].name().text() == "sm_90a");
        CHECK(summary.entries[4].variant == SmVariant::family);
        CHECK(summary.entries[4].name().text() == "compute_100f");
        CHECK(summary.entries[4].ptx_minor == 1);
        CHECK(summary.entries[5].compression == FatbinCompression::lz4);
        CHECK(summary.entries[5].header_size == 112);
        CHECK(summary.cubin_sms == std::set<int>{75, 86, 90, 100});
        CHECK(summary.ptx_sms == std::set<int>{86, 100});
        CHECK(names(summary) == std::vector<std::string>{"sm_75", "sm_86", "compute_86", "sm_90a",
                                                         "sm_100", "compute_100f"});
    }

    TEST_CASE("reads the fatbin of a 32-bit big-endian host object: the fatbin is little endian") {
        const SectionElf object =
            object_with(fatbin_bytes({{{{2, 80, 0x13, 72, 8}}, 0}}), std::nullopt,
                        elf::ElfClass::elf32, elf::ByteOrder::big);
        const gpu::FatbinSummary summary = read(object);
        REQUIRE(summary.entries.size() == 1);
        CHECK(summary.entries[0].sm == 80);
        CHECK(summary.entries[0].debug);
        CHECK(summary.entries[0].header_size == 72);
    }

    TEST_CASE("says there is no device code when neither fatbin section exists") {
        const SectionElf object = object_with(std::nullopt);
        util::MemorySource source("m.so", object.bytes);
        auto summary = gpu::read_fatbin(source);
        REQUIRE(summary.ok());
        CHECK_FALSE(summary->has_value());
        auto streamed = stream(object.bytes, 5);
        REQUIRE(streamed.ok());
        CHECK_FALSE(streamed->has_value());
        std::vector<std::byte> not_elf(100, std::byte{0x50});
        streamed = stream(not_elf, 7);
        REQUIRE(streamed.ok());
        CHECK_FALSE(streamed->has_value());
    }

    TEST_CASE("the streaming scanner follows unaligned containers and passes chance magics over") {
        // A container of 16 + 64 + 33 bytes ends unaligned; the next starts right after it. A
        // payload holds the magic at an aligned offset with a plausible header: inside a
        // container, it is passed over as read_fatbin passes it.
        auto first = fatbin_bytes({{{{2, 75, 0x11, 64, 33}}, 0}});
        auto second = fatbin_bytes({{{{1, 86, 0x8011, 64, 96}}, 0}});
        std::vector<std::byte> chance;
        append_le(chance, gpu::k_fatbin_magic, 4);
        append_le(chance, 1, 2);
        append_le(chance, 16, 2);
        append_le(chance, 64 + 8, 8);
        auto fake = fatbin_entry({2, 61, 0x11, 64, 8});
        chance.insert(chance.end(), fake.begin(), fake.end());
        const size_t payload = second.size() - 96;
        std::copy(chance.begin(), chance.end(), second.begin() + static_cast<ptrdiff_t>(payload));
        auto fatbin = first;
        fatbin.insert(fatbin.end(), second.begin(), second.end());
        const gpu::FatbinSummary summary = read(object_with(fatbin));
        CHECK(summary.containers == 2);
        CHECK(names(summary) == std::vector<std::string>{"sm_75", "compute_86"});
    }

    TEST_CASE("the streaming scanner names what it could not keep, and keeps little") {
        SectionElfSpec spec;
        spec.sections.push_back({".text", elf::k_sht_progbits, std::vector<std::byte>(24), 16, {}});
        spec.sections.push_back({".nv_fatbin",
                                 elf::k_sht_progbits,
                                 fatbin_bytes({{{{2, 86, 0x11, 64, 32}}, 0}}),
                                 8,
                                 {}});
        spec.sections.push_back(
            {".filler", elf::k_sht_progbits, std::vector<std::byte>(size_t{17} << 20), 8, {}});
        SectionElf object = build_section_elf(spec);
        // Far from the table and past the head, .shstrtab is out of reach: a copy of it 128 KiB
        // into the filler, and its header pointed there (read_fatbin reads it all the same).
        const auto& layout = object.layout;
        const uint64_t filler = layout.data_offsets[2] + (128 << 10);
        std::copy_n(object.bytes.begin() + static_cast<ptrdiff_t>(layout.shstrtab_offset),
                    layout.shstrtab_size, object.bytes.begin() + static_cast<ptrdiff_t>(filler));
        object.patch_word(layout.offset_field(layout.shstrtab_header), filler);
        util::MemorySource source("m.so", object.bytes);
        REQUIRE(gpu::read_fatbin(source).ok());

        gpu::FatbinStreamScanner scanner("m.so", object.bytes.size());
        uint64_t most = 0;
        for (size_t at = 0; at < object.bytes.size(); at += 65536) {
            scanner.feed(std::span(object.bytes)
                             .subspan(at, std::min<size_t>(65536, object.bytes.size() - at)));
            most = std::max(most, scanner.kept_bytes());
        }
        CHECK(most <= (uint64_t{64} << 10) + gpu::k_stream_window_before + 4096);
        auto streamed = scanner.finish();
        REQUIRE_FALSE(streamed.ok());
        CHECK(streamed.error().text() ==
              fmt::format("m.so@0x{:x}: the section names lie outside what a streaming read keeps "
                          "(the first 64 KiB and the 16 MiB before the section headers)",
                          filler + 1));  // the first name read: section 1's, after the empty one

        gpu::FatbinStreamScanner short_fed("m.so", 1000);
        short_fed.feed(std::span(object.bytes).first(999));
        auto cut = short_fed.finish();
        REQUIRE_FALSE(cut.ok());
        CHECK(cut.error().text() == "m.so: the fatbin scanner saw 999 of 1000 bytes");
    }

    TEST_CASE("counts empty containers and an empty section without entries") {
        CHECK(read(object_with(std::vector<std::byte>{})).entries.empty());
        const gpu::FatbinSummary summary =
            read(object_with(fatbin_bytes({{{}, 0}, {{{2, 75, 0x11, 64, 8}}, 0}})));
        CHECK(summary.containers == 2);
        CHECK(summary.entries.size() == 1);
        CHECK_FALSE(summary.any_compressed);
    }

    TEST_CASE("skips zero padding between containers and at the end of the section") {
        auto fatbin = fatbin_bytes(
            {{{{2, 75, 0x11, 64, 8}}, 8}, {{{1, 80, 0x11, 80, 16, 0, 9}}, 24}, {{}, 0}});
        fatbin.resize(fatbin.size() + 40);
        const gpu::FatbinSummary summary = read(object_with(fatbin));
        CHECK(summary.containers == 3);
        CHECK(names(summary) == std::vector<std::string>{"sm_75", "compute_80"});
        CHECK(read(object_with(std::vector<std::byte>(64))).containers == 0);
    }

    TEST_CASE("keeps entries of unknown kinds as other, outside the SM sets") {
        const gpu::FatbinSummary summary = read(object_with(
            fatbin_bytes({{{{0x40, 0, 0x11, 64, 8}, {0x10, 80, 0x11, 64, 8}, {2, 75}}, 0}})));
        REQUIRE(summary.entries.size() == 3);
        CHECK(summary.entries[0].kind == FatbinKind::other);
        CHECK(summary.entries[0].raw_kind == 0x40);
        CHECK(summary.entries[0].sm == 0);
        CHECK(summary.entries[1].raw_kind == 0x10);
        CHECK(summary.entries[1].sm == 80);
        CHECK(summary.cubin_sms == std::set<int>{75});
        CHECK(summary.ptx_sms.empty());
        CHECK(names(summary) == std::vector<std::string>{"sm_75"});
    }

    TEST_CASE("reports relocatable device code apart from what the runtime loads") {
        auto relocatable = fatbin_bytes({{{{2, 75}, {2, 90}, {1, 90, 0x8011, 80, 8, 0, 9}}, 0},
                                         {{{2, 75}, {1, 120, 0x11, 80, 8, 0, 9}}, 0}});
        const gpu::FatbinSummary summary =
            read(object_with(fatbin_bytes({{{{2, 75}, {2, 90}}, 0}}), relocatable));
        CHECK(names(summary) == std::vector<std::string>{"sm_75", "sm_90"});
        REQUIRE(summary.relocatable);
        CHECK(summary.relocatable->containers == 2);
        CHECK(summary.relocatable->entries == 5);
        CHECK(summary.relocatable->cubin_sms == std::set<int>{75, 90});
        CHECK(summary.relocatable->ptx_sms == std::set<int>{90, 120});
        CHECK(summary.relocatable->section_size == relocatable.size());

        const gpu::FatbinSummary only = read(object_with(std::nullopt, relocatable));
        CHECK(only.entries.empty());
        CHECK(only.section_size == 0);
        REQUIRE(only.relocatable);
        CHECK(only.relocatable->entries == 5);
    }

    TEST_CASE("reads headers only: payloads are never read") {
        std::vector<ContainerSpec> containers;
        for (int i = 0; i < 8; ++i)
            containers.push_back(
                {{{2, 80, 0x8011, 64, 1u << 20}, {1, 90, 0x8011, 80, 1u << 19}}, 0});
        const SectionElf object = object_with(fatbin_bytes(containers));
        util::MemorySource memory("m.so", object.bytes);
        CountingSource counting(memory);
        auto summary = gpu::read_fatbin(counting);
        REQUIRE(summary.ok());
        CHECK((*summary)->entries.size() == 16);
        CHECK((*summary)->section_size > 12u << 20);
        INFO(counting.reads, " reads, ", counting.bytes, " bytes");
        CHECK(counting.bytes < 16 * 1024);
        CHECK(counting.reads <= 24 + 8);
    }

    TEST_CASE("finds containers a library keeps in its data sections, not chance magics") {
        // .ldata: a stray magic (not a container), then two containers at 8-aligned offsets
        // with other bytes between them, as cuFFT keeps its kernels for the module API.
        std::vector<std::byte> ldata(40, std::byte{0x11});
        append_le(ldata, gpu::k_fatbin_magic, 4);  // at 40: no valid header follows
        ldata.resize(64, std::byte{0x22});
        auto first = fatbin_bytes({{{{2, 90, 0x11, 64, 32}}, 0}});
        ldata.insert(ldata.end(), first.begin(), first.end());
        ldata.resize(ldata.size() + 24, std::byte{0x33});
        auto second = fatbin_bytes({{{{1, 100, 0x8011, 64, 40}}, 0}});
        ldata.insert(ldata.end(), second.begin(), second.end());
        SectionElfSpec spec;
        spec.sections.push_back({".text", elf::k_sht_progbits, std::vector<std::byte>(24), 16, {}});
        spec.sections.push_back({".nv_fatbin",
                                 elf::k_sht_progbits,
                                 fatbin_bytes({{{{2, 75, 0x11, 64, 32}}, 0}}),
                                 8,
                                 {}});
        spec.sections.push_back({".ldata", elf::k_sht_progbits, ldata, 32, {}});
        const gpu::FatbinSummary summary = read(build_section_elf(spec));
        CHECK(summary.containers == 1);
        CHECK(summary.embedded_containers == 2);
        CHECK(names(summary) == std::vector<std::string>{"sm_75", "sm_90", "compute_100"});
    }

    TEST_CASE("a cubin whose ELF has no .text section holds no kernel and decides nothing") {
        // An empty module as nvcc writes it for a .cu file without kernels: sections, no text.
        SectionElfSpec cubin_spec;
        cubin_spec.sections.push_back({".nv.info", elf::k_sht_progbits, {std::byte{1}}, 4, {}});
        auto empty = build_section_elf(cubin_spec).bytes;
        cubin_spec.sections.push_back(
            {".text.fatbin_add", elf::k_sht_progbits, std::vector<std::byte>(16), 16, {}});
        auto with_kernel = build_section_elf(cubin_spec).bytes;
        auto fatbin_of = [](const std::vector<std::byte>& payload, uint32_t sm) {
            auto bytes =
                fatbin_bytes({{{{2, sm, 0x11, 64, static_cast<uint32_t>(payload.size())}}, 0}});
            std::copy(payload.begin(), payload.end(),
                      bytes.end() - static_cast<std::ptrdiff_t>(payload.size()));
            return bytes;
        };
        auto summary = read(object_with(fatbin_of(empty, 75)));
        CHECK(summary.entries.size() == 1);
        CHECK_FALSE(summary.entries[0].kernels);
        CHECK(summary.architectures.empty());
        summary = read(object_with(fatbin_of(with_kernel, 86)));
        CHECK(summary.entries[0].kernels);
        CHECK(names(summary) == std::vector<std::string>{"sm_86"});
    }

    TEST_CASE("rejects each malformed fatbin with one exact located error") {
        struct Case {
            std::string description;
            // Corrupts the object, given where the two sections start; returns the error.
            std::function<std::string(SectionElf&, uint64_t, uint64_t)> corrupt;
        };
        auto at = [](uint64_t offset, std::string_view message) {
            return fmt::format("m.so@0x{:x}: {}", offset, message);
        };
        auto set_size = [](SectionElf& o, size_t section, uint64_t size) {
            o.patch_word(o.layout.size_field(o.layout.header_offsets[section]), size);
        };
        const std::vector<Case> cases{
            {"bad container magic",
             [&](SectionElf& o, uint64_t f, uint64_t) {
                 patch_le(o, f, 0x12345678, 4);
                 return at(f, "bad fatbin container magic 0x12345678 (expected 0xba55ed50)");
             }},
            {"old-style magic",
             [&](SectionElf& o, uint64_t f, uint64_t) {
                 patch_le(o, f + k_b, 0x1ee55a01, 4);
                 return at(f + k_b, "bad fatbin container magic 0x1ee55a01 (expected 0xba55ed50)");
             }},
            {"container header size below 16",
             [&](SectionElf& o, uint64_t f, uint64_t) {
                 patch_le(o, f + 6, 8, 2);
                 return at(f, "fatbin container header size 8 is smaller than 16");
             }},
            {"container entries past the end of the section",
             [&](SectionElf& o, uint64_t f, uint64_t) {
                 patch_le(o, f + 8, 1000000, 8);
                 return at(f,
                           "fatbin container (16 + 1000000 bytes) runs past the end of "
                           ".nv_fatbin (336 bytes left)");
             }},
            {"container size that overflows",
             [&](SectionElf& o, uint64_t f, uint64_t) {
                 patch_le(o, f + 8, ~uint64_t{0} - 4, 8);
                 return at(f,
                           "fatbin container (16 + 18446744073709551611 bytes) runs past the "
                           "end of .nv_fatbin (336 bytes left)");
             }},
            {"section cut inside a container header",
             [&](SectionElf& o, uint64_t f, uint64_t) {
                 set_size(o, 1, k_b + 10);
                 return at(f + k_b,
                           "fatbin container header (16 bytes) runs past the end of "
                           ".nv_fatbin (10 bytes left)");
             }},
            {"section cut inside a container's magic",
             [&](SectionElf& o, uint64_t f, uint64_t) {
                 set_size(o, 1, k_b + 3);
                 return at(f + k_b,
                           "fatbin container header (16 bytes) runs past the end of "
                           ".nv_fatbin (3 bytes left)");
             }},
            {"section cut inside a container's entries",
             [&](SectionElf& o, uint64_t f, uint64_t) {
                 set_size(o, 1, k_b + 56);
                 return at(f + k_b,
                           "fatbin container (16 + 80 bytes) runs past the end of "
                           ".nv_fatbin (56 bytes left)");
             }},
            {"entry header past the end of its container",
             [&](SectionElf& o, uint64_t f, uint64_t) {
                 patch_le(o, f + 8, 96 + 40, 8);
                 return at(f + k_e1,
                           "fatbin entry header (64 bytes) runs past the end of its "
                           "container (40 bytes left)");
             }},
            {"entry header size below 64",
             [&](SectionElf& o, uint64_t f, uint64_t) {
                 patch_le(o, f + 16 + 4, 32, 4);
                 return at(f + 16, "fatbin entry header size 32 is smaller than 64");
             }},
            {"entry payload past the end of its container",
             [&](SectionElf& o, uint64_t f, uint64_t) {
                 patch_le(o, f + k_e1 + 8, 0xffffffff, 4);
                 return at(f + k_e1,
                           "fatbin entry (80 + 4294967295 bytes) runs past the end of "
                           "its container (128 bytes left)");
             }},
            {"entry header size past the end of its container",
             [&](SectionElf& o, uint64_t f, uint64_t) {
                 patch_le(o, f + k_e1 + 4, 200, 4);
                 return at(f + k_e1,
                           "fatbin entry (200 + 48 bytes) runs past the end of its "
                           "container (128 bytes left)");
             }},
            {"cubin for an SM below 10",
             [&](SectionElf& o, uint64_t f, uint64_t) {
                 patch_le(o, f + 16 + 28, 5, 4);
                 return at(f + 16,
                           "fatbin cubin entry names SM architecture 5, not one from 10 "
                           "to 999");
             }},
            {"PTX for an SM above 999",
             [&](SectionElf& o, uint64_t f, uint64_t) {
                 patch_le(o, f + k_e1 + 28, 1000, 4);
                 return at(f + k_e1,
                           "fatbin PTX entry names SM architecture 1000, not one from "
                           "10 to 999");
             }},
            {"container misaligned after zero padding",
             [&](SectionElf& o, uint64_t f, uint64_t) {
                 patch_le(o, f + k_b, 0, 4);
                 return at(f + k_b + 4,
                           "fatbin container after zero padding is not 8-byte "
                           "aligned in .nv_fatbin");
             }},
            {"no magic after zero padding",
             [&](SectionElf& o, uint64_t f, uint64_t) {
                 patch_le(o, f + k_b, 0, 8);
                 return at(f + k_b + 8,
                           "bad fatbin container magic 0x00000050 (expected 0xba55ed50)");
             }},
            {".nv_fatbin past the end of the file",
             [&](SectionElf& o, uint64_t, uint64_t) {
                 const uint64_t size = o.bytes.size();
                 o.patch_word(o.layout.offset_field(o.layout.header_offsets[1]), size - 100);
                 return at(o.layout.header_offsets[1],
                           fmt::format("section .nv_fatbin (336 bytes at 0x{:x}) runs past the "
                                       "end of the file ({} bytes)",
                                       size - 100, size));
             }},
            {"bad magic in __nv_relfatbin",
             [&](SectionElf& o, uint64_t, uint64_t r) {
                 patch_le(o, r, 0xdeadbeef, 4);
                 return at(r, "bad fatbin container magic 0xdeadbeef (expected 0xba55ed50)");
             }},
            {"__nv_relfatbin cut inside its container header",
             [&](SectionElf& o, uint64_t, uint64_t r) {
                 set_size(o, 2, 12);
                 return at(r,
                           "fatbin container header (16 bytes) runs past the end of "
                           "__nv_relfatbin (12 bytes left)");
             }},
            {"e_shstrndx out of range",
             [&](SectionElf& o, uint64_t, uint64_t) {
                 o.patch(o.layout.strndx_field, 9, 2);
                 return at(o.layout.strndx_field,
                           "section name string table index 9 is out of range (5 sections)");
             }},
        };
        for (const Case& c : cases) {
            INFO(c.description);
            SectionElf object = base_object();
            {
                util::MemorySource pristine("m.so", object.bytes);
                REQUIRE(gpu::read_fatbin(pristine).ok());
            }
            const std::string expected =
                c.corrupt(object, object.layout.data_offsets[1], object.layout.data_offsets[2]);
            util::MemorySource source("m.so", object.bytes);
            auto summary = gpu::read_fatbin(source);
            REQUIRE_FALSE(summary.ok());
            CHECK(summary.error().text() == expected);
            // The streaming scanner reads the containers that hold together, or fails on the
            // section table alike; it never reads out of bounds (the sanitizers watch).
            auto streamed = stream(object.bytes, 7);
            if (!streamed.ok())
                CHECK(streamed.error().text() == expected);
        }
    }
}

}  // namespace rootlock::testing::ROOTLOCK_UNIT_ID
