// Sections found by name through the section header table and .shstrtab, ELF notes in both byte
// orders and alignments, and a table of malformed tables with their exact located errors.
#include <doctest/doctest.h>

#include <functional>

#include <fmt/format.h>

#include "elf/elf_sections.hpp"
#include "support/section_elf.hpp"

namespace rootlock::testing::ROOTLOCK_UNIT_ID {
namespace {

using elf::ByteOrder;
using elf::ElfClass;

std::vector<std::byte> filled(size_t size, unsigned value) {
    return std::vector<std::byte>(size, static_cast<std::byte>(value));
}

std::vector<std::byte> joined(std::vector<std::byte> a, const std::vector<std::byte>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

// Two notes as a libcuda has them: a GNU build id and NVIDIA's JSON.
std::vector<std::byte> two_notes(ByteOrder order) {
    return joined(elf_note("GNU", 3, filled(20, 0xab), order),
                  elf_note("NVIDIA Corporation", 0, section_text_bytes("{\"format\":1}"), order));
}

SectionElfSpec base_spec(ElfClass elf_class = ElfClass::elf64,
                         ByteOrder order = ByteOrder::little) {
    SectionElfSpec spec;
    spec.elf_class = elf_class;
    spec.byte_order = order;
    spec.sections = {
        {".text", elf::k_sht_progbits, filled(16, 0), 16, {}},
        {".nv_fatbin", elf::k_sht_progbits, filled(32, 0xaa), 8, {}},
        {".note.test", elf::k_sht_note, two_notes(order), 4, {}},
        {".bss", elf::k_sht_nobits, {}, 32, 4096},
    };
    return spec;
}

std::optional<elf::SectionRange> find(const SectionElf& object, std::string_view name) {
    util::MemorySource source("m.so", object.bytes);
    auto found = elf::find_section(source, name);
    REQUIRE(found.ok());
    return *found;
}

std::string at(uint64_t offset, std::string_view message) {
    return fmt::format("m.so@0x{:x}: {}", offset, message);
}

}  // namespace

TEST_SUITE("rootlock::elf") {
    TEST_CASE("finds a named section in every class and byte order") {
        for (ElfClass elf_class : {ElfClass::elf64, ElfClass::elf32}) {
            for (ByteOrder order : {ByteOrder::little, ByteOrder::big}) {
                INFO(static_cast<int>(elf_class), " ", static_cast<int>(order));
                const SectionElf object = build_section_elf(base_spec(elf_class, order));
                auto fatbin = find(object, ".nv_fatbin");
                REQUIRE(fatbin);
                CHECK(fatbin->offset == object.layout.data_offsets[1]);
                CHECK(fatbin->size == 32);
                CHECK(fatbin->type == elf::k_sht_progbits);
                CHECK(fatbin->align == 8);
                CHECK(fatbin->header_offset == object.layout.header_offsets[1]);
                CHECK(fatbin->byte_order == order);
                CHECK_FALSE(find(object, ".nv_fatbin_other"));
                CHECK_FALSE(find(object, ".nv"));
                CHECK_FALSE(find(object, ""));
            }
        }
    }

    TEST_CASE("answers several names in one pass, in the order asked") {
        const SectionElf object = build_section_elf(base_spec());
        util::MemorySource source("m.so", object.bytes);
        const std::array<std::string_view, 4> names{"__nv_relfatbin", ".note.test", ".text",
                                                    ".shstrtab"};
        auto found = elf::find_sections(source, names);
        REQUIRE(found.ok());
        REQUIRE(found->size() == 4);
        CHECK_FALSE((*found)[0]);
        CHECK((*found)[1]->type == elf::k_sht_note);
        CHECK((*found)[2]->offset == object.layout.data_offsets[0]);
        CHECK((*found)[3]->offset == object.layout.shstrtab_offset);
        CHECK((*found)[3]->size == object.layout.shstrtab_size);
    }

    TEST_CASE("takes the first of two sections with one name, and gives SHT_NOBITS no bytes") {
        SectionElfSpec spec = base_spec();
        spec.sections.push_back({".nv_fatbin", elf::k_sht_progbits, filled(8, 1), 8, {}});
        const SectionElf object = build_section_elf(spec);
        CHECK(find(object, ".nv_fatbin")->size == 32);
        auto bss = find(object, ".bss");
        REQUIRE(bss);
        CHECK(bss->type == elf::k_sht_nobits);
        CHECK(bss->size == 0);
    }

    TEST_CASE("reads the counts of extended section numbering from section 0") {
        SectionElfSpec spec = base_spec();
        spec.extended_numbering = true;
        const SectionElf object = build_section_elf(spec);
        CHECK(find(object, ".note.test")->offset == object.layout.data_offsets[2]);
    }

    TEST_CASE("finds nothing without a section header table or without section names") {
        SectionElf object = build_section_elf(base_spec());
        object.patch(object.layout.strndx_field, 0, 2);  // SHN_UNDEF
        CHECK_FALSE(find(object, ".nv_fatbin"));
        object.patch_word(object.layout.shoff_field, 0);
        CHECK_FALSE(find(object, ".nv_fatbin"));
    }

    TEST_CASE("reads notes in both byte orders with their owners, types and descriptors") {
        for (ByteOrder order : {ByteOrder::little, ByteOrder::big}) {
            const SectionElf object = build_section_elf(base_spec(ElfClass::elf64, order));
            util::MemorySource source("m.so", object.bytes);
            auto section = find(object, ".note.test");
            REQUIRE(section);
            auto notes = elf::read_notes(source, *section);
            REQUIRE(notes.ok());
            REQUIRE(notes->size() == 2);
            CHECK((*notes)[0].owner == "GNU");
            CHECK((*notes)[0].type == 3);
            CHECK((*notes)[0].descriptor == filled(20, 0xab));
            CHECK((*notes)[0].offset == section->offset);
            CHECK((*notes)[1].owner == "NVIDIA Corporation");
            CHECK((*notes)[1].type == 0);
            CHECK((*notes)[1].descriptor == section_text_bytes("{\"format\":1}"));
            CHECK((*notes)[1].offset == section->offset + 12 + 4 + 20);
        }
    }

    TEST_CASE("pads notes to 8 bytes where the section is 8-aligned") {
        // .note.gnu.property: "GNU" ends at 16, the descriptor starts there, not at 12 + 8.
        SectionElfSpec spec = base_spec();
        auto notes_bytes = joined(elf_note("GNU", 5, filled(12, 7), ByteOrder::little, 8),
                                  elf_note("Go", 4, filled(3, 9), ByteOrder::little, 8));
        spec.sections[2] = {".note.gnu.property", elf::k_sht_note, notes_bytes, 8, {}};
        const SectionElf object = build_section_elf(spec);
        util::MemorySource source("m.so", object.bytes);
        auto notes = elf::read_notes(source, *find(object, ".note.gnu.property"));
        REQUIRE(notes.ok());
        REQUIRE(notes->size() == 2);
        CHECK((*notes)[0].descriptor == filled(12, 7));
        CHECK((*notes)[1].owner == "Go");
        CHECK((*notes)[1].offset == object.layout.data_offsets[2] + 32);
        CHECK((*notes)[1].descriptor == filled(3, 9));
    }

    TEST_CASE("accepts empty names and descriptors, and a last note without its padding") {
        std::vector<std::byte> bytes = joined(elf_note("", 1, {}), elf_note("X", 2, filled(3, 5)));
        bytes.pop_back();  // the descriptor's one byte of padding
        SectionElfSpec spec = base_spec();
        spec.sections[2].bytes = bytes;
        const SectionElf object = build_section_elf(spec);
        util::MemorySource source("m.so", object.bytes);
        auto notes = elf::read_notes(source, *find(object, ".note.test"));
        REQUIRE(notes.ok());
        REQUIRE(notes->size() == 2);
        CHECK((*notes)[0].owner.empty());
        CHECK((*notes)[0].descriptor.empty());
        CHECK((*notes)[1].descriptor == filled(3, 5));
    }

    TEST_CASE("cuts a descriptor at the end of its section only when asked to") {
        // NVIDIA's Orin compat libcuda: descsz 41 where the section holds 39 bytes of it.
        std::vector<std::byte> bytes = elf_note("NVIDIA Corporation", 0, filled(41, 0x61));
        bytes.resize(bytes.size() - 3 - 2);  // padding, then two descriptor bytes
        SectionElfSpec spec = base_spec();
        spec.sections[2].bytes = bytes;
        const SectionElf object = build_section_elf(spec);
        util::MemorySource source("m.so", object.bytes);
        auto section = find(object, ".note.test");
        auto strict = elf::read_notes(source, *section);
        REQUIRE_FALSE(strict.ok());
        CHECK(strict.error().text() ==
              at(section->offset,
                 "note descriptor (41 bytes) runs past the end of the note "
                 "section (39 bytes left)"));
        auto clipped = elf::read_notes(source, *section, elf::NoteReading::clip_descriptor);
        REQUIRE(clipped.ok());
        CHECK(clipped->front().descriptor == filled(39, 0x61));
    }

    TEST_CASE("rejects each malformed section table or note with one exact located error") {
        struct Case {
            std::string description;
            std::function<std::string(SectionElf&)> corrupt;  // returns the expected error
        };
        using L = const SectionElfLayout&;
        auto past_file = [](uint64_t entries, uint64_t size) {
            return fmt::format(
                "section header table ({} entries) runs past the end of the file "
                "({} bytes)",
                entries, size);
        };
        const std::vector<Case> cases{
            {"not an ELF file",
             [](SectionElf& o) {
                 o.bytes[1] = std::byte{'X'};
                 return at(0, "not an ELF file (bad magic)");
             }},
            {"e_shentsize wrong",
             [](SectionElf& o) {
                 o.patch(0x3a, 40, 2);
                 return at(0x3a, "section header entry size 40 is not 64");
             }},
            {"e_shoff past the end of the file",
             [&](SectionElf& o) {
                 L l = o.layout;
                 o.patch_word(l.shoff_field, l.file_size + 8);
                 return at(l.file_size + 8, past_file(l.shnum, l.file_size));
             }},
            {"section header table cut short",
             [&](SectionElf& o) {
                 L l = o.layout;
                 o.bytes.resize(l.shoff + 100);
                 return at(l.shoff, past_file(l.shnum, l.shoff + 100));
             }},
            {"absurd e_shnum",
             [&](SectionElf& o) {
                 o.patch(o.layout.shnum_field, 60000, 2);
                 return at(o.layout.shoff, past_file(60000, o.layout.file_size));
             }},
            {"section header table overlapping the ELF header",
             [](SectionElf& o) {
                 o.patch_word(o.layout.shoff_field, 8);
                 return at(8, "section header table overlaps the ELF header");
             }},
            {"e_shstrndx out of range",
             [](SectionElf& o) {
                 o.patch(o.layout.strndx_field, 9, 2);
                 return at(o.layout.strndx_field,
                           "section name string table index 9 is out of range (6 sections)");
             }},
            {".shstrtab past the end of the file",
             [](SectionElf& o) {
                 L l = o.layout;
                 o.patch_word(l.size_field(l.shstrtab_header), 0x10000);
                 return at(l.shstrtab_header,
                           fmt::format("section name string table (65536 bytes at 0x{:x}) runs "
                                       "past the end of the file ({} bytes)",
                                       l.shstrtab_offset, l.file_size));
             }},
            {"a name index past the end of .shstrtab",
             [](SectionElf& o) {
                 L l = o.layout;
                 o.patch(l.name_field(l.header_offsets[0]), l.shstrtab_size, 4);
                 return at(l.header_offsets[0],
                           fmt::format("section 1 name index 0x{:x} is past the end of the "
                                       "section name string table ({} bytes)",
                                       l.shstrtab_size, l.shstrtab_size));
             }},
            {"the section found past the end of the file",
             [](SectionElf& o) {
                 L l = o.layout;
                 o.patch_word(l.offset_field(l.header_offsets[1]), l.file_size - 16);
                 return at(l.header_offsets[1],
                           fmt::format("section .nv_fatbin (32 bytes at 0x{:x}) runs past the "
                                       "end of the file ({} bytes)",
                                       l.file_size - 16, l.file_size));
             }},
            {"extended numbering with an absurd count in section 0",
             [&](SectionElf& o) {
                 L l = o.layout;
                 o.patch(l.shnum_field, 0, 2);
                 o.patch_word(l.size_field(l.shoff), 99999);
                 return at(l.shoff, past_file(99999, l.file_size));
             }},
            {"a note header cut short",
             [](SectionElf& o) {
                 L l = o.layout;
                 o.patch_word(l.size_field(l.header_offsets[2]), 8);
                 return at(l.data_offsets[2],
                           "note header (12 bytes) runs past the end of the "
                           "note section (8 bytes left)");
             }},
            {"a note name size that overflows",
             [](SectionElf& o) {
                 L l = o.layout;
                 o.patch(l.data_offsets[2], 0xffffffff, 4);
                 return at(l.data_offsets[2],
                           "note name (4294967295 bytes) runs past the end of "
                           "the note section (68 bytes left)");
             }},
            {"a note descriptor size that overflows",
             [](SectionElf& o) {
                 L l = o.layout;
                 o.patch(l.data_offsets[2] + 4, 0xfffffffc, 4);
                 return at(l.data_offsets[2],
                           "note descriptor (4294967292 bytes) runs past the "
                           "end of the note section (64 bytes left)");
             }},
            {"the second note cut inside its name",
             [](SectionElf& o) {
                 L l = o.layout;
                 o.patch_word(l.size_field(l.header_offsets[2]), 36 + 12 + 10);
                 return at(l.data_offsets[2] + 36,
                           "note name (19 bytes) runs past the end of "
                           "the note section (10 bytes left)");
             }},
            {"a note section larger than 1 MiB",
             [](SectionElf& o) {
                 L l = o.layout;
                 o.patch_word(l.size_field(l.header_offsets[2]), 2u << 20);
                 o.bytes.resize(o.bytes.size() + (2u << 20));
                 return at(l.header_offsets[2],
                           fmt::format("note section (2097152 bytes at 0x{:x}) is larger than "
                                       "1048576 bytes",
                                       l.data_offsets[2]));
             }},
        };
        for (const Case& c : cases) {
            INFO(c.description);
            SectionElf object = build_section_elf(base_spec());
            const std::string expected = c.corrupt(object);
            util::MemorySource source("m.so", object.bytes);
            const std::array<std::string_view, 2> names{".nv_fatbin", ".note.test"};
            auto found = elf::find_sections(source, names);
            std::string error;
            if (!found.ok()) {
                error = found.error().text();
            } else {
                REQUIRE((*found)[1]);
                auto notes = elf::read_notes(source, *(*found)[1]);
                REQUIRE_FALSE(notes.ok());
                error = notes.error().text();
            }
            CHECK(error == expected);
        }
    }
}

}  // namespace rootlock::testing::ROOTLOCK_UNIT_ID
