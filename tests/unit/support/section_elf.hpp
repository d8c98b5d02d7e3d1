// A test-only ELF writer for section-level readers: an ELF header, the sections' bytes and a
// section header table with .shstrtab, in any class and byte order, plus where each part went.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "elf/elf_info.hpp"

namespace rootlock::testing {

// One section to write. Its bytes are placed at the next multiple of `align` (at least 1).
struct SectionSpec {
    std::string name;
    uint32_t type = 1;  // SHT_PROGBITS
    std::vector<std::byte> bytes;
    uint64_t align = 8;
    // SHT_NOBITS and tests of lying headers: sh_size written instead of bytes.size().
    std::optional<uint64_t> declared_size;
};

struct SectionElfSpec {
    elf::ElfClass elf_class = elf::ElfClass::elf64;
    elf::ByteOrder byte_order = elf::ByteOrder::little;
    std::vector<SectionSpec> sections;
    // Write e_shnum 0 and e_shstrndx SHN_XINDEX, with the real values in section 0 (gABI's
    // extended numbering), as objects with 65280 sections or more must.
    bool extended_numbering = false;
};

// Where build_section_elf put everything (file offsets).
struct SectionElfLayout {
    uint64_t shoff = 0;
    uint64_t shentsize = 0;
    uint64_t shnum = 0;         // including section 0 and .shstrtab (the last one)
    uint64_t shoff_field = 0;   // e_shoff in the ELF header
    uint64_t shnum_field = 0;   // e_shnum
    uint64_t strndx_field = 0;  // e_shstrndx
    uint64_t shstrtab_offset = 0;
    uint64_t shstrtab_size = 0;
    std::vector<uint64_t> data_offsets;    // per spec section, in order
    std::vector<uint64_t> header_offsets;  // per spec section (index i is section i + 1)
    uint64_t shstrtab_header = 0;
    uint64_t file_size = 0;

    // Field offsets inside section header `header` (for patching): sh_name, sh_offset, sh_size.
    uint64_t name_field(uint64_t header) const { return header; }
    uint64_t offset_field(uint64_t header) const { return header + (shentsize == 64 ? 24 : 16); }
    uint64_t size_field(uint64_t header) const { return header + (shentsize == 64 ? 32 : 20); }
};

struct SectionElf {
    std::vector<std::byte> bytes;
    SectionElfLayout layout;
    elf::ElfClass elf_class = elf::ElfClass::elf64;
    elf::ByteOrder byte_order = elf::ByteOrder::little;

    // Writes the low `width` bytes of `value` at `offset` in the object's byte order.
    void patch(uint64_t offset, uint64_t value, size_t width);
    // An address/offset/size field: 4 bytes in ELF32, 8 in ELF64.
    void patch_word(uint64_t offset, uint64_t value);
};

// An ET_DYN object for x86-64 (or i386 for ELF32) without program headers: ELF header, then the
// sections' bytes in order, then .shstrtab, then the section header table (section 0, the
// specs, .shstrtab last).
SectionElf build_section_elf(const SectionElfSpec& spec);

// Little-endian bytes for builders: append `width` bytes of `value`.
void append_le(std::vector<std::byte>& out, uint64_t value, size_t width);
// Bytes of a string, without a terminating NUL.
std::vector<std::byte> section_text_bytes(std::string_view text);

// One ELF note as a linker writes it: the three words in `order`, the name with its NUL, and the
// descriptor, each padded to `align`.
std::vector<std::byte> elf_note(std::string_view owner, uint32_t type,
                                const std::vector<std::byte>& descriptor,
                                elf::ByteOrder order = elf::ByteOrder::little, uint64_t align = 4);

}  // namespace rootlock::testing
