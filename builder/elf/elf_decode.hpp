// Internal to the ELF reader: explicit byte decoding for both classes and byte orders, the parsed
// headers, and the phase functions read_elf and read_elf_stream share so the two cannot disagree.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "elf/elf_info.hpp"
#include "elf/elf_reader.hpp"
#include "util/byte_buffer.hpp"
#include "util/byte_source.hpp"
#include "util/result.hpp"

namespace rootlock::elf::detail {

// Program header types and flags the reader looks at.
inline constexpr uint32_t k_pt_load = 1;
inline constexpr uint32_t k_pt_dynamic = 2;
inline constexpr uint32_t k_pt_interp = 3;
inline constexpr uint32_t k_pf_x = 1;

// The kernel refuses a PT_INTERP longer than PATH_MAX; so do we, which also bounds the read.
inline constexpr uint64_t k_max_interp = 4096;
// The size of the smallest ELF identification (e_ident), below which nothing can be classified.
inline constexpr uint64_t k_ident_size = 16;

// Reads integers of one class and byte order from raw bytes; callers bounds-check first.
class Codec {
  public:
    Codec(ElfClass elf_class, ByteOrder order) : m_class(elf_class), m_order(order) {}

    ElfClass elf_class() const { return m_class; }
    ByteOrder order() const { return m_order; }
    bool is64() const { return m_class == ElfClass::elf64; }

    uint16_t u16(const std::byte* p) const { return static_cast<uint16_t>(load(p, 2)); }
    uint32_t u32(const std::byte* p) const { return static_cast<uint32_t>(load(p, 4)); }
    uint64_t u64(const std::byte* p) const { return load(p, 8); }
    // An address, offset or size field: 4 bytes in ELF32, 8 in ELF64.
    uint64_t word(const std::byte* p) const { return load(p, word_size()); }

    size_t word_size() const { return is64() ? 8 : 4; }
    size_t ehdr_size() const { return is64() ? 64 : 52; }
    size_t phdr_size() const { return is64() ? 56 : 32; }
    size_t shdr_size() const { return is64() ? 64 : 40; }
    size_t dyn_size() const { return is64() ? 16 : 8; }
    size_t sym_size() const { return is64() ? 24 : 16; }
    // Addresses wrap at the class width, as pointer arithmetic does in the loader.
    uint64_t address_mask() const { return is64() ? ~uint64_t{0} : uint64_t{0xffffffff}; }

  private:
    uint64_t load(const std::byte* p, size_t width) const {
        uint64_t value = 0;
        for (size_t i = 0; i < width; ++i) {
            size_t index = m_order == ByteOrder::little ? width - 1 - i : i;
            value = (value << 8) | std::to_integer<uint64_t>(p[index]);
        }
        return value;
    }

    ElfClass m_class;
    ByteOrder m_order;
};

// One program header, plus where it sits in the file (for locating errors about it).
struct Segment {
    uint32_t type = 0;
    uint32_t flags = 0;
    uint64_t offset = 0;
    uint64_t vaddr = 0;
    uint64_t filesz = 0;
    uint64_t memsz = 0;
    uint64_t header_offset = 0;
};

// The ELF header fields the reader uses and the program header table.
struct Headers {
    Codec codec{ElfClass::elf64, ByteOrder::little};
    uint8_t os_abi = 0;
    uint16_t type = 0;
    uint16_t machine = 0;
    uint64_t phoff = 0;
    uint16_t phnum = 0;
    std::vector<Segment> segments;

    // The first PT_INTERP (the kernel takes the first) and the last PT_DYNAMIC (ld.so takes the
    // last, overwriting l_ld on each); nullptr when absent.
    const Segment* interp() const;
    const Segment* dynamic() const;
};

// One dynamic entry and its file offset.
struct DynEntry {
    uint64_t tag = 0;
    uint64_t value = 0;
    uint64_t offset = 0;
};

// Phase 1: e_ident, the ELF header and the program header table.
util::Result<Headers> decode_headers(const util::ByteSource& source);

// Phase 2: everything else (PT_INTERP, the dynamic section and what its tags point at).
util::Result<ElfInfo> decode_object(const util::ByteSource& source, const Headers& headers,
                                    const ReadOptions& options);

// Shared by the phases: the object, its decoder, its PT_LOAD segments, and error helpers.
class Context {
  public:
    Context(const util::ByteSource& source, const Headers& headers);

    const util::ByteSource& source() const { return m_source; }
    const Codec& codec() const { return m_headers.codec; }
    const Headers& headers() const { return m_headers; }
    uint64_t size() const { return m_source.size(); }

    // "name@0xOFF: message".
    util::Error fail(uint64_t offset, std::string message) const;

    // Where a virtual address lives in the file: its offset and the end of the file bytes of the
    // PT_LOAD segment holding it (the limit for anything read from there).
    struct Placement {
        uint64_t vaddr = 0;
        uint64_t offset = 0;
        uint64_t limit = 0;
        const Segment* segment = nullptr;
    };
    // Fails "<what> address 0x.. is not in any PT_LOAD segment" located at `where`.
    util::Result<Placement> place(uint64_t vaddr, uint64_t where, std::string_view what) const;
    // Fails when `length` bytes at `placement` leave the file or the segment, located at `where`.
    util::Status check_fits(const Placement& placement, uint64_t length, uint64_t where,
                            std::string_view what) const;
    // Reads `length` bytes at `offset` in one read (callers bounds-check first).
    util::Result<util::ByteBuffer> read(uint64_t offset, uint64_t length) const;

  private:
    const util::ByteSource& m_source;
    const Headers& m_headers;
};

// Serves small records (dynamic entries, version chains, hash chains) from chunked bulk reads of
// one region, so walking a chain costs one read rather than one per field.
class ChunkReader {
  public:
    // Nothing at or past `limit` is ever read.
    ChunkReader(const util::ByteSource& source, uint64_t limit)
        : m_source(source), m_limit(limit) {}
    // `length` bytes at `offset`; the caller has checked offset + length <= limit.
    util::Result<const std::byte*> at(uint64_t offset, size_t length);

  private:
    static constexpr uint64_t k_chunk = 16 * 1024;
    const util::ByteSource& m_source;
    uint64_t m_limit;
    uint64_t m_base = 0;
    util::ByteBuffer m_bytes;
};

// The dynamic string table, read in one piece.
class StringTable {
  public:
    StringTable() = default;
    StringTable(const Context* context, uint64_t offset, util::ByteBuffer bytes)
        : m_context(context), m_offset(offset), m_bytes(std::move(bytes)) {}

    bool present() const { return m_context != nullptr; }
    // The NUL-terminated string at `index`. Fails "<what> string index 0x.. is past the end of
    // the string table" located at `where`, or "unterminated string ..." located at the string.
    util::Result<std::string_view> get(uint64_t index, uint64_t where, std::string_view what) const;

  private:
    const Context* m_context = nullptr;
    uint64_t m_offset = 0;
    util::ByteBuffer m_bytes;
};

// Dynamic tags, by number, with the names errors use.
inline constexpr uint64_t k_dt_null = 0;
inline constexpr uint64_t k_dt_pltrelsz = 2;
inline constexpr uint64_t k_dt_rela = 7;
inline constexpr uint64_t k_dt_relasz = 8;
inline constexpr uint64_t k_dt_rel = 17;
inline constexpr uint64_t k_dt_relsz = 18;
inline constexpr uint64_t k_dt_pltrel = 20;
inline constexpr uint64_t k_dt_jmprel = 23;
inline constexpr uint64_t k_dt_relacount = 0x6ffffff9;
inline constexpr uint64_t k_dt_relcount = 0x6ffffffa;
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

// The dynamic section: its entries up to DT_NULL, with the last entry of each singleton tag
// (ld.so's get-dynamic-info overwrites l_info[tag], so the last one wins).
struct DynamicTable {
    uint64_t offset = 0;
    std::vector<DynEntry> entries;
    const DynEntry* last(uint64_t tag) const;
};

// The versions an object defines and needs, indexed the way versym entries refer to them.
struct VersionIndex {
    std::vector<std::string_view> names;  // by index & 0x7fff; empty view where unset
    std::vector<bool> present;
    void add(uint16_t index, std::string_view name);
    const std::string_view* find(uint16_t index) const;
};

// elf_versions.cpp: DT_VERNEED and DT_VERDEF chains into `info`, then the index over both.
util::Status read_version_needs(const Context& context, const DynamicTable& dynamic,
                                const StringTable& strings, ElfInfo& info);
util::Status read_version_defs(const Context& context, const DynamicTable& dynamic,
                               const StringTable& strings, ElfInfo& info);
VersionIndex index_versions(const ElfInfo& info);

// elf_symbols.cpp: the dynamic symbol table (count from DT_HASH or DT_GNU_HASH) into `info`.
util::Status read_symbols(const Context& context, const DynamicTable& dynamic,
                          const StringTable& strings, const VersionIndex& versions, ElfInfo& info);

// elf_relocations.cpp: which undefined symbols only PLT relocations name (Symbol::lazy). Best
// effort: tables it cannot read (a streaming reader skipped them) leave relocations_read false.
void read_relocation_kinds(const Context& context, const DynamicTable& dynamic, ElfInfo& info);

// "DT_NEEDED", "DT_STRTAB", ... for messages.
std::string tag_name(uint64_t tag);

}  // namespace rootlock::elf::detail
