// Fatbin containers and entry headers walked in .nv_fatbin and __nv_relfatbin with small reads;
// see fatbin.hpp. The layout is little endian whatever the host object's byte order.
#include "gpu/fatbin.hpp"

#include <algorithm>
#include <array>
#include <string_view>

#include <fmt/format.h>

#include "elf/elf_sections.hpp"
#include "gpu/fatbin_decode.hpp"

namespace rootlock::gpu {

using util::Result;
using namespace fatbin_detail;

namespace {

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
        ROOTLOCK_TRY(entry, decode_fatbin_entry(walk.source.name(), p, pos));
        if (entry.header_size < k_fatbin_entry_header) {
            return walk.fail(pos, fmt::format("fatbin entry header size {} is smaller than {}",
                                              entry.header_size, k_fatbin_entry_header));
        }
        if (entry.header_size > left || entry.payload_size > left - entry.header_size) {
            return walk.fail(pos, fmt::format("fatbin entry ({} + {} bytes) runs past the end of "
                                              "its container ({} bytes left)",
                                              entry.header_size, entry.payload_size, left));
        }
        if (entry.kind == FatbinKind::cubin && !entry.compressed() &&
            entry.payload_size <= k_empty_cubin_limit) {
            std::vector<std::byte> payload(static_cast<size_t>(entry.payload_size));
            if (auto read = walk.source.read_at(pos + entry.header_size, payload); !read)
                return read.error();
            entry.kernels = cubin_has_kernels(payload);
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

// One container at `pos` whose header and entries all hold together inside [pos, end): its end,
// with its entries added to `walk`; nullopt when the bytes only look like one.
std::optional<uint64_t> embedded_container(FatbinWalk& walk, uint64_t pos, uint64_t end) {
    if (end - pos < k_fatbin_container_header)
        return std::nullopt;
    auto head = walk.window.at(pos, k_fatbin_container_header);
    if (!head)
        return std::nullopt;
    const std::byte* p = *head;
    const uint64_t version = fatbin_u16(p + 4);
    const uint64_t header_size = fatbin_u16(p + 6);
    const uint64_t entries_size = fatbin_u64(p + 8);
    const uint64_t left = end - pos;
    if (version != 1 || header_size != k_fatbin_container_header || entries_size == 0 ||
        entries_size > left - header_size)
        return std::nullopt;
    const size_t before = walk.entries.size();
    if (!walk_fatbin_entries(walk, pos + header_size, pos + header_size + entries_size)) {
        walk.entries.resize(before);
        return std::nullopt;
    }
    ++walk.containers;
    return pos + header_size + entries_size;
}

// The object's bytes, those of one chunk already read served from memory: a data section's
// thousands of small containers are walked without a read each.
class ChunkSource final : public util::ByteSource {
  public:
    ChunkSource(const util::ByteSource& inner, uint64_t base, std::span<const std::byte> bytes)
        : m_inner(inner), m_base(base), m_bytes(bytes) {}
    uint64_t size() const override { return m_inner.size(); }
    const std::string& name() const override { return m_inner.name(); }
    util::Status read_at(uint64_t offset, std::span<std::byte> out) const override {
        if (offset >= m_base && offset - m_base <= m_bytes.size() &&
            out.size() <= m_bytes.size() - (offset - m_base)) {
            std::copy_n(m_bytes.begin() + static_cast<std::ptrdiff_t>(offset - m_base), out.size(),
                        out.begin());
            return util::ok_status();
        }
        return m_inner.read_at(offset, out);
    }

  private:
    const util::ByteSource& m_inner;
    uint64_t m_base;
    std::span<const std::byte> m_bytes;
};

// Every container in one data section, found by its magic at 8-byte aligned file offsets, read
// in 1 MiB chunks; a container found is stepped over whole.
util::Status walk_embedded_containers(FatbinWalk& walk) {
    const uint64_t end = walk.range.offset + walk.range.size;
    std::vector<std::byte> chunk(size_t{1} << 20);
    uint64_t pos = (walk.range.offset + 7) & ~uint64_t{7};
    while (pos + 4 <= end) {
        const size_t length = static_cast<size_t>(std::min<uint64_t>(chunk.size(), end - pos));
        if (auto status = walk.source.read_at(pos, std::span(chunk.data(), length)); !status)
            return status.error();
        ChunkSource in_memory(walk.source, pos, std::span(chunk.data(), length));
        FatbinWalk chunk_walk(in_memory, walk.range, walk.section);
        uint64_t next = pos + length;  // where the next chunk starts if nothing is found
        for (size_t at = 0; at + 4 <= length; at += 8) {
            if (fatbin_u32(chunk.data() + at) != k_fatbin_magic)
                continue;
            auto after = embedded_container(chunk_walk, pos + at, end);
            if (!after)
                continue;
            // Containers sit back to back: go on in this chunk while the next is in it.
            const uint64_t aligned = (*after + 7) & ~uint64_t{7};
            if (aligned + 4 > pos + length) {
                next = aligned;
                break;
            }
            at = static_cast<size_t>(aligned - pos) - 8;
        }
        walk.containers += chunk_walk.containers;
        walk.entries.insert(walk.entries.end(), chunk_walk.entries.begin(),
                            chunk_walk.entries.end());
        // A chunk cut inside a magic: the next one starts at the last aligned offset unread.
        if (next == pos + length && length >= 8 && next < end)
            next = pos + (length & ~size_t{7});
        if (next <= pos)
            break;
        pos = next;
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
        ROOTLOCK_TRY(data, elf::find_sections(object, k_data_sections));
        for (size_t i = 0; i < data.size(); ++i) {
            if (!data[i] || data[i]->type != elf::k_sht_progbits)
                continue;
            FatbinWalk embedded(object, *data[i], k_data_sections[i]);
            if (auto status = walk_embedded_containers(embedded); !status)
                return status.error();
            summary.embedded_containers += embedded.containers;
            walk.entries.insert(walk.entries.end(), embedded.entries.begin(),
                                embedded.entries.end());
        }
        summary.entries = std::move(walk.entries);
        summarise_entries(summary);
    }
    if (const auto& range = sections[1]) {
        FatbinWalk walk(object, *range, k_relfatbin_section);
        if (auto status = walk_fatbin_section(walk); !status)
            return status.error();
        summary.relocatable = relocatable_code(walk.entries, walk.containers, range->size);
    }
    return std::optional<FatbinSummary>(std::move(summary));
}

}  // namespace rootlock::gpu
