// Malformed ELF input: a table of corruptions of writer-built objects, each with the exact
// located error both read paths must give, and a byte-flipping sweep that must never crash.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <random>

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

class BufferStream final : public util::ByteStream {
public:
    explicit BufferStream(const std::vector<std::byte>& bytes) : m_bytes(bytes) {}
    util::Result<size_t> read(std::span<std::byte> out) override {
        size_t n = std::min(out.size(), m_bytes.size() - m_position);
        if (n != 0) std::memcpy(out.data(), m_bytes.data() + m_position, n);
        m_position += n;
        return n;
    }

private:
    const std::vector<std::byte>& m_bytes;
    size_t m_position = 0;
};

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

std::string hex(uint64_t value) { return fmt::format("0x{:x}", value); }

// "m.so@0xOFF: message".
std::string at(uint64_t offset, std::string_view message) {
    return fmt::format("m.so@0x{:x}: {}", offset, message);
}

// Which object a case corrupts.
enum class Base { elf64, elf32, trailing, gnu_hash };

ElfImage build(Base base) {
    switch (base) {
        case Base::elf64: return testing::build_elf_image(base_spec());
        case Base::elf32: return testing::build_elf_image(base_spec(elf::ElfClass::elf32));
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
uint64_t backwards(uint64_t from, uint64_t to) { return (to - from) & 0xffffffffU; }

std::vector<MalformedCase> malformed_cases() {
    using L = const ElfLayout&;
    auto dyn = [](L l, uint64_t tag) { return l.dynamic_entry(tag); };
    return {
        {"truncated inside e_ident", Base::elf64,
         [](ElfImage& image) {
             image.truncate(10);
             return at(0, "file too short for an ELF header (10 bytes)");
         }},
        {"truncated inside the ELF header", Base::elf64,
         [](ElfImage& image) {
             image.truncate(40);
             return at(0, "file too short for an ELF header (40 bytes)");
         }},
        {"truncated inside the program headers", Base::elf64,
         [](ElfImage& image) {
             L l = image.layout();
             image.truncate(l.phoff + 100);
             return at(l.phoff, fmt::format("program header table ({} entries) runs past the end "
                                            "of the file ({} bytes)",
                                            l.phnum, l.phoff + 100));
         }},
        {"truncated inside the dynamic section", Base::elf64,
         [](ElfImage& image) {
             L l = image.layout();
             image.truncate(l.dynamic_offset + 20);
             return at(l.dynamic_phdr,
                       fmt::format("PT_DYNAMIC segment ({} bytes at {}) runs past the end of the "
                                   "file ({} bytes)",
                                   dynamic_size(l), hex(l.dynamic_offset), l.dynamic_offset + 20));
         }},
        {"truncated inside the dynamic string table", Base::trailing,
         [](ElfImage& image) {
             L l = image.layout();
             image.truncate(l.dynstr_offset + 3);
             return at(l.dynamic_entry(testing::k_dt_strtab),
                       fmt::format("dynamic string table ({} bytes at {}) runs past the end of "
                                   "the file ({} bytes)",
                                   l.dynstr_size, hex(l.dynstr_offset), l.dynstr_offset + 3));
         }},
        {"bad magic", Base::elf64,
         [](ElfImage& image) {
             image.patch_u8(1, 'X');
             return at(0, "not an ELF file (bad magic)");
         }},
        {"bad class", Base::elf64,
         [](ElfImage& image) {
             image.patch_u8(4, 3);
             return at(4, "unsupported ELF class 3");
         }},
        {"bad data encoding", Base::elf64,
         [](ElfImage& image) {
             image.patch_u8(5, 0);
             return at(5, "unsupported ELF data encoding 0");
         }},
        {"bad identification version", Base::elf64,
         [](ElfImage& image) {
             image.patch_u8(6, 0);
             return at(6, "unsupported ELF identification version 0");
         }},
        {"bad e_version", Base::elf64,
         [](ElfImage& image) {
             image.patch_u32(0x14, 7);
             return at(0x14, "unsupported ELF version 7");
         }},
        {"wrong e_ehsize", Base::elf64,
         [](ElfImage& image) {
             image.patch_u16(0x34, 10);
             return at(0x34, "ELF header size 10 is not 64");
         }},
        {"wrong e_phentsize", Base::elf64,
         [](ElfImage& image) {
             image.patch_u16(0x36, 32);
             return at(0x36, "program header entry size 32 is not 56");
         }},
        {"wrong e_shentsize with sections", Base::elf64,
         [](ElfImage& image) {
             image.patch_u16(0x3c, 1);
             image.patch_u16(0x3a, 12);
             return at(0x3a, "section header entry size 12 is not 64");
         }},
        {"wrong ELF32 e_phentsize", Base::elf32,
         [](ElfImage& image) {
             image.patch_u16(0x2a, 56);
             return at(0x2a, "program header entry size 56 is not 32");
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
        {"e_phnum is PN_XNUM", Base::elf64,
         [](ElfImage& image) {
             image.patch_u16(0x38, 0xffff);
             return at(0x38, "extended program header numbering (PN_XNUM) is not supported");
         }},
        {"program header table overlapping the ELF header", Base::elf64,
         [](ElfImage& image) {
             image.patch_u64(0x20, 8);
             return at(8, "program header table overlaps the ELF header");
         }},
        {"PT_DYNAMIC past the end", Base::elf64,
         [](ElfImage& image) {
             L l = image.layout();
             uint64_t size = image.bytes().size();
             image.patch_u64(l.dynamic_phdr + 8, size - 8);
             return at(l.dynamic_phdr,
                       fmt::format("PT_DYNAMIC segment ({} bytes at {}) runs past the end of the "
                                   "file ({} bytes)",
                                   dynamic_size(l), hex(size - 8), size));
         }},
        {"PT_INTERP not NUL-terminated", Base::elf64,
         [](ElfImage& image) {
             L l = image.layout();
             image.patch_u8(l.interp_offset + 27, 'x');
             return at(l.interp_offset, "PT_INTERP is not NUL-terminated");
         }},
        {"PT_INTERP past the end", Base::elf64,
         [](ElfImage& image) {
             L l = image.layout();
             uint64_t size = image.bytes().size();
             image.patch_u64(l.interp_phdr + 8, size - 4);
             return at(l.interp_phdr, fmt::format("PT_INTERP segment (28 bytes at {}) runs past "
                                                  "the end of the file ({} bytes)",
                                                  hex(size - 4), size));
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
        {"DT_STRTAB address in no PT_LOAD", Base::elf64,
         [dyn](ElfImage& image) {
             image.patch_dynamic(testing::k_dt_strtab, 0x7000000);
             return at(dyn(image.layout(), testing::k_dt_strtab),
                       "DT_STRTAB address 0x7000000 is not in any PT_LOAD segment");
         }},
        {"DT_STRSZ past the end of the file", Base::elf64,
         [dyn](ElfImage& image) {
             L l = image.layout();
             image.patch_dynamic(testing::k_dt_strsz, 0x100000);
             return at(dyn(l, testing::k_dt_strtab),
                       fmt::format("dynamic string table (1048576 bytes at {}) runs past the end "
                                   "of the file ({} bytes)",
                                   hex(l.dynstr_offset), image.bytes().size()));
         }},
        {"DT_STRSZ past the end of its segment", Base::elf64,
         [dyn](ElfImage& image) {
             L l = image.layout();
             uint64_t size = l.text_offset - l.dynstr_offset + 8;
             image.patch_dynamic(testing::k_dt_strsz, size);
             return at(dyn(l, testing::k_dt_strtab),
                       fmt::format("dynamic string table ({} bytes at {}) runs past the end of "
                                   "its PT_LOAD segment",
                                   size, hex(l.dynstr_offset)));
         }},
        {"DT_NEEDED string index out of range", Base::elf64,
         [dyn](ElfImage& image) {
             image.patch_dynamic(testing::k_dt_needed, 0x9999);
             return at(dyn(image.layout(), testing::k_dt_needed),
                       "DT_NEEDED string index 0x9999 is past the end of the string table");
         }},
        {"DT_SONAME string index out of range", Base::elf64,
         [dyn](ElfImage& image) {
             image.patch_dynamic(testing::k_dt_soname, 0x9999);
             return at(dyn(image.layout(), testing::k_dt_soname),
                       "DT_SONAME string index 0x9999 is past the end of the string table");
         }},
        {"DT_RPATH string index out of range", Base::elf64,
         [dyn](ElfImage& image) {
             image.patch_dynamic(testing::k_dt_rpath, 0x9999);
             return at(dyn(image.layout(), testing::k_dt_rpath),
                       "DT_RPATH string index 0x9999 is past the end of the string table");
         }},
        {"DT_RUNPATH string index out of range", Base::elf64,
         [dyn](ElfImage& image) {
             image.patch_dynamic(testing::k_dt_runpath, 0x9999);
             return at(dyn(image.layout(), testing::k_dt_runpath),
                       "DT_RUNPATH string index 0x9999 is past the end of the string table");
         }},
        {"string tags without DT_STRTAB", Base::elf64,
         [dyn](ElfImage& image) {
             L l = image.layout();
             image.patch_u64(dyn(l, testing::k_dt_strtab), 0x6ffffe00);
             return at(dyn(l, testing::k_dt_needed),
                       "DT_NEEDED needs the dynamic string table, but there is no DT_STRTAB");
         }},
        {"DT_STRTAB without DT_STRSZ", Base::elf64,
         [dyn](ElfImage& image) {
             L l = image.layout();
             image.patch_u64(dyn(l, testing::k_dt_strsz), 0x6ffffe00);
             return at(dyn(l, testing::k_dt_strtab), "DT_STRTAB without DT_STRSZ");
         }},
        {"unterminated string at the end of the string table", Base::elf64,
         [](ElfImage& image) {
             L l = image.layout();
             image.patch_dynamic(testing::k_dt_strsz, l.dynstr_size - 1);
             uint64_t last = 0;  // the string that loses its NUL (a symbol name, read last)
             for (const auto& [text, index] : l.string_index) last = std::max(last, index);
             return at(l.dynstr_offset + last,
                       "unterminated string at the end of the dynamic string table");
         }},
        {"absurd DT_VERNEEDNUM", Base::elf64,
         [dyn](ElfImage& image) {
             image.patch_dynamic(testing::k_dt_verneednum, 0x1000000);
             return at(dyn(image.layout(), testing::k_dt_verneednum),
                       "absurd version need count 16777216 (DT_VERNEEDNUM)");
         }},
        {"absurd DT_VERDEFNUM", Base::elf64,
         [dyn](ElfImage& image) {
             image.patch_dynamic(testing::k_dt_verdefnum, 0xffffffff);
             return at(dyn(image.layout(), testing::k_dt_verdefnum),
                       "absurd version definition count 4294967295 (DT_VERDEFNUM)");
         }},
        {"DT_VERNEED without DT_VERNEEDNUM", Base::elf64,
         [dyn](ElfImage& image) {
             L l = image.layout();
             image.patch_u64(dyn(l, testing::k_dt_verneednum), 0x6ffffe00);
             return at(dyn(l, testing::k_dt_verneed), "DT_VERNEED without DT_VERNEEDNUM");
         }},
        {"DT_VERNEED address in no PT_LOAD", Base::elf64,
         [dyn](ElfImage& image) {
             image.patch_dynamic(testing::k_dt_verneed, 0x900000);
             return at(dyn(image.layout(), testing::k_dt_verneed),
                       "DT_VERNEED address 0x900000 is not in any PT_LOAD segment");
         }},
        {"unsupported Verneed version", Base::elf64,
         [](ElfImage& image) {
             image.patch_u16(image.layout().verneed_entries[0], 2);
             return at(image.layout().verneed_entries[0], "unsupported version 2 of Verneed record");
         }},
        {"unsupported Verdef version", Base::elf64,
         [](ElfImage& image) {
             image.patch_u16(image.layout().verdef_entries[1], 0);
             return at(image.layout().verdef_entries[1], "unsupported version 0 of Verdef record");
         }},
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
        {"vn_file string index out of range", Base::elf64,
         [](ElfImage& image) {
             image.patch_u32(image.layout().verneed_entries[1] + 4, 0x9999);
             return at(image.layout().verneed_entries[1],
                       "vn_file string index 0x9999 is past the end of the string table");
         }},
        {"vna_name string index out of range", Base::elf64,
         [](ElfImage& image) {
             image.patch_u32(image.layout().vernaux_entries[3] + 8, 0x9999);
             return at(image.layout().vernaux_entries[3],
                       "vna_name string index 0x9999 is past the end of the string table");
         }},
        {"verdef auxiliary name out of range", Base::elf64,
         [](ElfImage& image) {
             image.patch_u32(image.layout().verdaux_entries[3], 0x9999);
             return at(image.layout().verdaux_entries[3],
                       "vda_name string index 0x9999 is past the end of the string table");
         }},
        {"version definition without a name", Base::elf64,
         [](ElfImage& image) {
             image.patch_u16(image.layout().verdef_entries[2] + 6, 0);
             return at(image.layout().verdef_entries[2],
                       "version definition has no name (vd_cnt is 0)");
         }},
        {"cyclic version need chain", Base::elf32,
         [](ElfImage& image) {
             L l = image.layout();
             image.patch_u32(l.verneed_entries[1] + 12,
                             backwards(l.verneed_entries[1], l.verneed_entries[0]));
             image.patch_dynamic(testing::k_dt_verneednum, 3);
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
             image.patch_dynamic(testing::k_dt_verdefnum, 4);
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
        {"absurd DT_HASH nchain", Base::elf64,
         [](ElfImage& image) {
             image.patch_u32(image.layout().hash_offset + 4, 0x10000000);
             return at(image.layout().hash_offset,
                       "absurd symbol count 268435456 from DT_HASH nchain");
         }},
        {"symbol table past the end of its segment", Base::elf64,
         [dyn](ElfImage& image) {
             L l = image.layout();
             uint64_t count = (l.meta_size - l.dynsym_offset) / 24 + 2;
             image.patch_u32(l.hash_offset + 4, count);
             return at(dyn(l, testing::k_dt_symtab),
                       fmt::format("dynamic symbol table ({} bytes at {}) runs past the end of "
                                   "its PT_LOAD segment",
                                   count * 24, hex(l.dynsym_offset)));
         }},
        {"DT_SYMENT of the wrong size", Base::elf64,
         [dyn](ElfImage& image) {
             image.patch_dynamic(testing::k_dt_syment, 20);
             return at(dyn(image.layout(), testing::k_dt_syment), "DT_SYMENT 20 is not 24");
         }},
        {"symbol version table past the end of its segment", Base::elf64,
         [dyn](ElfImage& image) {
             L l = image.layout();
             image.patch_dynamic(testing::k_dt_versym, l.vaddr(l.meta_size - 2));
             return at(dyn(l, testing::k_dt_versym),
                       fmt::format("symbol version table (10 bytes at {}) runs past the end of "
                                   "its PT_LOAD segment",
                                   hex(l.meta_size - 2)));
         }},
        {"versym index no version declares", Base::elf64,
         [](ElfImage& image) {
             L l = image.layout();
             size_t index = 0;
             while (l.symbol_names[index] != "m1") ++index;
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
         [dyn](ElfImage& image) {
             L l = image.layout();
             image.patch_u32(l.gnu_hash_offset + 8, 0x10000000);
             return at(dyn(l, testing::k_dt_gnu_hash),
                       fmt::format("GNU hash table ({} bytes at {}) runs past the end of the file "
                                   "({} bytes)",
                                   16 + 0x80000000ULL + 4, hex(l.gnu_hash_offset),
                                   image.bytes().size()));
         }},
    };
}

// Reads `bytes` both ways without asserting anything but survival; returns whether it parsed.
bool survive(const std::vector<std::byte>& bytes) {
    util::MemorySource source("fuzz.so", bytes);
    auto direct = elf::read_elf(source, ReadOptions{true});
    BufferStream stream(bytes);
    auto streamed = elf::read_elf_stream(stream, bytes.size(), "fuzz.so", ReadOptions{true});
    std::string a = direct ? std::string("ok") : direct.error().text();
    std::string b = streamed ? std::string("ok") : streamed.error().text();
    if (a != b && b.find("skipped by the streaming") == std::string::npos) {
        MESSAGE("disagree: " << a << " | " << b);
    }
    return direct.ok() && streamed.ok();
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

            BufferStream stream(image.bytes());
            auto streamed =
                elf::read_elf_stream(stream, image.bytes().size(), "m.so", ReadOptions{true});
            REQUIRE_FALSE(streamed.ok());
            CHECK(streamed.error().text() == expected);
        }
    }

    TEST_CASE("survives every single-byte flip in the first 4 KiB and random mutations") {
        std::vector<std::vector<std::byte>> objects;
        objects.push_back(testing::build_elf(base_spec()));
        ElfSpec big_endian = base_spec(elf::ElfClass::elf32);
        big_endian.byte_order = elf::ByteOrder::big;
        big_endian.gnu_hash = true;
        objects.push_back(testing::build_elf(big_endian));
        testing::TempDir dir;
        objects.push_back(testing::compile_c(
            dir.path(), "libfuzz.so",
            "#include <stdio.h>\nint f(void) { return puts(\"f\"); }\n",
            "-shared -fPIC -Wl,-soname,libfuzz.so.1 -Wl,-rpath,'$ORIGIN' -Wl,--hash-style=both"));

        size_t parsed = 0;
        size_t runs = 0;
        for (const auto& object : objects) {
            REQUIRE(survive(object));
            std::vector<std::byte> bytes = object;
            for (size_t i = 0; i < std::min<size_t>(bytes.size(), 4096); ++i) {
                for (std::byte mask : {std::byte{0xff}, std::byte{0x01}}) {
                    bytes[i] ^= mask;
                    if (survive(bytes)) ++parsed;
                    ++runs;
                    bytes[i] ^= mask;
                }
            }
        }
        std::mt19937 random(20240611);
        for (int round = 0; round < 3000; ++round) {
            std::vector<std::byte> bytes = objects[static_cast<size_t>(round) % objects.size()];
            std::uniform_int_distribution<size_t> position(0, bytes.size() - 1);
            std::uniform_int_distribution<int> count(1, 8);
            std::uniform_int_distribution<int> value(0, 255);
            for (int n = count(random); n > 0; --n) {
                bytes[position(random)] = static_cast<std::byte>(value(random));
            }
            if (round % 7 == 0) bytes.resize(position(random));
            if (survive(bytes)) ++parsed;
            ++runs;
        }
        // Many mutations hit bytes the reader never looks at, so plenty still parse.
        CHECK(parsed > 0);
        CHECK(parsed < runs);
    }
}
