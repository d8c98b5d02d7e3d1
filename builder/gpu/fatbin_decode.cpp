// One fatbin entry header decoded, the kernel test of a small cubin, and a summary's derived
// sets; see fatbin_decode.hpp. The layout is little endian whatever the host object's byte order.
#include "gpu/fatbin_decode.hpp"

#include <string_view>

#include <fmt/format.h>

namespace rootlock::gpu::fatbin_detail {

namespace {

std::string_view fatbin_kind_name(FatbinKind kind) {
    switch (kind) {
        case FatbinKind::ptx:
            return "PTX";
        case FatbinKind::cubin:
            return "cubin";
        case FatbinKind::other:
            break;
    }
    return "fatbin";
}

}  // namespace

uint64_t fatbin_le(const std::byte* p, size_t width) {
    uint64_t value = 0;
    for (size_t i = width; i > 0; --i)
        value = (value << 8) | std::to_integer<uint64_t>(p[i - 1]);
    return value;
}

util::Result<FatbinEntry> decode_fatbin_entry(const std::string& object_name, const std::byte* p,
                                              uint64_t offset) {
    FatbinEntry entry;
    entry.offset = offset;
    entry.raw_kind = fatbin_u16(p);
    entry.kind = entry.raw_kind == k_fatbin_kind_ptx     ? FatbinKind::ptx
                 : entry.raw_kind == k_fatbin_kind_cubin ? FatbinKind::cubin
                                                         : FatbinKind::other;
    entry.header_size = fatbin_u32(p + 4);
    entry.payload_size = fatbin_u32(p + 8);
    entry.flags = fatbin_u64(p + 40);
    entry.uncompressed_size = fatbin_u64(p + 56);
    const uint32_t arch = fatbin_u32(p + 28);
    if (entry.kind == FatbinKind::other) {
        // Unknown kinds (nvopen-tools saw 0x10 and 0x40) may not hold an architecture there.
        entry.sm = arch >= 10 && arch <= 999 ? static_cast<int>(arch) : 0;
    } else if (arch < 10 || arch > 999) {
        return util::make_error(util::at_offset(object_name, offset),
                                fmt::format("fatbin {} entry names SM architecture {}, not one "
                                            "from 10 to 999",
                                            fatbin_kind_name(entry.kind), arch));
    } else {
        entry.sm = static_cast<int>(arch);
    }
    if ((entry.flags & k_fatbin_flag_arch_specific) != 0)
        entry.variant = SmVariant::arch_specific;
    else if ((entry.flags & k_fatbin_flag_family) != 0)
        entry.variant = SmVariant::family;
    if ((entry.flags & k_fatbin_flag_zstd) != 0)
        entry.compression = FatbinCompression::zstd;
    else if ((entry.flags & k_fatbin_flag_lz4) != 0)
        entry.compression = FatbinCompression::lz4;
    entry.debug = (entry.flags & k_fatbin_flag_debug) != 0;
    if (entry.kind == FatbinKind::ptx) {
        entry.ptx_minor = fatbin_u16(p + 24);
        entry.ptx_major = fatbin_u16(p + 26);
    }
    return entry;
}

bool cubin_has_kernels(std::span<const std::byte> payload) {
    auto u16 = [&](size_t at) { return static_cast<uint64_t>(fatbin_u16(payload.data() + at)); };
    auto u64 = [&](size_t at) { return fatbin_u64(payload.data() + at); };
    if (payload.size() < 64 || payload[4] != std::byte{2})  // ELF64 only
        return true;
    const uint64_t shoff = u64(0x28);
    const uint64_t entsize = u16(0x3a);
    const uint64_t count = u16(0x3c);
    const uint64_t strndx = u16(0x3e);
    if (entsize < 64 || strndx >= count || shoff > payload.size() ||
        count > (payload.size() - shoff) / entsize)
        return true;
    const size_t strtab_header = static_cast<size_t>(shoff + strndx * entsize);
    const uint64_t names = u64(strtab_header + 24);
    const uint64_t names_size = u64(strtab_header + 32);
    if (names > payload.size() || names_size > payload.size() - names)
        return true;
    const std::string_view table(reinterpret_cast<const char*>(payload.data() + names),
                                 static_cast<size_t>(names_size));
    for (uint64_t i = 0; i < count; ++i) {
        const uint64_t name = fatbin_u32(payload.data() + shoff + i * entsize);
        if (name < table.size() && table.substr(static_cast<size_t>(name)).starts_with(".text."))
            return true;
    }
    return false;
}

void summarise_entries(FatbinSummary& summary) {
    for (const FatbinEntry& entry : summary.entries) {
        summary.any_compressed = summary.any_compressed || entry.compressed();
        if (entry.kind == FatbinKind::other || !entry.kernels)
            continue;
        (entry.kind == FatbinKind::cubin ? summary.cubin_sms : summary.ptx_sms).insert(entry.sm);
        summary.architectures.insert(entry.name());
    }
}

RelocatableCode relocatable_code(const std::vector<FatbinEntry>& entries, size_t containers,
                                 uint64_t section_size) {
    RelocatableCode code;
    code.containers = containers;
    code.entries = entries.size();
    code.section_size = section_size;
    for (const FatbinEntry& entry : entries) {
        if (entry.kind == FatbinKind::cubin)
            code.cubin_sms.insert(entry.sm);
        else if (entry.kind == FatbinKind::ptx)
            code.ptx_sms.insert(entry.sm);
    }
    return code;
}

}  // namespace rootlock::gpu::fatbin_detail
