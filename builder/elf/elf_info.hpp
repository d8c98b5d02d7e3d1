// The plain data the ELF reader extracts from one object: identity, dynamic tags, version needs
// and definitions, and (on request) the dynamic symbol table. No behaviour beyond small queries.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "elf/symbol_table.hpp"

namespace rootlock::elf {

enum class ElfClass : uint8_t { elf32 = 1, elf64 = 2 };
enum class ByteOrder : uint8_t { little = 1, big = 2 };

// e_machine values rootlock names; others are kept numerically.
inline constexpr uint16_t k_machine_386 = 3;
inline constexpr uint16_t k_machine_arm = 40;
inline constexpr uint16_t k_machine_x86_64 = 62;
inline constexpr uint16_t k_machine_aarch64 = 183;
inline constexpr uint16_t k_machine_riscv = 243;
inline constexpr uint16_t k_machine_ppc64 = 21;
inline constexpr uint16_t k_machine_s390 = 22;

// e_type values.
inline constexpr uint16_t k_type_rel = 1;
inline constexpr uint16_t k_type_exec = 2;
inline constexpr uint16_t k_type_dyn = 3;
inline constexpr uint16_t k_type_core = 4;

// DT_FLAGS_1 bits the loader model uses.
inline constexpr uint32_t k_df_1_now = 0x00000001;
inline constexpr uint32_t k_df_1_nodeflib = 0x00000800;
inline constexpr uint32_t k_df_1_pie = 0x08000000;
// DT_FLAGS bits.
inline constexpr uint32_t k_df_bind_now = 0x00000008;

// Symbol binding and type (st_info halves).
inline constexpr uint8_t k_stb_local = 0;
inline constexpr uint8_t k_stb_global = 1;
inline constexpr uint8_t k_stb_weak = 2;
inline constexpr uint8_t k_stt_notype = 0;
inline constexpr uint8_t k_stt_object = 1;
inline constexpr uint8_t k_stt_func = 2;
inline constexpr uint8_t k_stt_tls = 6;
inline constexpr uint8_t k_stt_gnu_ifunc = 10;

// One version an object needs from one file (a DT_VERNEED auxiliary entry).
struct NeededVersion {
    std::string name;  // e.g. "GLIBC_2.34"
    uint32_t hash = 0;
    uint16_t index = 0;  // vna_other: the versym index symbols use to refer to it
    bool weak = false;   // VER_FLG_WEAK
};

// All versions an object needs from one file (a DT_VERNEED entry).
struct VersionNeed {
    std::string file;  // the soname the versions are needed from, e.g. "libc.so.6"
    std::vector<NeededVersion> versions;
};

// One version an object defines (a DT_VERDEF entry; the first aux name is the version).
struct VersionDef {
    std::string name;    // e.g. "GLIBC_2.34", or the object's own soname for the base entry
    uint16_t index = 0;  // vd_ndx
    uint16_t flags = 0;  // VER_FLG_BASE = 1, VER_FLG_WEAK = 2
    uint32_t hash = 0;
    std::vector<std::string> parents;  // further aux names (predecessors)
    bool is_base() const { return (flags & 1U) != 0; }
};

struct ElfInfo {
    ElfClass elf_class = ElfClass::elf64;
    ByteOrder byte_order = ByteOrder::little;
    uint8_t os_abi = 0;
    uint16_t type = 0;         // k_type_*
    uint16_t machine = 0;      // k_machine_*
    bool has_dynamic = false;  // a PT_DYNAMIC segment was present

    std::string interpreter;          // PT_INTERP, empty when absent
    std::string soname;               // DT_SONAME, empty when absent
    std::vector<std::string> needed;  // DT_NEEDED, in order
    // DT_RPATH and DT_RUNPATH, split on ':' (empty elements kept: glibc treats them as ".").
    std::optional<std::vector<std::string>> rpath;
    std::optional<std::vector<std::string>> runpath;
    uint32_t flags = 0;    // DT_FLAGS
    uint32_t flags_1 = 0;  // DT_FLAGS_1

    std::vector<VersionNeed> version_needs;
    std::vector<VersionDef> version_defs;
    SymbolTable symbols;  // only filled when ReadOptions::symbols is set (index 0, the null
                          // symbol, is not included)
    bool symbols_read = false;
    // The relocation tables were read, so Symbol::lazy is known (false: treat every reference
    // as bound at load, which is what a missing symbol does unless it is a PLT-only call).
    bool relocations_read = false;

    bool nodeflib() const { return (flags_1 & k_df_1_nodeflib) != 0; }
    bool bind_now() const { return (flags_1 & k_df_1_now) != 0 || (flags & k_df_bind_now) != 0; }
    bool defines_version(const std::string& version) const;
};

// "x86_64", "aarch64", "i386", ... or "machine 1234" for machines rootlock does not name.
std::string machine_name(uint16_t machine);
// "ELF64" / "ELF32", as ld.so's "wrong ELF class: ELFCLASS32" message and reports spell them.
std::string class_name(ElfClass elf_class);

}  // namespace rootlock::elf
