// The device code an ELF object carries, from the headers of its fatbin containers: which SASS
// (cubin) and PTX architectures, compressed or not. Nothing is decompressed; payloads are skipped.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <vector>

#include "gpu/compute_capability.hpp"
#include "util/byte_source.hpp"
#include "util/result.hpp"

namespace rootlock::gpu {

// gpu-containers.md 5.2, and nvcc 13.0's output compared flag by flag (gencode lists, -G,
// -Xfatbin -compress-all, -compress-mode=speed|size, compute_90a, compute_100f).
inline constexpr uint32_t k_fatbin_magic = 0xBA55ED50;
inline constexpr uint64_t k_fatbin_container_header = 16;
inline constexpr uint64_t k_fatbin_entry_header = 64;  // the fields read; 64 to 144 in real files
inline constexpr uint16_t k_fatbin_kind_ptx = 1;
inline constexpr uint16_t k_fatbin_kind_cubin = 2;
inline constexpr uint64_t k_fatbin_flag_debug = 0x2;    // -G
inline constexpr uint64_t k_fatbin_flag_lz4 = 0x2000;   // -compress-mode=speed
inline constexpr uint64_t k_fatbin_flag_zstd = 0x8000;  // the default mode, and =size, =balance
// compute_90a/sm_90a and compute_100f/sm_100f set these on PTX and cubin entries alike; the arch
// field stays 90 or 100. (0x1000000, on every sm_100+ cubin of nvcc 13.0, is not interpreted.)
inline constexpr uint64_t k_fatbin_flag_arch_specific = 0x100000;
inline constexpr uint64_t k_fatbin_flag_family = 0x200000;

enum class FatbinKind { ptx, cubin, other };
enum class FatbinCompression { none, lz4, zstd };

// One entry's header.
struct FatbinEntry {
    FatbinKind kind = FatbinKind::other;
    uint16_t raw_kind = 0;  // the kind field as written (kept for `other`)
    int sm = 0;             // 75, 86, 90, 100, 120 (0 for an `other` entry with none)
    SmVariant variant = SmVariant::plain;
    FatbinCompression compression = FatbinCompression::none;
    bool debug = false;
    // An uncompressed cubin whose ELF holds no .text.* section has no kernel to launch (nvcc
    // writes one for a .cu file without kernels, at its default architecture): false then, and
    // it decides no coverage. True when it has one or when that cannot be told (compressed).
    bool kernels = true;
    uint64_t flags = 0;
    // PTX entries: the PTX ISA version (9.0 from nvcc 13.0, 9.1 in cuDNN 9's CUDA 13 build), which
    // the driver must know to JIT it (u16 minor at 24, major at 26). 0.0 for other kinds.
    int ptx_major = 0;
    int ptx_minor = 0;
    uint64_t offset = 0;             // file offset of the entry header
    uint64_t header_size = 0;        // the payload starts here
    uint64_t payload_size = 0;       // padded payload bytes in the file (compressed where it is)
    uint64_t uncompressed_size = 0;  // the header's, 0 where it is not compressed

    bool compressed() const { return compression != FatbinCompression::none; }
    // "sm_86", "sm_90a", "compute_120f"; meaningful for PTX and cubin entries.
    SmName name() const;
};

// Relocatable device code (-rdc), from __nv_relfatbin: the objects nvlink linked, kept in the
// file for a later device link. The runtime loads the linked image in .nv_fatbin (in an -rdc
// library nvcc writes its cubins there and no PTX), never these, so they are counted apart and do
// not decide coverage.
struct RelocatableCode {
    size_t containers = 0;
    size_t entries = 0;
    std::set<int> cubin_sms;
    std::set<int> ptx_sms;
    uint64_t section_size = 0;
};

// Everything loadable, from .nv_fatbin.
struct FatbinSummary {
    std::vector<FatbinEntry> entries;  // in file order
    std::set<int> cubin_sms;           // every cubin's SM, whatever its variant
    std::set<int> ptx_sms;
    // PTX and cubin entries by name (sm_90a, compute_120), without cubins known to hold no
    // kernel: empty when nothing in the object can be launched.
    std::set<SmName> architectures;
    bool any_compressed = false;
    size_t containers = 0;
    uint64_t section_size = 0;  // bytes of .nv_fatbin (0 when only relocatable code exists)
    // Containers a library keeps in its data sections and loads itself through the driver's
    // module API (cuFFT 12 holds 23,983 in .ldata beside one in .nv_fatbin): their entries are
    // in `entries` too, since they run on the GPU as much as the registered ones.
    size_t embedded_containers = 0;
    std::optional<RelocatableCode> relocatable;
};

// The device code of the ELF object behind `elf`: nullopt when it has neither .nv_fatbin nor
// __nv_relfatbin. An object with .nv_fatbin (built by nvcc) also has its data sections (.rodata,
// .lrodata, .data.rel.ro, .data, .ldata) searched for containers at 8-byte aligned offsets,
// each taken only when its header and every entry's hold together (a chance match of the magic
// is passed over); those sections are read whole, the rest of the file never. Reads the ELF and
// section headers, then one small read per container and entry header (256 bytes at most), never a
// payload: libcublasLt.so.13's 140 MB of device code (2,782 containers, 5,737 entries) costs about
// 5,700 preads. Containers lie back to back (in every CUDA 13 library and nvcc-built object seen,
// each a multiple of 8 bytes; nvcc -shared also writes empty ones); zero bytes between them are
// skipped all the same, provided the next one starts 8-byte aligned within the section. Unknown
// entry kinds are kept as `other`. Errors are located at the bad header, "name@0xOFF: message".
util::Result<std::optional<FatbinSummary>> read_fatbin(const util::ByteSource& elf);

}  // namespace rootlock::gpu
