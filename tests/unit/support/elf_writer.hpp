// A test-only ELF writer: minimal but valid objects of any class, byte order, machine and type,
// with the dynamic metadata rootlock reads, plus a layout and patch hooks for corrupting them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "elf/elf_info.hpp"
#include "util/byte_source.hpp"

namespace rootlock::testing {

// Dynamic tags the writer emits (kept apart from the reader's own table on purpose: the writer is
// an independent implementation, so a shared mistake cannot hide).
inline constexpr uint64_t k_dt_null = 0;
inline constexpr uint64_t k_dt_needed = 1;
inline constexpr uint64_t k_dt_hash = 4;
inline constexpr uint64_t k_dt_strtab = 5;
inline constexpr uint64_t k_dt_symtab = 6;
inline constexpr uint64_t k_dt_strsz = 10;
inline constexpr uint64_t k_dt_syment = 11;
inline constexpr uint64_t k_dt_soname = 14;
inline constexpr uint64_t k_dt_rpath = 15;
inline constexpr uint64_t k_dt_runpath = 29;
inline constexpr uint64_t k_dt_flags = 30;
inline constexpr uint64_t k_dt_gnu_hash = 0x6ffffef5;
inline constexpr uint64_t k_dt_versym = 0x6ffffff0;
inline constexpr uint64_t k_dt_flags_1 = 0x6ffffffb;
inline constexpr uint64_t k_dt_verdef = 0x6ffffffc;
inline constexpr uint64_t k_dt_verdefnum = 0x6ffffffd;
inline constexpr uint64_t k_dt_verneed = 0x6ffffffe;
inline constexpr uint64_t k_dt_verneednum = 0x6fffffff;
inline constexpr uint64_t k_dt_pltrelsz = 2;
inline constexpr uint64_t k_dt_rela = 7;
inline constexpr uint64_t k_dt_relasz = 8;
inline constexpr uint64_t k_dt_relaent = 9;
inline constexpr uint64_t k_dt_pltrel = 20;
inline constexpr uint64_t k_dt_jmprel = 23;

// How a symbol is referenced by the object's relocations (64-bit objects only): through the PLT
// (R_X86_64_JUMP_SLOT in DT_JMPREL, bound lazily) or by address or as data (R_X86_64_GLOB_DAT in
// DT_RELA, bound at load).
enum class Relocation : uint8_t { none, plt, data };

// One dynamic symbol. version_index: 0 local, 1 global, else the index of a version definition
// or needed version; hidden sets versym bit 15 (name@VER rather than name@@VER).
struct SymbolSpec {
    std::string name;
    bool defined = true;
    uint8_t binding = elf::k_stb_global;
    uint8_t type = elf::k_stt_func;
    uint16_t version_index = 1;
    bool hidden = false;
    Relocation relocation = Relocation::none;
};

// A version the object defines. Indices start at 2; the writer puts the base entry (index 1,
// VER_FLG_BASE, named after the soname) first unless one with index 1 is given.
struct VersionDefSpec {
    std::string name;
    uint16_t index = 2;
    uint16_t flags = 0;
    std::vector<std::string> parents;
};

struct NeededVersionSpec {
    std::string name;
    uint16_t index = 2;  // vna_other, unique across the object's definitions and needs
    bool weak = false;
};

struct VersionNeedSpec {
    std::string file;
    std::vector<NeededVersionSpec> versions;
};

struct ElfSpec {
    elf::ElfClass elf_class = elf::ElfClass::elf64;
    elf::ByteOrder byte_order = elf::ByteOrder::little;
    uint16_t machine = elf::k_machine_x86_64;
    uint16_t type = elf::k_type_dyn;
    uint8_t os_abi = 0;

    std::string interpreter;      // PT_INTERP when not empty
    bool dynamic = true;          // PT_DYNAMIC and everything it points at
    bool program_headers = true;  // false: no program headers at all (an ET_REL-like object)
    std::string soname;
    std::vector<std::string> needed;
    std::optional<std::string> rpath;
    std::optional<std::string> runpath;
    uint32_t flags = 0;
    uint32_t flags_1 = 0;

    std::vector<VersionDefSpec> version_defs;
    std::vector<VersionNeedSpec> version_needs;
    std::vector<SymbolSpec> symbols;
    bool sysv_hash = true;  // DT_HASH
    bool gnu_hash = false;  // DT_GNU_HASH (symbols are then ordered by bucket)

    uint64_t base_address = 0;  // vaddr = base_address + file offset
    uint64_t text_size = 16;    // bytes of zeros in the executable segment
    // false: one R+X PT_LOAD holds the headers, the metadata and the text, as with
    // -z noseparate-code (then meta_size covers the text too, and text_phdr is 0).
    bool separate_code = true;
    // Puts the hash tables and .dynstr in an extra PT_LOAD after the dynamic segment, the way
    // patchelf places the sections it rewrites (the GNU hash table first, then the strings).
    bool trailing_metadata = false;
};

// Where build_elf put everything (file offsets), for tests that corrupt a structure.
struct ElfLayout {
    uint64_t ehdr_size = 0;
    uint64_t phoff = 0;
    uint64_t phentsize = 0;
    uint64_t phnum = 0;
    uint64_t interp_phdr = 0;  // file offsets of program headers (0 when absent)
    uint64_t meta_phdr = 0;    // the first, read-only PT_LOAD
    uint64_t text_phdr = 0;
    uint64_t data_phdr = 0;  // the PT_LOAD holding the dynamic section
    uint64_t trailing_phdr = 0;
    uint64_t dynamic_phdr = 0;

    uint64_t interp_offset = 0;
    uint64_t dynamic_offset = 0;
    uint64_t dynamic_entry_size = 0;
    std::vector<std::pair<uint64_t, uint64_t>> dynamic_entries;  // (tag, offset), DT_NULL last
    uint64_t dynstr_offset = 0;
    uint64_t dynstr_size = 0;
    std::map<std::string, uint64_t> string_index;  // string -> its index in .dynstr
    uint64_t hash_offset = 0;
    uint64_t gnu_hash_offset = 0;
    uint64_t dynsym_offset = 0;
    uint64_t sym_entry_size = 0;
    std::vector<std::string> symbol_names;  // in .dynsym order, [0] is the null symbol
    uint64_t versym_offset = 0;
    uint64_t rela_offset = 0;               // DT_RELA entries (Relocation::data), 0 when none
    uint64_t jmprel_offset = 0;             // DT_JMPREL entries (Relocation::plt), 0 when none
    std::vector<uint64_t> verneed_entries;  // each Elf_Verneed
    std::vector<uint64_t> vernaux_entries;  // each Elf_Vernaux, in file order
    std::vector<uint64_t> verdef_entries;
    std::vector<uint64_t> verdaux_entries;
    uint64_t meta_size = 0;  // file bytes of the first PT_LOAD (headers and metadata)
    uint64_t text_offset = 0;
    uint64_t text_size = 0;
    uint64_t base_address = 0;
    uint64_t file_size = 0;

    // The offset of the first dynamic entry with `tag`; throws std::out_of_range when none.
    uint64_t dynamic_entry(uint64_t tag) const;
    // The offset of program header `index`.
    uint64_t phdr(size_t index) const { return phoff + index * phentsize; }
    // The virtual address the writer gave file offset `offset` (dynamic tags hold these).
    uint64_t vaddr(uint64_t offset) const { return base_address + offset; }
    // The offset of symbol `name` in .dynsym; throws std::out_of_range when none.
    uint64_t symbol(std::string_view name) const;
};

// A built object plus hooks to corrupt it after layout, in its own byte order.
class ElfImage {
  public:
    ElfImage(std::vector<std::byte> bytes, ElfLayout layout, elf::ElfClass elf_class,
             elf::ByteOrder byte_order);

    std::vector<std::byte>& bytes() { return m_bytes; }
    const std::vector<std::byte>& bytes() const { return m_bytes; }
    const ElfLayout& layout() const { return m_layout; }

    // Writes the low `width` bytes (1, 2, 4 or 8) of `value` at `offset`.
    void patch(uint64_t offset, uint64_t value, size_t width);
    void patch_u8(uint64_t offset, uint64_t value);
    void patch_u16(uint64_t offset, uint64_t value);
    void patch_u32(uint64_t offset, uint64_t value);
    void patch_u64(uint64_t offset, uint64_t value);
    // An address/offset/size field: 4 bytes in ELF32, 8 in ELF64.
    void patch_word(uint64_t offset, uint64_t value);
    // Sets d_val of the first dynamic entry with `tag`.
    void patch_dynamic(uint64_t tag, uint64_t value);
    void truncate(uint64_t size);

  private:
    std::vector<std::byte> m_bytes;
    ElfLayout m_layout;
    elf::ElfClass m_class;
    elf::ByteOrder m_order;
};

ElfImage build_elf_image(const ElfSpec& spec);
std::vector<std::byte> build_elf(const ElfSpec& spec, ElfLayout* layout = nullptr);

// A forward-only stream over bytes the caller keeps alive, in reads of at most `chunk` bytes
// (odd sizes split every structure across reads, as archive readers do).
class MemoryStream final : public util::ByteStream {
  public:
    explicit MemoryStream(const std::vector<std::byte>& bytes, size_t chunk = 4093)
        : m_bytes(bytes), m_chunk(chunk) {}
    util::Result<size_t> read(std::span<std::byte> out) override;

  private:
    const std::vector<std::byte>& m_bytes;
    size_t m_chunk;
    size_t m_position = 0;
};

// Objects from the host toolchain, for tests that need real linker output: writes `source` to
// `dir`/`output`.c, runs `gcc <flags> -o dir/output dir/output.c`, and returns the output's bytes.
// Throws std::runtime_error with gcc's messages when it fails.
std::vector<std::byte> compile_c(const std::string& dir, const std::string& output,
                                 std::string_view source, const std::string& flags);
// The whole content of a host file; throws std::runtime_error when unreadable.
std::vector<std::byte> read_host_file(const std::string& path);

// The SysV ELF hash (vd_hash, vna_hash, DT_HASH) and the GNU hash (DT_GNU_HASH).
uint32_t elf_hash(std::string_view name);
uint32_t gnu_hash(std::string_view name);

}  // namespace rootlock::testing
