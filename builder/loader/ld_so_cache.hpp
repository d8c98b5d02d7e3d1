// ld.so.cache: glibc 2.36's binary cache read bounds-checked (old header tolerated), written byte
// for byte as ldconfig writes it, and looked up as ld.so does, since ld.so reads only this file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "util/result.hpp"

namespace rootlock::loader {

// Entry flags (glibc's FLAG_*): the low byte is the library type, the next byte the ABI.
inline constexpr int32_t k_cache_flag_elf = 0x0001;
inline constexpr int32_t k_cache_flag_elf_libc6 = 0x0003;
inline constexpr int32_t k_cache_flag_x8664_lib64 = 0x0300;
inline constexpr int32_t k_cache_flag_x8664_libx32 = 0x0800;
inline constexpr int32_t k_cache_flag_aarch64_lib64 = 0x0a00;
// What each target's ld.so accepts (_DL_CACHE_DEFAULT_ID).
inline constexpr int32_t k_cache_flags_x86_64 = k_cache_flag_elf_libc6 | k_cache_flag_x8664_lib64;
inline constexpr int32_t k_cache_flags_aarch64 =
    k_cache_flag_elf_libc6 | k_cache_flag_aarch64_lib64;
inline constexpr int32_t k_cache_flags_i386 = k_cache_flag_elf_libc6;

// The hwcap field. With only bit 62 set in the upper half (ISA level bits aside), the low 32 bits
// index the glibc-hwcaps subdirectory names; otherwise it holds legacy hwcap bits (bit 63: tls).
inline constexpr uint64_t k_hwcap_extension = 1ULL << 62;
inline constexpr uint64_t k_hwcap_tls = 1ULL << 63;
inline constexpr uint32_t k_hwcap_isa_level_mask = 0x3ff;  // bits 32..41: the x86 ISA level

// True when `hwcap` marks a glibc-hwcaps entry (glibc's dl_cache_hwcap_extension).
bool is_hwcaps_extension(uint64_t hwcap);

struct CacheEntry {
    std::string soname;  // the key ld.so looks up
    std::string path;    // the file ld.so opens
    int32_t flags = 0;
    uint64_t hwcap = 0;  // as stored; for glibc-hwcaps entries it carries the subdirectory index
    std::string hwcaps_subdir;  // e.g. "x86-64-v3"; empty unless a glibc-hwcaps entry

    bool operator==(const CacheEntry&) const = default;
};

struct LdSoCache {
    std::vector<CacheEntry> entries;  // in file order (ldconfig's sorted order)
    std::string generator;  // the generator extension, e.g. "ldconfig (Debian GLIBC ...) ..."
};

// Parses a cache file. Every failure is one error located at "name@0xOFF".
util::Result<LdSoCache> parse_ld_so_cache(std::span<const std::byte> bytes,
                                          const std::string& name);

struct CacheWriteOptions {
    // ldconfig writes "ldconfig PKGVERSION RELEASE release version VERSION"; pass the target
    // libc6's string (read from a cache it wrote) for a byte-identical file.
    std::string generator = "rootlock";
};

// The new-format (1.1) file ldconfig 2.36 writes for these entries: sorted by
// sort_cache_entries (ties keep their order, as ldconfig's insertion keeps scan order), strings
// interned and tail-merged, the glibc-hwcaps names indexed in strcmp order, then the generator.
// The index bits of a glibc-hwcaps entry's hwcap are recomputed; its ISA level bits are kept.
std::vector<std::byte> write_ld_so_cache(const std::vector<CacheEntry>& entries,
                                         const CacheWriteOptions& options);

// glibc's _dl_cache_libcmp: runs of digits compare by value ("libx.so.10" > "libx.so.9"), a
// digit sorts after any other character, other bytes compare as x86's signed char. Digit runs
// compare exactly here, where glibc's int overflows past nine digits.
int cache_libcmp(std::string_view left, std::string_view right);

// ldconfig's entry order: soname descending by cache_libcmp, then flags descending, then
// glibc-hwcaps entries (by subdirectory name) before the rest, then more legacy hwcap bits
// first, then the larger legacy hwcap value first.
bool cache_entry_before(const CacheEntry& left, const CacheEntry& right);
void sort_cache_entries(std::vector<CacheEntry>& entries);
// Sets the index bits of every glibc-hwcaps entry's hwcap: the position of its subdirectory
// among the distinct names in strcmp order, as ldconfig numbers the extension section.
void assign_hwcaps_indices(std::vector<CacheEntry>& entries);

// What the target's ld.so accepts from the cache.
struct CacheLookupTarget {
    // _DL_CACHE_DEFAULT_ID. Equal flags are required; with the generic id 3 (i386 and others),
    // plain ELF entries (flags 1) are accepted too, as glibc's generic _dl_cache_check_flags does.
    int32_t required_flags = k_cache_flags_x86_64;
    // glibc-hwcaps subdirectories the target CPU supports, best first, e.g.
    // {"x86-64-v3", "x86-64-v2"}. An entry for one of them beats the plain entry.
    std::vector<std::string> hwcaps_supported;
    // Legacy hwcap subdirectories (tls, x86_64, haswell, ...): the CPU's AT_HWCAP bits within
    // glibc's mask, and the AT_PLATFORM bit (0 when the platform has none). Entries needing other
    // bits are skipped; tls is always accepted.
    uint64_t legacy_hwcap = 0;
    uint64_t legacy_platform = 0;
    uint64_t legacy_platform_mask = 0x000f000000000000;  // x86: i586, i686, haswell, xeon_phi
    // Bit n set: the CPU has x86 ISA level n (glibc-hwcaps entries record the level they need).
    uint32_t isa_levels = 0xffffffff;
};

// A cache indexed once for one target. lookup() answers what _dl_load_cache_lookup would: among
// the entries for the soname (cache_libcmp-equal, in cache order), the supported glibc-hwcaps
// entry of highest priority, otherwise the first plain entry whose flags and legacy hwcaps fit.
// So when two conf directories hold the same soname, the one ldconfig scanned first wins.
class CacheIndex {
  public:
    CacheIndex(LdSoCache cache, CacheLookupTarget target);

    const CacheEntry* lookup(std::string_view soname) const;
    // Every entry for the soname, in cache order, whatever its flags or hwcaps.
    std::vector<const CacheEntry*> all(std::string_view soname) const;

    const LdSoCache& cache() const { return m_cache; }
    const CacheLookupTarget& target() const { return m_target; }

  private:
    const std::vector<size_t>* candidates(std::string_view soname) const;
    bool flags_accepted(int32_t flags) const;

    LdSoCache m_cache;
    CacheLookupTarget m_target;
    // Keyed by the soname with digit runs stripped of leading zeros: equal keys are exactly the
    // cache_libcmp-equal sonames.
    std::unordered_map<std::string, std::vector<size_t>> m_by_key;
};

}  // namespace rootlock::loader
