// Named sections and ELF notes, found through the section header table and .shstrtab: what the
// program headers do not say (a fatbin's .nv_fatbin, a compat libcuda's note), read header-only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "elf/elf_info.hpp"
#include "util/byte_source.hpp"
#include "util/result.hpp"

namespace rootlock::elf {

// Section types the readers built on this look at.
inline constexpr uint32_t k_sht_progbits = 1;
inline constexpr uint32_t k_sht_strtab = 3;
inline constexpr uint32_t k_sht_note = 7;
inline constexpr uint32_t k_sht_nobits = 8;

// Where a section's bytes lie in the file. A SHT_NOBITS section (.bss) occupies no file bytes:
// its size is reported as 0, so that [offset, offset + size) is always inside the file.
struct SectionRange {
    uint64_t offset = 0;
    uint64_t size = 0;
    uint32_t type = 0;
    uint64_t align = 0;          // sh_addralign: notes are padded to 8 where it is 8
    uint64_t header_offset = 0;  // where its section header is, for locating errors about it
    ByteOrder byte_order = ByteOrder::little;  // the object's, which its notes are written in
};

// The first section named `name` (names may repeat in relocatable objects; readelf and Go's
// debug/elf also take the first), or nullopt when the object has no section header table, no
// section name table, or no such section. Reads the ELF header, the section headers and the names
// in small chunks, never the sections themselves. A malformed table is an error
// "name@0xOFF: message" (the header table past the end of the file, e_shstrndx out of range, a
// name index past .shstrtab, the found section past the end of the file).
util::Result<std::optional<SectionRange>> find_section(const util::ByteSource& source,
                                                       std::string_view name);

// The same for several names in one pass over the table: one answer per name, in order.
util::Result<std::vector<std::optional<SectionRange>>> find_sections(
    const util::ByteSource& source, std::span<const std::string_view> names);

// Where the section header table lies, told by the ELF header alone: what a reader that sees a
// file once, front to back, must know before it passes the table (the names of the sections come
// from .shstrtab, which linkers write just before it). `count` is e_shnum as written (0 under
// extended numbering). nullopt when `header` is not a whole ELF header or e_shoff is 0.
struct SectionTablePlace {
    uint64_t offset = 0;
    uint64_t entry_size = 0;
    uint64_t count = 0;
};
std::optional<SectionTablePlace> section_table_place(std::span<const std::byte> header);

// One ELF note: Elf32_Nhdr and Elf64_Nhdr are the same three 32-bit words (namesz, descsz, type)
// in the object's byte order, then the name and the descriptor, each starting at a multiple of the
// note alignment.
struct ElfNote {
    std::string owner;  // the name without its terminating NUL(s): "GNU", "NVIDIA Corporation"
    uint32_t type = 0;
    std::vector<std::byte> descriptor;
    uint64_t offset = 0;  // file offset of the note header
};

enum class NoteReading {
    strict,
    // A descriptor that runs past the end of the section is cut there rather than refused. NVIDIA's
    // own Orin compat libcuda declares two bytes more than its note section holds, and the
    // enable-cuda-compat hook reads it anyway (nvidia-container-toolkit testdata/compat).
    clip_descriptor,
};

// Note sections are tiny (a build id, an ABI tag, a JSON line); one larger than this is refused
// rather than read into memory.
inline constexpr uint64_t k_max_note_section = uint64_t{1} << 20;

// The notes of `section` (found with find_section; any type, SHT_NOTE expected), in order. The
// alignment is 4 bytes, or 8 where the section's is 8 (binutils reads .note.gnu.property so): the
// descriptor starts at align(12 + namesz) from the note, the next note at align(that + descsz).
// Errors: "name@0xOFF: message" at the note at fault (a truncated
// header, a name or descriptor past the end of the section, a section larger than
// k_max_note_section).
util::Result<std::vector<ElfNote>> read_notes(const util::ByteSource& source,
                                              const SectionRange& section,
                                              NoteReading reading = NoteReading::strict);

}  // namespace rootlock::elf
