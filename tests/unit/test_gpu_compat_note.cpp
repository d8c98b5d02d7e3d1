// The compat libcuda's .note.cuda.fwd_compatibility: the real notes' JSON (575.57.08, 590.44.01,
// Orin's cut one) in minimal ELF objects, the hook's decision, and malformed notes and JSON.
#include <doctest/doctest.h>

#include <fmt/format.h>

#include "elf/elf_sections.hpp"
#include "gpu/compat_note.hpp"
#include "support/section_elf.hpp"

namespace rootlock::testing::ROOTLOCK_UNIT_ID {
namespace {

using namespace std::string_view_literals;

// The descriptors of nvidia-container-toolkit's testdata/compat, NUL included as they have it.
constexpr std::string_view k_json_575 =
    "{\"format\":1,\"CUDA version\":\"12.9\",\"driver\":[535,550,560,565,570,575],"
    "\"device\":[1,2,7,8,9,10,11,12,13,14]}";
constexpr std::string_view k_json_590 =
    "{\"format\":1,\"CUDA version\":\"13.1\",\"driver\":[535,550,570,575,580,590],"
    "\"device\":[1,2,7,8,9,10,11,12,13,14]}";

std::vector<std::byte> with_nul(std::string_view text) {
    auto bytes = section_text_bytes(text);
    bytes.push_back(std::byte{0});
    return bytes;
}

// A compat libcuda's sections: a build id, then the note section holding `notes`.
SectionElf compat_object(std::vector<std::byte> notes, uint32_t type = elf::k_sht_note) {
    SectionElfSpec spec;
    spec.sections = {
        {".note.gnu.build-id",
         elf::k_sht_note,
         elf_note("GNU", 3, std::vector<std::byte>(20, std::byte{0xc6})),
         4,
         {}},
        {std::string(gpu::k_compat_note_section), type, std::move(notes), 4, {}},
    };
    return build_section_elf(spec);
}

util::Result<std::optional<gpu::CompatNote>> read(const SectionElf& object) {
    util::MemorySource source("libcuda.so", object.bytes);
    return gpu::read_compat_note(source);
}

gpu::CompatNote parsed(std::string_view json) {
    auto note = gpu::parse_compat_note(json);
    REQUIRE(note.ok());
    return *note;
}

}  // namespace

TEST_SUITE("rootlock::gpu") {
    TEST_CASE("reads the real notes' JSON: branches, devices and CUDA version") {
        const SectionElf object =
            compat_object(elf_note("NVIDIA Corporation", 0, with_nul(k_json_575)));
        auto note = read(object);
        REQUIRE(note.ok());
        REQUIRE(note->has_value());
        const gpu::CompatNote& n = **note;
        CHECK(n.format == 1);
        CHECK(n.cuda_version == "12.9");
        CHECK(n.driver_branches == std::vector<int>{535, 550, 560, 565, 570, 575});
        CHECK(n.devices == std::vector<int>{1, 2, 7, 8, 9, 10, 11, 12, 13, 14});
        CHECK(gpu::compat_allows(n, 535));
        CHECK(gpu::compat_allows(n, 575));
        CHECK_FALSE(gpu::compat_allows(n, 580));
        CHECK_FALSE(gpu::compat_allows(n, 590));

        const gpu::CompatNote n590 = parsed(k_json_590);
        CHECK(n590.cuda_version == "13.1");
        CHECK(gpu::compat_allows(n590, 580));
        CHECK_FALSE(gpu::compat_allows(n590, 560));
    }

    TEST_CASE("reads Orin's note, whose descriptor runs two bytes past its section") {
        // As in libcuda.orin.13.2.1.so.1.1: descsz 41, and 39 bytes left in the section.
        auto descriptor = section_text_bytes("{\"format\":1,\"CUDA version\":\"13.2\"}");
        descriptor.resize(41, std::byte{0});
        auto bytes = elf_note("NVIDIA Corporation", 0, descriptor);
        REQUIRE(bytes.size() == 12 + 20 + 41 + 3);
        bytes.resize(12 + 20 + 39);
        auto note = read(compat_object(bytes));
        REQUIRE(note.ok());
        REQUIRE(note->has_value());
        CHECK((*note)->cuda_version == "13.2");
        CHECK((*note)->driver_branches.empty());
        CHECK((*note)->devices.empty());
        CHECK_FALSE(gpu::compat_allows(**note, 580));
        CHECK(gpu::compat_newer_cuda(**note, "13.1"));
    }

    TEST_CASE("finds no note where the hook finds none") {
        SectionElfSpec plain;
        plain.sections = {{".text", elf::k_sht_progbits, std::vector<std::byte>(8), 8, {}}};
        const SectionElf without = build_section_elf(plain);
        util::MemorySource source("libcuda.so", without.bytes);
        auto none = gpu::read_compat_note(source);
        REQUIRE(none.ok());
        CHECK_FALSE(none->has_value());

        const std::vector<std::byte> json = with_nul(k_json_575);
        CHECK_FALSE(
            read(compat_object(elf_note("NVIDIA Corporation", 0, json), elf::k_sht_progbits))
                ->has_value());
        CHECK_FALSE(read(compat_object(elf_note("GNU", 0, json)))->has_value());
        CHECK_FALSE(read(compat_object(elf_note("NVIDIA Corporation", 0, {})))->has_value());
        CHECK_FALSE(read(compat_object({}))->has_value());
    }

    TEST_CASE("matches keys without regard to case, ignores others, and takes null as absent") {
        const gpu::CompatNote note = parsed(
            "{\"Format\":2,\"CUDA Version\":\"12.8\",\"DRIVER\":[570],\"extra\":[\"x\"],"
            "\"device\":null}\0\0"sv);
        CHECK(note.format == 2);
        CHECK(note.cuda_version == "12.8");
        CHECK(note.driver_branches == std::vector<int>{570});
        CHECK(note.devices.empty());
        // Go's decoder assigns keys in document order: the last spelling wins.
        CHECK(parsed("{\"driver\":[535],\"Driver\":[550]}").driver_branches ==
              std::vector<int>{550});
        CHECK(parsed("{}").cuda_version.empty());
    }

    TEST_CASE("decides on the CUDA version alone as the hook's other path does") {
        struct Row {
            std::string_view compat;
            std::string_view host;
            bool newer;
        };
        const Row rows[] = {
            {"12.9", "12.8", true},    {"12.9", "12.9", false},  {"12.9", "12.10", false},
            {"13.1", "12.9", true},    {"12.9.1", "12.9", true}, {"", "12.8", false},
            {"12.9", "x", false},      {"12.9", "", false},      {"12..9", "12.8", false},
            {"1.2.3.4", "1.2", false},
        };
        for (const Row& row : rows) {
            INFO(row.compat, " over ", row.host);
            gpu::CompatNote note;
            note.cuda_version = std::string(row.compat);
            CHECK(gpu::compat_newer_cuda(note, row.host) == row.newer);
        }
    }

    TEST_CASE("rejects each malformed descriptor with one exact error") {
        struct Row {
            std::string_view json;
            std::string_view error;
        };
        const Row rows[] = {
            {"", "the descriptor is not valid JSON"},
            {std::string_view("\0\0", 2), "the descriptor is not valid JSON"},
            // nvidia-container-toolkit's libcuda.invalid.json.so.99.88.
            {"{\"format\":1,\"CUDA version\":\"13.2\",}", "the descriptor is not valid JSON"},
            {"{\"format\":1} {}", "the descriptor is not valid JSON"},
            {"[535,550]", "the descriptor is JSON but not an object (it is array)"},
            {"\"12.9\"", "the descriptor is JSON but not an object (it is string)"},
            {"null", "the descriptor is JSON but not an object (it is null)"},
            {"{\"format\":\"1\"}", "\"format\" is not an integer"},
            {"{\"format\":1.5}", "\"format\" is not an integer"},
            {"{\"format\":4294967296}", "\"format\" is not an integer"},
            {"{\"CUDA version\":12.9}", "\"CUDA version\" is not a string"},
            {"{\"driver\":\"535\"}", "\"driver\" is not an array of integers"},
            {"{\"driver\":[535,\"550\"]}", "\"driver\" is not an array of integers"},
            {"{\"driver\":[535.0]}", "\"driver\" is not an array of integers"},
            {"{\"driver\":{\"a\":1}}", "\"driver\" is not an array of integers"},
            {"{\"device\":[1,99999999999]}", "\"device\" is not an array of integers"},
            {"{\"device\":[[1]]}", "\"device\" is not an array of integers"},
        };
        for (const Row& row : rows) {
            INFO(std::string(row.json));
            auto note = gpu::parse_compat_note(row.json);
            REQUIRE_FALSE(note.ok());
            CHECK(note.error().text() == row.error);
        }
    }

    TEST_CASE("locates a malformed note at the note, after the section's name") {
        const SectionElf bad_json = compat_object(
            elf_note("NVIDIA Corporation", 0, with_nul("{\"format\":1,\"driver\":\"575\"}")));
        const uint64_t note_offset = bad_json.layout.data_offsets[1];
        auto error = read(bad_json);
        REQUIRE_FALSE(error.ok());
        CHECK(error.error().text() ==
              fmt::format("libcuda.so@0x{:x}: .note.cuda.fwd_compatibility: \"driver\" is not an "
                          "array of integers",
                          note_offset));

        auto name_past = elf_note("NVIDIA Corporation", 0, with_nul(k_json_575));
        name_past.resize(20);
        auto cut = read(compat_object(name_past));
        REQUIRE_FALSE(cut.ok());
        CHECK(cut.error().text() ==
              fmt::format("libcuda.so@0x{:x}: note name (19 bytes) runs past the end of the note "
                          "section (8 bytes left)",
                          note_offset));
    }
}

}  // namespace rootlock::testing::ROOTLOCK_UNIT_ID
