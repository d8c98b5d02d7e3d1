// What both fatbin readers share: the little-endian fields, one entry header decoded, the kernel
// test of a small cubin, and the summary's derived sets. read_fatbin walks a file with small
// reads; FatbinStreamScanner sees a wheel member once, front to back: one decoder keeps them equal.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpu/fatbin.hpp"
#include "util/result.hpp"

namespace rootlock::gpu::fatbin_detail {

inline constexpr std::string_view k_fatbin_section = ".nv_fatbin";
inline constexpr std::string_view k_relfatbin_section = "__nv_relfatbin";
// The sections where nvcc-built libraries keep fatbins of their own to load through the module
// API (cuModuleLoadData), in the order a linker lays them out.
inline constexpr std::array<std::string_view, 5> k_data_sections = {
    ".rodata", ".lrodata", ".data.rel.ro", ".data", ".ldata"};

uint64_t fatbin_le(const std::byte* p, size_t width);
inline uint16_t fatbin_u16(const std::byte* p) {
    return static_cast<uint16_t>(fatbin_le(p, 2));
}
inline uint32_t fatbin_u32(const std::byte* p) {
    return static_cast<uint32_t>(fatbin_le(p, 4));
}
inline uint64_t fatbin_u64(const std::byte* p) {
    return fatbin_le(p, 8);
}

// The k_fatbin_entry_header bytes at `p`, which lie at `offset` of the object `object_name`
// (errors are located there: an SM architecture outside 10 to 999 for a PTX or cubin entry).
util::Result<FatbinEntry> decode_fatbin_entry(const std::string& object_name, const std::byte* p,
                                              uint64_t offset);

// Whether the cubin ELF in `payload` has a kernel: a section named ".text.<kernel>". Anything
// unreadable counts as having one, so that a doubt never hides device code.
bool cubin_has_kernels(std::span<const std::byte> payload);

// Small uncompressed cubins are read whole to tell whether they hold a kernel; bigger ones
// always do (an empty module is a few hundred bytes).
inline constexpr uint64_t k_empty_cubin_limit = 64 * 1024;

// Fills any_compressed, cubin_sms, ptx_sms and architectures from summary.entries.
void summarise_entries(FatbinSummary& summary);

// __nv_relfatbin's counts from its entries.
RelocatableCode relocatable_code(const std::vector<FatbinEntry>& entries, size_t containers,
                                 uint64_t section_size);

}  // namespace rootlock::gpu::fatbin_detail
