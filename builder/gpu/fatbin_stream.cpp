// FatbinStreamScanner: containers followed as the bytes pass, sections named at the end; see
// fatbin_stream.hpp.
#include "gpu/fatbin_stream.hpp"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "elf/elf_sections.hpp"
#include "gpu/fatbin_decode.hpp"

namespace rootlock::gpu {

using namespace fatbin_detail;

namespace {

constexpr uint64_t k_stream_head = 64 * 1024;

// k_fatbin_magic as the file holds it (little endian), compared without a decode per word.
constexpr std::array<std::byte, 4> k_magic_bytes{std::byte{0x50}, std::byte{0xed}, std::byte{0x55},
                                                 std::byte{0xba}};

uint64_t align8(uint64_t value) {
    return (value + 7) & ~uint64_t{7};
}

// What was kept of the object, as a ByteSource for elf::find_sections: the head and the window
// around the section table. A read elsewhere fails, naming what was kept.
class KeptBytes final : public util::ByteSource {
  public:
    KeptBytes(const std::string& name, uint64_t size, const std::vector<std::byte>& head,
              uint64_t window_begin, const std::vector<std::byte>& window)
        : m_name(name),
          m_size(size),
          m_head(head),
          m_window_begin(window_begin),
          m_window(window) {}
    uint64_t size() const override { return m_size; }
    const std::string& name() const override { return m_name; }
    util::Status read_at(uint64_t offset, std::span<std::byte> out) const override {
        if (serve(0, m_head, offset, out) || serve(m_window_begin, m_window, offset, out))
            return util::ok_status();
        return util::make_error(
            util::at_offset(m_name, offset),
            fmt::format("the section names lie outside what a streaming read keeps (the first "
                        "{} KiB and the {} MiB before the section headers)",
                        k_stream_head / 1024, k_stream_window_before >> 20));
    }

  private:
    static bool serve(uint64_t base, const std::vector<std::byte>& bytes, uint64_t offset,
                      std::span<std::byte> out) {
        if (offset < base || offset - base > bytes.size() ||
            out.size() > bytes.size() - (offset - base))
            return false;
        std::copy_n(bytes.begin() + static_cast<std::ptrdiff_t>(offset - base), out.size(),
                    out.begin());
        return true;
    }

    const std::string& m_name;
    uint64_t m_size;
    const std::vector<std::byte>& m_head;
    uint64_t m_window_begin;
    const std::vector<std::byte>& m_window;
};

}  // namespace

// A container being followed: the bytes it waits for next, and its entries so far.
struct FatbinStreamScanner::Candidate {
    enum class Phase { container_header, entry_header, cubin_payload };
    Phase phase = Phase::container_header;
    uint64_t start = 0;
    uint64_t end = 0;  // known once the container header is read
    uint16_t version = 0;
    uint64_t header_size = 0;
    uint64_t entries_size = 0;
    uint64_t need_at = 0;
    std::vector<std::byte> bytes;  // [need_at, need_at + bytes.size()) when filled
    size_t filled = 0;
    std::vector<FatbinEntry> entries;
    bool failed = false;
    bool complete = false;

    void want(uint64_t offset, size_t length) {
        need_at = offset;
        bytes.assign(length, std::byte{0});
        filled = 0;
    }
};

// A container whose header and every entry held together.
struct FatbinStreamScanner::Container {
    uint64_t start = 0;
    uint64_t end = 0;
    uint16_t version = 0;
    uint64_t header_size = 0;
    std::vector<FatbinEntry> entries;
};

FatbinStreamScanner::FatbinStreamScanner(std::string name, uint64_t size)
    : m_name(std::move(name)), m_size(size) {}
FatbinStreamScanner::~FatbinStreamScanner() = default;
FatbinStreamScanner::FatbinStreamScanner(FatbinStreamScanner&&) noexcept = default;
FatbinStreamScanner& FatbinStreamScanner::operator=(FatbinStreamScanner&&) noexcept = default;

void FatbinStreamScanner::feed(std::span<const std::byte> bytes) {
    if (bytes.empty())
        return;
    keep(bytes);
    scan_magic(bytes);
    feed_candidates(bytes);
    m_position += bytes.size();
}

// The head, and once the ELF header tells where the section table is, the window around it.
void FatbinStreamScanner::keep(std::span<const std::byte> bytes) {
    const uint64_t position = m_position;
    const uint64_t end = position + bytes.size();
    if (position < k_stream_head) {
        const auto take =
            static_cast<std::ptrdiff_t>(std::min<uint64_t>(k_stream_head - position, bytes.size()));
        m_head.insert(m_head.end(), bytes.begin(), bytes.begin() + take);
    }
    if (!m_place_known && m_head.size() >= 64) {
        m_place_known = true;
        if (auto place = elf::section_table_place(m_head)) {
            m_has_table = true;
            uint64_t begin =
                place->offset > k_stream_window_before ? place->offset - k_stream_window_before : 0;
            m_window_end =
                place->offset >= m_size || m_size - place->offset <= k_stream_window_after
                    ? m_size
                    : place->offset + k_stream_window_after;
            // A window that starts in bytes already passed starts at 0: they are all in the head.
            if (begin < end) {
                begin = 0;
                m_window = m_head;
            }
            m_window_begin = begin;
        }
    }
    if (!m_has_table)
        return;
    const uint64_t have = m_window_begin + m_window.size();
    const uint64_t from = std::max(position, have);
    const uint64_t to = std::min(end, m_window_end);
    if (from < to && from == have) {
        const auto first = bytes.begin() + static_cast<std::ptrdiff_t>(from - position);
        m_window.insert(m_window.end(), first, first + static_cast<std::ptrdiff_t>(to - from));
    }
}

// Every aligned word that is the magic starts a candidate, the word cut by a feed's end too.
void FatbinStreamScanner::scan_magic(std::span<const std::byte> bytes) {
    const uint64_t begin = m_position;
    const uint64_t end = begin + bytes.size();
    uint64_t at = align8(begin);
    if (m_word_have > 0) {
        const size_t take = std::min(4 - m_word_have, bytes.size());
        std::copy_n(bytes.begin(), take, m_word.begin() + static_cast<std::ptrdiff_t>(m_word_have));
        m_word_have += take;
        if (m_word_have == 4) {
            m_word_have = 0;
            if (fatbin_u32(m_word.data()) == k_fatbin_magic)
                start_candidate(m_word_at, std::span(m_word.data(), begin - m_word_at));
        }
    }
    for (; at < end; at += 8) {
        if (end - at < 4) {
            m_word_at = at;
            m_word_have = static_cast<size_t>(end - at);
            std::copy_n(bytes.begin() + static_cast<std::ptrdiff_t>(at - begin), m_word_have,
                        m_word.begin());
            break;
        }
        if (std::memcmp(bytes.data() + (at - begin), k_magic_bytes.data(), 4) == 0)
            start_candidate(at, {});
    }
}

// A candidate at `offset`; `seed` holds its first bytes when they came in an earlier feed.
void FatbinStreamScanner::start_candidate(uint64_t offset, std::span<const std::byte> seed) {
    if (m_active.size() >= k_stream_max_candidates) {
        m_overflow = true;
        return;
    }
    Candidate candidate;
    candidate.start = offset;
    candidate.want(offset, k_fatbin_container_header);
    std::copy(seed.begin(), seed.end(), candidate.bytes.begin());
    candidate.filled = seed.size();
    m_active.push_back(std::move(candidate));
}

void FatbinStreamScanner::feed_candidates(std::span<const std::byte> bytes) {
    const uint64_t begin = m_position;
    const uint64_t end = begin + bytes.size();
    // New candidates (a container chained after one that ends unaligned) join during the loop.
    for (size_t i = 0; i < m_active.size(); ++i) {
        while (!m_active[i].failed && !m_active[i].complete) {
            Candidate& candidate = m_active[i];
            const uint64_t wanted = candidate.need_at + candidate.filled;
            if (wanted >= end)
                break;
            if (wanted < begin) {  // cannot happen: a candidate waits only for bytes to come
                candidate.failed = true;
                break;
            }
            const size_t take = static_cast<size_t>(
                std::min<uint64_t>(candidate.bytes.size() - candidate.filled, end - wanted));
            std::copy_n(bytes.begin() + static_cast<std::ptrdiff_t>(wanted - begin), take,
                        candidate.bytes.begin() + static_cast<std::ptrdiff_t>(candidate.filled));
            candidate.filled += take;
            if (candidate.filled < candidate.bytes.size())
                break;
            if (!step(candidate))
                candidate.failed = true;
        }
    }
    // Complete containers are kept, failed ones dropped; the rest wait for later bytes.
    for (Candidate& candidate : m_active) {
        if (candidate.complete) {
            m_done.push_back({candidate.start, candidate.end, candidate.version,
                              candidate.header_size, std::move(candidate.entries)});
        }
    }
    std::erase_if(m_active, [](const Candidate& c) { return c.complete || c.failed; });
}

// The bytes a candidate waited for have come: decode them and say what it waits for next.
// False when the bytes only looked like a container.
bool FatbinStreamScanner::step(Candidate& candidate) {
    auto next_entry = [&](uint64_t at) {
        if (at == candidate.end) {
            candidate.complete = true;
            // A container that ends unaligned: the next one, if any, starts right there, where
            // the aligned magic search would not look.
            if (at % 8 != 0 && at < m_size && m_active.size() < k_stream_max_candidates) {
                Candidate chained;
                chained.start = at;
                chained.want(at, k_fatbin_container_header);
                m_active.push_back(std::move(chained));
            }
            return true;
        }
        if (candidate.end - at < k_fatbin_entry_header)
            return false;
        candidate.phase = Candidate::Phase::entry_header;
        candidate.want(at, k_fatbin_entry_header);
        return true;
    };
    switch (candidate.phase) {
        case Candidate::Phase::container_header: {
            const std::byte* p = candidate.bytes.data();
            if (fatbin_u32(p) != k_fatbin_magic)
                return false;
            candidate.version = fatbin_u16(p + 4);
            candidate.header_size = fatbin_u16(p + 6);
            candidate.entries_size = fatbin_u64(p + 8);
            const uint64_t left = m_size - candidate.start;
            if (candidate.header_size < k_fatbin_container_header || candidate.header_size > left ||
                candidate.entries_size > left - candidate.header_size)
                return false;
            candidate.end = candidate.start + candidate.header_size + candidate.entries_size;
            return next_entry(candidate.start + candidate.header_size);
        }
        case Candidate::Phase::entry_header: {
            auto entry = decode_fatbin_entry(m_name, candidate.bytes.data(), candidate.need_at);
            if (!entry)
                return false;
            const uint64_t left = candidate.end - candidate.need_at;
            if (entry->header_size < k_fatbin_entry_header || entry->header_size > left ||
                entry->payload_size > left - entry->header_size)
                return false;
            candidate.entries.push_back(*entry);
            if (entry->kind == FatbinKind::cubin && !entry->compressed() &&
                entry->payload_size <= k_empty_cubin_limit && entry->payload_size > 0) {
                candidate.phase = Candidate::Phase::cubin_payload;
                candidate.want(candidate.need_at + entry->header_size,
                               static_cast<size_t>(entry->payload_size));
                return true;
            }
            if (entry->kind == FatbinKind::cubin && !entry->compressed() &&
                entry->payload_size == 0)
                candidate.entries.back().kernels = cubin_has_kernels({});
            return next_entry(candidate.need_at + entry->header_size + entry->payload_size);
        }
        case Candidate::Phase::cubin_payload: {
            FatbinEntry& entry = candidate.entries.back();
            entry.kernels = cubin_has_kernels(candidate.bytes);
            return next_entry(candidate.need_at + candidate.bytes.size());
        }
    }
    return false;
}

uint64_t FatbinStreamScanner::kept_bytes() const {
    uint64_t total = m_head.size() + m_window.size();
    for (const Candidate& candidate : m_active)
        total += candidate.bytes.size();
    return total;
}

util::Result<std::optional<FatbinSummary>> FatbinStreamScanner::finish() {
    if (m_position != m_size) {
        return util::make_error(
            m_name, fmt::format("the fatbin scanner saw {} of {} bytes", m_position, m_size));
    }
    if (!m_has_table)
        return std::optional<FatbinSummary>();
    const KeptBytes kept(m_name, m_size, m_head, m_window_begin, m_window);
    const std::array<std::string_view, 2> names{k_fatbin_section, k_relfatbin_section};
    ROOTLOCK_TRY(sections, elf::find_sections(kept, names));
    if (!sections[0] && !sections[1])
        return std::optional<FatbinSummary>();
    if (m_overflow) {
        return util::make_error(m_name, fmt::format("more than {} fatbin containers overlap; "
                                                    "the device code was not read",
                                                    k_stream_max_candidates));
    }
    std::sort(m_done.begin(), m_done.end(),
              [](const Container& a, const Container& b) { return a.start < b.start; });
    // read_fatbin's walk of one section: containers in file order, each passed over whole.
    auto take = [&](const elf::SectionRange& range, bool embedded, size_t& containers,
                    std::vector<FatbinEntry>& entries) {
        const uint64_t end = range.offset + range.size;
        uint64_t next = range.offset;
        auto first = std::lower_bound(
            m_done.begin(), m_done.end(), range.offset,
            [](const Container& container, uint64_t offset) { return container.start < offset; });
        for (auto it = first; it != m_done.end() && it->start < end; ++it) {
            if (it->start < next || it->end > end)
                continue;
            if (embedded && (it->version != 1 || it->header_size != k_fatbin_container_header ||
                             it->entries.empty()))
                continue;
            ++containers;
            entries.insert(entries.end(), it->entries.begin(), it->entries.end());
            next = it->end;
        }
    };
    FatbinSummary summary;
    if (const auto& range = sections[0]) {
        take(*range, false, summary.containers, summary.entries);
        summary.section_size = range->size;
        ROOTLOCK_TRY(data, elf::find_sections(kept, k_data_sections));
        for (const auto& section : data) {
            if (section && section->type == elf::k_sht_progbits)
                take(*section, true, summary.embedded_containers, summary.entries);
        }
        summarise_entries(summary);
    }
    if (const auto& range = sections[1]) {
        size_t containers = 0;
        std::vector<FatbinEntry> entries;
        take(*range, false, containers, entries);
        summary.relocatable = relocatable_code(entries, containers, range->size);
    }
    return std::optional<FatbinSummary>(std::move(summary));
}

}  // namespace rootlock::gpu
