// Fatbin containers and entry headers walked in .nv_fatbin and __nv_relfatbin with small reads;
// see fatbin.hpp. The layout is little endian whatever the host object's byte order.
#include "gpu/fatbin.hpp"

#include <algorithm>
#include <array>
#include <string_view>

#include <fmt/format.h>

#include "elf/elf_sections.hpp"

namespace rootlock::gpu {

using util::Result;

namespace {

constexpr std::string_view k_fatbin_section = ".nv_fatbin";
constexpr std::string_view k_relfatbin_section = "__nv_relfatbin";

// Small reads that serve neighbouring headers from one pread: a container header and its first
// entry header, or the headers of small entries that follow each other. Payloads are never
// read: the next header is usually kilobytes to megabytes further on.
class FatbinWindow {
  public:
    FatbinWindow(const util::ByteSource& source, uint64_t limit)
        : m_source(source), m_limit(limit) {}

    // `length` (at most k_size) bytes at `offset`; the caller has checked offset + length <=
    // limit.
    Result<const std::byte*> at(uint64_t offset, size_t length) {
        if (offset >= m_base && offset - m_base <= m_filled &&
            length <= m_filled - (offset - m_base)) {
            return m_bytes.data() + (offset - m_base);
        }
        m_base = offset;
        m_filled = static_cast<size_t>(std::min<uint64_t>(k_size, m_limit - offset));
        if (auto status = m_source.read_at(offset, std::span(m_bytes.data(), m_filled)); !status) {
            m_filled = 0;
            return status.error();
        }
        return m_bytes.data();
    }

    static constexpr size_t k_size = 256;

  private:
    const util::ByteSource& m_source;
    uint64_t m_limit;
    uint64_t m_base = 0;
    size_t m_filled = 0;
    std::array<std::byte, k_size> m_bytes{};
};

uint64_t fatbin_le(const std::byte* p, size_t width) {
    uint64_t value = 0;
    for (size_t i = width; i > 0; --i)
        value = (value << 8) | std::to_integer<uint64_t>(p[i - 1]);
    return value;
}
uint16_t fatbin_u16(const std::byte* p) {
    return static_cast<uint16_t>(fatbin_le(p, 2));
}
uint32_t fatbin_u32(const std::byte* p) {
    return static_cast<uint32_t>(fatbin_le(p, 4));
}
uint64_t fatbin_u64(const std::byte* p) {
    return fatbin_le(p, 8);
}

// One section's walk: where it is, what it is called in messages, and what it found.
struct FatbinWalk {
    FatbinWalk(const util::ByteSource& object, const elf::SectionRange& section_range,
               std::string_view section_name)
        : source(object),
          range(section_range),
          section(section_name),
          window(object, section_range.offset + section_range.size) {}

    const util::ByteSource& source;
    elf::SectionRange range;
    std::string_view section;
    FatbinWindow window;
    size_t containers = 0;
    std::vector<FatbinEntry> entries;

    util::Error fail(uint64_t offset, std::string message) const {
        return util::make_error(util::at_offset(source.name(), offset), std::move(message));
    }
};

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

Result<FatbinEntry> decode_fatbin_entry(const FatbinWalk& walk, const std::byte* p,
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
        return walk.fail(offset, fmt::format("fatbin {} entry names SM architecture {}, not one "
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

// The entries of one container, [begin, end) in the file.
util::Status walk_fatbin_entries(FatbinWalk& walk, uint64_t begin, uint64_t end) {
    uint64_t pos = begin;
    while (pos < end) {
        const uint64_t left = end - pos;
        if (left < k_fatbin_entry_header) {
            return walk.fail(pos, fmt::format("fatbin entry header ({} bytes) runs past the end of "
                                              "its container ({} bytes left)",
                                              k_fatbin_entry_header, left));
        }
        ROOTLOCK_TRY(p, walk.window.at(pos, k_fatbin_entry_header));
        ROOTLOCK_TRY(entry, decode_fatbin_entry(walk, p, pos));
        if (entry.header_size < k_fatbin_entry_header) {
            return walk.fail(pos, fmt::format("fatbin entry header size {} is smaller than {}",
                                              entry.header_size, k_fatbin_entry_header));
        }
        if (entry.header_size > left || entry.payload_size > left - entry.header_size) {
            return walk.fail(pos, fmt::format("fatbin entry ({} + {} bytes) runs past the end of "
                                              "its container ({} bytes left)",
                                              entry.header_size, entry.payload_size, left));
        }
        pos += entry.header_size + entry.payload_size;
        walk.entries.push_back(entry);
    }
    return util::ok_status();
}

// The first non-zero byte at or after `pos` (or `end`), read in small chunks: the zero padding a
// linker may leave between the containers of two objects.
Result<uint64_t> skip_fatbin_zeros(FatbinWalk& walk, uint64_t pos, uint64_t end) {
    std::array<std::byte, 4096> chunk{};
    while (pos < end) {
        const size_t length = static_cast<size_t>(std::min<uint64_t>(chunk.size(), end - pos));
        if (auto status = walk.source.read_at(pos, std::span(chunk.data(), length)); !status)
            return status.error();
        const auto* first = std::find_if(chunk.data(), chunk.data() + length,
                                         [](std::byte b) { return b != std::byte{0}; });
        if (first != chunk.data() + length)
            return pos + static_cast<uint64_t>(first - chunk.data());
        pos += length;
    }
    return end;
}

util::Status walk_fatbin_section(FatbinWalk& walk) {
    const uint64_t start = walk.range.offset;
    const uint64_t end = start + walk.range.size;
    uint64_t pos = start;
    while (pos < end) {
        const uint64_t left = end - pos;
        const size_t head = static_cast<size_t>(std::min(left, k_fatbin_container_header));
        ROOTLOCK_TRY(p, walk.window.at(pos, head));
        if (p[0] == std::byte{0}) {
            ROOTLOCK_TRY(next, skip_fatbin_zeros(walk, pos, end));
            if (next == end)
                break;
            if ((next - start) % 8 != 0) {
                return walk.fail(next, fmt::format("fatbin container after zero padding is not "
                                                   "8-byte aligned in {}",
                                                   walk.section));
            }
            pos = next;
            continue;
        }
        if (left >= 4 && fatbin_u32(p) != k_fatbin_magic) {
            return walk.fail(pos, fmt::format("bad fatbin container magic 0x{:08x} (expected "
                                              "0x{:08x})",
                                              fatbin_u32(p), k_fatbin_magic));
        }
        if (left < k_fatbin_container_header) {
            return walk.fail(pos, fmt::format("fatbin container header (16 bytes) runs past the "
                                              "end of {} ({} bytes left)",
                                              walk.section, left));
        }
        const uint64_t header_size = fatbin_u16(p + 6);
        const uint64_t entries_size = fatbin_u64(p + 8);
        if (header_size < k_fatbin_container_header) {
            return walk.fail(pos, fmt::format("fatbin container header size {} is smaller than 16",
                                              header_size));
        }
        if (header_size > left || entries_size > left - header_size) {
            return walk.fail(pos, fmt::format("fatbin container ({} + {} bytes) runs past the end "
                                              "of {} ({} bytes left)",
                                              header_size, entries_size, walk.section, left));
        }
        if (auto status =
                walk_fatbin_entries(walk, pos + header_size, pos + header_size + entries_size);
            !status) {
            return status.error();
        }
        ++walk.containers;
        pos += header_size + entries_size;
    }
    return util::ok_status();
}

}  // namespace

SmName FatbinEntry::name() const {
    return SmName{from_sm(sm), variant, kind == FatbinKind::ptx};
}

Result<std::optional<FatbinSummary>> read_fatbin(const util::ByteSource& object) {
    const std::array<std::string_view, 2> names{k_fatbin_section, k_relfatbin_section};
    ROOTLOCK_TRY(sections, elf::find_sections(object, names));
    if (!sections[0] && !sections[1])
        return std::optional<FatbinSummary>();
    FatbinSummary summary;
    if (const auto& range = sections[0]) {
        FatbinWalk walk(object, *range, k_fatbin_section);
        if (auto status = walk_fatbin_section(walk); !status)
            return status.error();
        summary.containers = walk.containers;
        summary.section_size = range->size;
        summary.entries = std::move(walk.entries);
        for (const FatbinEntry& entry : summary.entries) {
            summary.any_compressed = summary.any_compressed || entry.compressed();
            if (entry.kind == FatbinKind::other)
                continue;
            (entry.kind == FatbinKind::cubin ? summary.cubin_sms : summary.ptx_sms)
                .insert(entry.sm);
            summary.architectures.insert(entry.name());
        }
    }
    if (const auto& range = sections[1]) {
        FatbinWalk walk(object, *range, k_relfatbin_section);
        if (auto status = walk_fatbin_section(walk); !status)
            return status.error();
        RelocatableCode code;
        code.containers = walk.containers;
        code.entries = walk.entries.size();
        code.section_size = range->size;
        for (const FatbinEntry& entry : walk.entries) {
            if (entry.kind == FatbinKind::cubin)
                code.cubin_sms.insert(entry.sm);
            else if (entry.kind == FatbinKind::ptx)
                code.ptx_sms.insert(entry.sm);
        }
        summary.relocatable = std::move(code);
    }
    return std::optional<FatbinSummary>(std::move(summary));
}

}  // namespace rootlock::gpu
