// What glibc 2.36's ldconfig would put in ld.so.cache for a root without one: the conf's and the
// built-in directories scanned in order, with their hwcaps subdirectories, keyed by SONAME.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "elf/elf_info.hpp"
#include "fs/file_tree.hpp"
#include "loader/ld_so_cache.hpp"
#include "util/result.hpp"

namespace rootlock::loader {

struct ScanOptions {
    std::string conf_path = "/etc/ld.so.conf";
    // ldconfig's built-in directories, scanned after the conf's. Debian 12 x86_64's ldconfig
    // adds SLIBDIR and LIBDIR, then Debian's /lib and /usr/lib (`ldconfig -v` shows them as
    // "<builtin>"); libc6's conf names the first two anyway.
    std::vector<std::string> system_directories = {"/lib/x86_64-linux-gnu",
                                                   "/usr/lib/x86_64-linux-gnu", "/lib", "/usr/lib"};
    // The machine and class the target's ldconfig was built for: x86_64/ELF64, i386/ELF32 or
    // aarch64/ELF64. It decides which objects are cached and with which flags.
    uint16_t machine = elf::k_machine_x86_64;
    elf::ElfClass elf_class = elf::ElfClass::elf64;
    std::string generator;  // copied into the result's generator
};

// The cache ldconfig would write, entries in its order with glibc-hwcaps indices assigned, so
// that write_ld_so_cache(result.entries) reproduces its bytes. Not modelled: the "=TYPE" suffix of
// conf lines (it only retypes plain-ELF i386 objects), the x86 ISA level of glibc-hwcaps
// objects (0 here; Debian builds carry none), names of empty glibc-hwcaps subdirectories (ldconfig
// interns them into the string table), and readdir order where ldconfig's own order depends on it
// (only sonames equal under cache_libcmp but spelled differently). Errors come from the conf only.
util::Result<LdSoCache> simulate_ldconfig(const fs::FileTree& tree, const ScanOptions& options);

// glibc's _dl_is_dso: "lib*.so*", "ld-*.so*", "ld.so.*", "ld64.so.*".
bool looks_like_dso(std::string_view name);

// The cache flags ldconfig built for `ldconfig_machine` gives `info`, or nullopt when it skips the
// object (not ET_DYN, no dynamic section, a machine it does not know). x86 ldconfig (i386 and
// x86_64 alike) takes x86_64 (0x0303), x32 (0x0803) and i386 (3 when it names libc.so.6,
// libm.so.6 or a glibc interpreter, else 1); aarch64 takes AArch64 objects (0x0a03).
std::optional<int32_t> ldconfig_flags(const elf::ElfInfo& info, uint16_t ldconfig_machine);

// ldconfig's path_hwcap: the legacy hwcap bits the trailing hwcap/platform/"tls" components of
// `path` stand for ("/lib/tls/x86_64" -> bit 63 + bit 1 on x86).
uint64_t legacy_path_hwcap(std::string_view path, uint16_t ldconfig_machine);

}  // namespace rootlock::loader
