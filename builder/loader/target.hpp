// The machine the root will run on, as far as the loader cares: ELF class and machine, the
// interpreter, $LIB, the default directories, the ld.so.cache flags, and the CPU-dependent parts
// (glibc-hwcaps levels, $PLATFORM) that are unknown unless the user names them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "elf/elf_info.hpp"
#include "fs/file_tree.hpp"
#include "util/result.hpp"

namespace rootlock::loader {

struct Target {
    elf::ElfClass elf_class = elf::ElfClass::elf64;
    uint16_t machine = elf::k_machine_x86_64;
    std::string interpreter;                 // "/lib64/ld-linux-x86-64.so.2"
    std::string lib_token;                   // what $LIB expands to: "lib/x86_64-linux-gnu"
    std::vector<std::string> default_dirs;   // the trusted directories, in search order
    int32_t cache_flags = 0;                 // ld.so.cache entry flags this target accepts
    std::vector<std::string> hwcaps;         // supported glibc-hwcaps levels, highest first
    std::optional<std::string> platform;     // AT_PLATFORM ($PLATFORM); unknown statically
    std::vector<std::string> legacy_hwcaps;  // glibc 2.36 legacy subdirectories ("avx512_1", ...)
};

struct TargetOverrides {
    std::vector<std::string> hwcaps;
    std::optional<std::string> platform;
};

// The target for a machine rootlock knows (x86_64, aarch64, i386), Debian's multiarch layout.
util::Result<Target> target_for_machine(elf::ElfClass elf_class, uint16_t machine);

// Reads the target from the root itself (the class and machine of its /bin/sh, else of its
// interpreter), never from the host running rootlock.
util::Result<Target> detect_target(const fs::FileTree& tree, const TargetOverrides& overrides);

// The subdirectories glibc 2.36 tries inside every search directory before the directory
// itself, in order ("glibc-hwcaps/x86-64-v3", ..., legacy "tls/haswell/x86_64", ...).
std::vector<std::string> hwcaps_subdirs(const Target& target);

}  // namespace rootlock::loader
