// Malformed ELF input: a table of corruptions of writer-built objects, each with the exact
// located error that read_elf and read_elf_stream must both give.
#include <doctest/doctest.h>

#include <algorithm>
#include <functional>

#include <fmt/format.h>

#include "elf/elf_reader.hpp"
#include "support/elf_writer.hpp"
#include "support/temp_dir.hpp"

namespace {

using namespace rootlock;
using elf::ReadOptions;
using testing::ElfImage;
using testing::ElfLayout;
using testing::ElfSpec;

ElfSpec base_spec(elf::ElfClass elf_class = elf::ElfClass::elf64) {
    ElfSpec spec;
    spec.elf_class = elf_class;
    spec.interpreter = "/lib64/ld-linux-x86-64.so.2";
    spec.soname = "libm.so.1";
    spec.needed = {"libc.so.6", "libdl.so.2"};
    spec.rpath = "$ORIGIN";
    spec.runpath = "/opt";
    spec.version_defs = {{"M_1", 2, 0, {}}, {"M_2", 3, 0, {"M_1"}}};
    spec.version_needs = {{"libc.so.6", {{"GLIBC_2.2.5", 4, false}, {"GLIBC_2.34", 5, false}}},
                          {"libdl.so.2", {{"GLIBC_2.3", 6, false}, {"GLIBC_2.4", 7, false}}}};
    spec.symbols = {{"m1", true, elf::k_stb_global, elf::k_stt_func, 2, false},
                    {"m2", true, elf::k_stb_global, elf::k_stt_func, 3, false},
                    {"puts", false, elf::k_stb_global, elf::k_stt_func, 4, false},
                    {"dlopen", false, elf::k_stb_global, elf::k_stt_func, 6, false}};
    return spec;
}

std::string hex(uint64_t value) {
    return fmt::format("0x{:x}", value);
}

// "m.so@0xOFF: message".
std::string at(uint64_t offset, std::string_view message) {
    return fmt::format("m.so@0x{:x}: {}", offset, message);
}

// Which object a case corrupts.
enum class Base { elf64, elf32, trailing, gnu_hash };

ElfImage build(Base base) {
    switch (base) {
        case Base::elf64:
            return testing::build_elf_image(base_spec());
        case Base::elf32:
            return testing::build_elf_image(base_spec(elf::ElfClass::elf32));
        case Base::trailing: {
            ElfSpec spec = base_spec();
            spec.trailing_metadata = true;
            return testing::build_elf_image(spec);
        }
        case Base::gnu_hash: {
            ElfSpec spec = base_spec();
            spec.sysv_hash = false;
            spec.gnu_hash = true;
            return testing::build_elf_image(spec);
        }
    }
    throw std::logic_error("unknown base");
}

struct MalformedCase {
    std::string description;
    Base base;
    // Corrupts the image and returns the exact error text expected.
    std::function<std::string(ElfImage&)> corrupt;
};

// The PT_DYNAMIC segment's size, as the writer lays it out.
uint64_t dynamic_size(const ElfLayout& layout) {
    return layout.dynamic_entries.size() * layout.dynamic_entry_size;
}

// Points the next-field at `from` back to the record at `to`, wrapping at 32 bits as ELF32
// pointer arithmetic does.
uint64_t backwards(uint64_t from, uint64_t to) {
    return (to - from) & 0xffffffffU;
}

// A case that writes `value` (`width` bytes) at a fixed offset, failing at `location`.
MalformedCase field_case(std::string description, Base base, uint64_t offset, size_t width,
                         uint64_t value, uint64_t location, std::string message) {
    return {std::move(description), base, [=](ElfImage& image) {
                image.patch(offset, value, width);
                return at(location, message);
            }};
}

// A case that cuts the object to `size` bytes, failing at `location`.
MalformedCase truncate_case(std::string description, uint64_t size, uint64_t location,
                            std::string message) {
    return {std::move(description), Base::elf64, [=](ElfImage& image) {
                image.truncate(size);
                return at(location, message);
            }};
}

// A case that sets d_val of the dynamic entry `tag`, failing at the entry `location_tag`.
MalformedCase dynamic_case(std::string description, uint64_t tag, uint64_t value,
                           uint64_t location_tag, std::string message) {
    return {std::move(description), Base::elf64, [=](ElfImage& image) {
                image.patch_dynamic(tag, value);
                return at(image.layout().dynamic_entry(location_tag), message);
            }};
}

// A case that turns the dynamic entry `tag` into an unknown one, as if it were missing.
MalformedCase missing_tag_case(std::string description, uint64_t tag, uint64_t location_tag,
                               std::string message) {
    return {std::move(description), Base::elf64, [=](ElfImage& image) {
                image.patch_u64(image.layout().dynamic_entry(tag), 0x6ffffe00);
                return at(image.layout().dynamic_entry(location_tag), message);
            }};
}

std::string past_file(std::string_view what, uint64_t length, uint64_t offset, uint64_t size) {
    return fmt::format("{} ({} bytes at {}) runs past the end of the file ({} bytes)", what, length,
                       hex(offset), size);
}

std::string past_segment(std::string_view what, uint64_t length, uint64_t offset) {
    return fmt::format("{} ({} bytes at {}) runs past the end of its PT_LOAD segment", what, length,
                       hex(offset));
}

std::vector<MalformedCase> header_cases() {
    using L = const ElfLayout&;
    std::vector<MalformedCase> cases{
        field_case("bad magic", Base::elf64, 1, 1, 'X', 0, "not an ELF file (bad magic)"),
        field_case("bad class", Base::elf64, 4, 1, 3, 4, "unsupported ELF class 3"),
        field_case("bad data encoding", Base::elf64, 5, 1, 0, 5, "unsupported ELF data encoding 0"),
        field_case("bad identification version", Base::elf64, 6, 1, 0, 6,
                   "unsupported ELF identification version 0"),
        field_case("bad e_version", Base::elf64, 0x14, 4, 7, 0x14, "unsupported ELF version 7"),
        field_case("wrong e_ehsize", Base::elf64, 0x34, 2, 10, 0x34,
                   "ELF header size 10 is not 64"),
        field_case("wrong e_phentsize", Base::elf64, 0x36, 2, 32, 0x36,
                   "program header entry size 32 is not 56"),
        field_case("wrong ELF32 e_phentsize", Base::elf32, 0x2a, 2, 56, 0x2a,
                   "program header entry size 56 is not 32"),
        field_case("e_phnum is PN_XNUM", Base::elf64, 0x38, 2, 0xffff, 0x38,
                   "extended program header numbering (PN_XNUM) is not supported"),
        field_case("program header table overlapping the ELF header", Base::elf64, 0x20, 8, 8, 8,
                   "program header table overlaps the ELF header"),
        field_case("wrong e_shentsize with sections", Base::elf64, 0x3a, 4, 0x0001000c, 0x3a,
                   "section header entry size 12 is not 64"),
        truncate_case("truncated inside e_ident", 10, 0,
                      "file too short for an ELF header (10 bytes)"),
        truncate_case("truncated inside the ELF header", 40, 0,
                      "file too short for an ELF header (40 bytes)"),
        {"truncated inside the program headers", Base::elf64,
         [](ElfImage& image) {
             L l = image.layout();
             image.truncate(l.phoff + 100);
             return at(l.phoff, fmt::format("program header table ({} entries) runs past the end "
                                            "of the file ({} bytes)",
                                            l.phnum, l.phoff + 100));
         }},
        {"e_phoff past the end", Base::elf64,
         [](ElfImage& image) {
             image.patch_u64(0x20, 0x100000);
             return at(0x100000, fmt::format("program header table ({} entries) runs past the end "
                                             "of the file ({} bytes)",
                                             image.layout().phnum, image.bytes().size()));
         }},
        {"absurd e_phnum", Base::elf64,
         [](ElfImage& image) {
             image.patch_u16(0x38, 60000);
             return at(0x40, fmt::format("program header table (60000 entries) runs past the end "
                                         "of the file ({} bytes)",
                                         image.bytes().size()));
         }},
        {"truncated inside the dynamic section", Base::elf64,
         [](ElfImage& image) {
             L l = image.layout();
             image.truncate(l.dynamic_offset + 20);
             return at(l.dynamic_phdr, past_file("PT_DYNAMIC segment", dynamic_size(l),
                                                 l.dynamic_offset, l.dynamic_offset + 20));
         }},
        {"PT_DYNAMIC past the end", Base::elf64,
         [](ElfImage& image) {
             L l = image.layout();
             uint64_t size = image.bytes().size();
             image.patch_u64(l.dynamic_phdr + 8, size - 8);
             return at(l.dynamic_phdr,
                       past_file("PT_DYNAMIC segment", dynamic_size(l), size - 8, size));
         }},
        {"PT_INTERP not NUL-terminated", Base::elf64,
         [](ElfImage& image) {
             image.patch_u8(image.layout().interp_offset + 27, 'x');
             return at(image.layout().interp_offset, "PT_INTERP is not NUL-terminated");
         }},
        {"PT_INTERP past the end", Base::elf64,
         [](ElfImage& image) {
             L l = image.layout();
             uint64_t size = image.bytes().size();
             image.patch_u64(l.interp_phdr + 8, size - 4);
             return at(l.interp_phdr, past_file("PT_INTERP segment", 28, size - 4, size));
         }},
        {"PT_INTERP longer than PATH_MAX", Base::elf64,
         [](ElfImage& image) {
             image.patch_u64(image.layout().interp_phdr + 32, 5000);
             return at(image.layout().interp_phdr,
                       "PT_INTERP is longer than 4096 bytes (5000 bytes)");
         }},
        {"dynamic section without DT_NULL", Base::elf64,
         [](ElfImage& image) {
             L l = image.layout();
             image.patch_u64(l.dynamic_entries.back().second, 0x6ffffe00);
             return at(l.dynamic_offset, "dynamic section has no DT_NULL terminator");
         }},
    };
    return cases;
}

std::vector<MalformedCase> string_cases() {
    using L = const ElfLayout&;
    using testing::k_dt_strtab;
    std::vector<MalformedCase> cases{
        dynamic_case("DT_STRTAB address in no PT_LOAD", k_dt_strtab, 0x7000000, k_dt_strtab,
                     "DT_STRTAB address 0x7000000 is not in any PT_LOAD segment"),
        missing_tag_case("string tags without DT_STRTAB", k_dt_strtab, testing::k_dt_needed,
                         "DT_NEEDED needs the dynamic string table, but there is no DT_STRTAB"),
        missing_tag_case("DT_STRTAB without DT_STRSZ", testing::k_dt_strsz, k_dt_strtab,
                         "DT_STRTAB without DT_STRSZ"),
        {"truncated inside the dynamic string table", Base::trailing,
         [](ElfImage& image) {
             L l = image.layout();
             image.truncate(l.dynstr_offset + 3);
             return at(l.dynamic_entry(k_dt_strtab),
                       past_file("dynamic string table", l.dynstr_size, l.dynstr_offset,
                                 l.dynstr_offset + 3));
         }},
        {"DT_STRSZ past the end of the file", Base::elf64,
         [](ElfImage& image) {
             L l = image.layout();
             image.patch_dynamic(testing::k_dt_strsz, 0x100000);
             return at(l.dynamic_entry(k_dt_strtab),
                       past_file("dynamic string table", 0x100000, l.dynstr_offset,
                                 image.bytes().size()));
         }},
        {"DT_STRSZ past the end of its segment", Base::elf64,
         [](ElfImage& image) {
             L l = image.layout();
             uint64_t size = l.text_offset - l.dynstr_offset + 8;
             image.patch_dynamic(testing::k_dt_strsz, size);
             return at(l.dynamic_entry(k_dt_strtab),
                       past_segment("dynamic string table", size, l.dynstr_offset));
         }},
        {"unterminated string at the end of the string table", Base::elf64,
         [](ElfImage& image) {
             L l = image.layout();
             image.patch_dynamic(testing::k_dt_strsz, l.dynstr_size - 1);
             uint64_t last = 0;  // the string that loses its NUL (a symbol name, read last)
             for (const auto& [text, index] : l.string_index)
                 last = std::max(last, index);
             return at(l.dynstr_offset + last,
                       "unterminated string at the end of the dynamic string table");
         }},
    };
    for (auto [tag, name] :
         {std::pair{testing::k_dt_needed, "DT_NEEDED"},
          std::pair{testing::k_dt_soname, "DT_SONAME"}, std::pair{testing::k_dt_rpath, "DT_RPATH"},
          std::pair{testing::k_dt_runpath, "DT_RUNPATH"}}) {
        cases.push_back(dynamic_case(
            fmt::format("{} string index out of range", name), tag, 0x9999, tag,
            fmt::format("{} string index 0x9999 is past the end of the string table", name)));
    }
    return cases;
}

// A case that writes `value` (`width` bytes) at `field` bytes into the record the layout lists
// at `records(layout)[index]`, failing at that record.
template <class Records>
MalformedCase record_case(std::string description, Records records, size_t index, uint64_t field,
                          size_t width, uint64_t value, std::string message) {
    return {std::move(description), Base::elf64, [=](ElfImage& image) {
                uint64_t record = records(image.layout())[index];
                image.patch(record + field, value, width);
                return at(record, message);
            }};
}

std::vector<MalformedCase> version_cases() {
    using L = const ElfLayout&;
    using testing::k_dt_verdefnum;
    using testing::k_dt_verneed;
    using testing::k_dt_verneednum;
    auto needs = [](L l) { return l.verneed_entries; };
    auto needs_aux = [](L l) { return l.vernaux_entries; };
    auto defs = [](L l) { return l.verdef_entries; };
    auto defs_aux = [](L l) { return l.verdaux_entries; };
    const std::string past_strings = "string index 0x9999 is past the end of the string table";
    return {
        dynamic_case("absurd DT_VERNEEDNUM", k_dt_verneednum, 0x1000000, k_dt_verneednum,
                     "absurd version need count 16777216 (DT_VERNEEDNUM)"),
        dynamic_case("absurd DT_VERDEFNUM", k_dt_verdefnum, 0xffffffff, k_dt_verdefnum,
                     "absurd version definition count 4294967295 (DT_VERDEFNUM)"),
        dynamic_case("DT_VERNEED address in no PT_LOAD", k_dt_verneed, 0x900000, k_dt_verneed,
                     "DT_VERNEED address 0x900000 is not in any PT_LOAD segment"),
        missing_tag_case("DT_VERNEED without DT_VERNEEDNUM", k_dt_verneednum, k_dt_verneed,
                         "DT_VERNEED without DT_VERNEEDNUM"),
        record_case("unsupported Verneed version", needs, 0, 0, 2, 2,
                    "unsupported version 2 of Verneed record"),
        record_case("unsupported Verdef version", defs, 1, 0, 2, 0,
                    "unsupported version 0 of Verdef record"),
        record_case("vn_file string index out of range", needs, 1, 4, 4, 0x9999,
                    "vn_file " + past_strings),
        record_case("vna_name string index out of range", needs_aux, 3, 8, 4, 0x9999,
                    "vna_name " + past_strings),
        record_case("verdef auxiliary name out of range", defs_aux, 3, 0, 4, 0x9999,
                    "vda_name " + past_strings),
        record_case("version definition without a name", defs, 2, 6, 2, 0,
                    "version definition has no name (vd_cnt is 0)"),
        {"vn_next pointing outside the segment", Base::elf64,
         [](ElfImage& image) {
             L l = image.layout();
             image.patch_u32(l.verneed_entries[0] + 12, 0x100000);
             return at(l.verneed_entries[0],
                       fmt::format("version need entry address {} is outside its PT_LOAD segment",
                                   hex(l.vaddr(l.verneed_entries[0]) + 0x100000)));
         }},
        {"vna_next pointing outside the segment", Base::elf64,
         [](ElfImage& image) {
             L l = image.layout();
             image.patch_u32(l.vernaux_entries[0] + 12, 0x100000);
             return at(l.vernaux_entries[0],
                       fmt::format("version need auxiliary entry address {} is outside its "
                                   "PT_LOAD segment",
                                   hex(l.vaddr(l.vernaux_entries[0]) + 0x100000)));
         }},
        // ELF32 next offsets wrap at 32 bits, so they can point backwards: the declared counts
        // are raised so that the walk reaches the repeated record.
        {"cyclic version need chain", Base::elf32,
         [](ElfImage& image) {
             L l = image.layout();
             image.patch_u32(l.verneed_entries[1] + 12,
                             backwards(l.verneed_entries[1], l.verneed_entries[0]));
             image.patch_dynamic(k_dt_verneednum, 3);
             return at(l.verneed_entries[1], "version need chain is cyclic");
         }},
        {"cyclic version need auxiliary chain", Base::elf32,
         [](ElfImage& image) {
             L l = image.layout();
             image.patch_u32(l.vernaux_entries[1] + 12,
                             backwards(l.vernaux_entries[1], l.vernaux_entries[0]));
             image.patch_u16(l.verneed_entries[0] + 2, 3);
             return at(l.vernaux_entries[1], "version need auxiliary chain is cyclic");
         }},
        {"cyclic version definition chain", Base::elf32,
         [](ElfImage& image) {
             L l = image.layout();
             image.patch_u32(l.verdef_entries[2] + 16,
                             backwards(l.verdef_entries[2], l.verdef_entries[0]));
             image.patch_dynamic(k_dt_verdefnum, 4);
             return at(l.verdef_entries[2], "version definition chain is cyclic");
         }},
        {"cyclic version definition auxiliary chain", Base::elf32,
         [](ElfImage& image) {
             L l = image.layout();
             image.patch_u32(l.verdaux_entries[3] + 4,
                             backwards(l.verdaux_entries[3], l.verdaux_entries[2]));
             image.patch_u16(l.verdef_entries[2] + 6, 3);
             return at(l.verdaux_entries[3], "version definition auxiliary chain is cyclic");
         }},
    };
}

std::vector<MalformedCase> symbol_cases() {
    using L = const ElfLayout&;
    using testing::k_dt_symtab;
    return {
        dynamic_case("DT_SYMENT of the wrong size", testing::k_dt_syment, 20, testing::k_dt_syment,
                     "DT_SYMENT 20 is not 24"),
        {"absurd DT_HASH nchain", Base::elf64,
         [](ElfImage& image) {
             image.patch_u32(image.layout().hash_offset + 4, 0x10000000);
             return at(image.layout().hash_offset,
                       "absurd symbol count 268435456 from DT_HASH nchain");
         }},
        {"symbol table past the end of its segment", Base::elf64,
         [](ElfImage& image) {
             L l = image.layout();
             uint64_t count = (l.meta_size - l.dynsym_offset) / 24 + 2;
             image.patch_u32(l.hash_offset + 4, count);
             return at(l.dynamic_entry(k_dt_symtab),
                       past_segment("dynamic symbol table", count * 24, l.dynsym_offset));
         }},
        {"symbol version table past the end of its segment", Base::elf64,
         [](ElfImage& image) {
             L l = image.layout();
             image.patch_dynamic(testing::k_dt_versym, l.vaddr(l.meta_size - 2));
             return at(l.dynamic_entry(testing::k_dt_versym),
                       past_segment("symbol version table", 10, l.meta_size - 2));
         }},
        {"versym index no version declares", Base::elf64,
         [](ElfImage& image) {
             L l = image.layout();
             size_t index = 0;
             while (l.symbol_names[index] != "m1")
                 ++index;
             image.patch_u16(l.versym_offset + 2 * index, 0x55);
             return at(l.versym_offset + 2 * index,
                       fmt::format("symbol {} (m1) has version index 85, which no version "
                                   "definition or need declares",
                                   index));
         }},
        {"symbol name index out of range", Base::elf64,
         [](ElfImage& image) {
             image.patch_u32(image.layout().symbol("m2"), 0x9999);
             return at(image.layout().symbol("m2"),
                       "symbol name string index 0x9999 is past the end of the string table");
         }},
        {"GNU hash bucket below symoffset", Base::gnu_hash,
         [](ElfImage& image) {
             L l = image.layout();
             image.patch_u32(l.gnu_hash_offset + 16 + 8, 1);
             return at(l.gnu_hash_offset, "GNU hash bucket value 1 is below symoffset 3");
         }},
        {"absurd GNU hash bloom filter", Base::gnu_hash,
         [](ElfImage& image) {
             L l = image.layout();
             image.patch_u32(l.gnu_hash_offset + 8, 0x10000000);
             return at(l.dynamic_entry(testing::k_dt_gnu_hash),
                       past_file("GNU hash table", 16 + 0x80000000ULL + 4, l.gnu_hash_offset,
                                 image.bytes().size()));
         }},
    };
}

std::vector<MalformedCase> malformed_cases() {
    std::vector<MalformedCase> cases;
    for (auto part : {header_cases(), string_cases(), version_cases(), symbol_cases()}) {
        cases.insert(cases.end(), part.begin(), part.end());
    }
    return cases;
}

}  // namespace

TEST_SUITE("rootlock::elf") {
    TEST_CASE("rejects each malformed object with one exact located error, on both read paths") {
        const auto cases = malformed_cases();
        CHECK(cases.size() >= 25);
        for (const auto& malformed : cases) {
            INFO(malformed.description);
            ElfImage image = build(malformed.base);
            {
                util::MemorySource pristine("m.so", image.bytes());
                REQUIRE(elf::read_elf(pristine, ReadOptions{true}).ok());
            }
            const std::string expected = malformed.corrupt(image);
            util::MemorySource source("m.so", image.bytes());
            auto direct = elf::read_elf(source, ReadOptions{true});
            REQUIRE_FALSE(direct.ok());
            CHECK(direct.error().text() == expected);

            testing::MemoryStream stream(image.bytes());
            auto streamed =
                elf::read_elf_stream(stream, image.bytes().size(), "m.so", ReadOptions{true});
            REQUIRE_FALSE(streamed.ok());
            CHECK(streamed.error().text() == expected);
        }
    }
    // The byte-flipping robustness sweep lives in test_elf_stream.cpp, since beyond surviving it
    // checks that both read paths agree on every mutated object.
}
