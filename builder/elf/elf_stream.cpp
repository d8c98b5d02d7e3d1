// read_elf_stream: one forward pass that keeps the head of the object and the metadata ranges it
// needs, skips everything else in 1 MiB chunks, and runs read_elf's own decoder over what it kept.
#include <algorithm>
#include <cstring>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "elf/elf_decode.hpp"
#include "elf/elf_reader.hpp"

namespace rootlock::elf {

namespace {

using util::Result;
using util::Status;

constexpr size_t k_skip_chunk = size_t{1} << 20;
// Holes met after the dynamic segment are filled by reading forward and decoding again; real
// objects need none, so a few dozen means scattered (or hostile) metadata.
constexpr int k_max_refills = 64;
// Real dynamic sections are a few hundred bytes; more is fetched on demand like any hole.
constexpr uint64_t k_dynamic_prefetch = 64 * 1024;
constexpr uint64_t k_refill_window = uint64_t{16} << 20;

// The ranges of a stream kept so far, as a ByteSource. A read outside them fails with a located
// "skipped" error and remembers the range, so the driver can read forward and decode again.
class RetainedStream final : public util::ByteSource {
  public:
    RetainedStream(util::ByteStream& stream, uint64_t size, std::string name, uint64_t limit)
        : m_stream(stream), m_size(size), m_name(std::move(name)), m_limit(limit) {}

    uint64_t size() const override { return m_size; }
    const std::string& name() const override { return m_name; }

    Status read_at(uint64_t offset, std::span<std::byte> out) const override {
        if (offset > m_size || out.size() > m_size - offset) {
            return util::make_error(util::at_offset(m_name, offset),
                                    fmt::format("read of {} bytes runs past the end of the file "
                                                "({} bytes)",
                                                out.size(), m_size));
        }
        if (out.empty())
            return util::ok_status();
        for (const auto& range : m_ranges) {
            if (offset >= range.begin && offset + out.size() <= range.end()) {
                std::memcpy(out.data(), range.bytes.data() + (offset - range.begin), out.size());
                return util::ok_status();
            }
        }
        m_hole = std::make_pair(offset, offset + out.size());
        return skipped(offset, offset + out.size());
    }

    // Makes [begin, end) (clipped to the size) readable by reading forward. Fails when part of
    // it was skipped already, or when keeping it would pass the retention limit.
    Status retain(uint64_t begin, uint64_t end) {
        end = std::min(end, m_size);
        if (begin >= end)
            return util::ok_status();
        if (begin < m_position) {
            // Already passed: fine if kept, and extendable only from the range ending here.
            const Range* covering = nullptr;
            for (const auto& range : m_ranges) {
                if (begin >= range.begin && begin <= range.end())
                    covering = &range;
            }
            if (covering == nullptr || covering->end() < std::min(end, m_position)) {
                return skipped(begin, end);
            }
            if (end <= covering->end())
                return util::ok_status();
            if (covering->end() != m_position)
                return skipped(begin, end);
        } else if (auto status = skip_to(begin); !status) {
            return status;
        }
        uint64_t wanted = end - m_position;
        if (wanted > m_limit || m_retained > m_limit - wanted) {
            return util::make_error(util::at_offset(m_name, m_position),
                                    fmt::format("streamed ELF metadata would need more than the "
                                                "retention limit of {} bytes",
                                                m_limit));
        }
        if (m_ranges.empty() || m_ranges.back().end() != m_position) {
            m_ranges.push_back(Range{m_position, {}});
        }
        Range& range = m_ranges.back();
        size_t old_size = range.bytes.size();
        range.bytes.resize(old_size + static_cast<size_t>(wanted));
        m_retained += wanted;
        return read_exact(std::span(range.bytes).subspan(old_size));
    }

    uint64_t position() const { return m_position; }

    std::optional<std::pair<uint64_t, uint64_t>> take_hole() {
        auto hole = m_hole;
        m_hole.reset();
        return hole;
    }

    StreamStats stats() const {
        StreamStats stats;
        for (const auto& range : m_ranges) {
            stats.retained_bytes += range.bytes.size();
            stats.largest_range = std::max<uint64_t>(stats.largest_range, range.bytes.size());
        }
        stats.consumed_bytes = m_position;
        return stats;
    }

  private:
    struct Range {
        uint64_t begin = 0;
        std::vector<std::byte> bytes;
        uint64_t end() const { return begin + bytes.size(); }
    };

    util::Error skipped(uint64_t begin, uint64_t end) const {
        return util::make_error(util::at_offset(m_name, begin),
                                fmt::format("bytes 0x{:x}-0x{:x} were skipped by the streaming "
                                            "reader before the ELF metadata pointed at them",
                                            begin, end));
    }

    Status skip_to(uint64_t offset) {
        if (offset <= m_position)
            return util::ok_status();
        std::vector<std::byte> chunk(
            static_cast<size_t>(std::min<uint64_t>(k_skip_chunk, offset - m_position)));
        while (m_position < offset) {
            size_t length =
                static_cast<size_t>(std::min<uint64_t>(chunk.size(), offset - m_position));
            if (auto status = read_exact(std::span(chunk).first(length)); !status)
                return status;
        }
        return util::ok_status();
    }

    Status read_exact(std::span<std::byte> out) {
        size_t done = 0;
        while (done < out.size()) {
            auto got = m_stream.read(out.subspan(done));
            if (!got)
                return got.error();
            if (*got == 0) {
                return util::make_error(
                    util::at_offset(m_name, m_position + done),
                    fmt::format("stream ended after {} of {} bytes", m_position + done, m_size));
            }
            done += *got;
        }
        m_position += out.size();
        return util::ok_status();
    }

    util::ByteStream& m_stream;
    uint64_t m_size;
    std::string m_name;
    uint64_t m_limit;
    uint64_t m_position = 0;
    uint64_t m_retained = 0;
    std::vector<Range> m_ranges;
    mutable std::optional<std::pair<uint64_t, uint64_t>> m_hole;
};

uint64_t saturating_end(uint64_t offset, uint64_t length) {
    uint64_t end = 0;
    return __builtin_add_overflow(offset, length, &end) ? ~uint64_t{0} : end;
}

// What to read for a hole ahead of the stream position. Before the program headers are known
// (headers == nullptr) everything from the position on: the head from offset 0 is kept anyway.
// Later, inside a PT_LOAD segment, from the segment's start (or the position, if later) to its
// end: patchelf appends one such segment holding every table it rewrote (.dynstr, hash tables),
// in an order the decoder does not follow, so keeping it whole finds them all in one pass.
std::pair<uint64_t, uint64_t> widen(const detail::Headers* headers, uint64_t position,
                                    std::pair<uint64_t, uint64_t> hole) {
    if (hole.first < position)
        return hole;
    if (headers == nullptr)
        return {position, hole.second};
    for (const auto& segment : headers->segments) {
        uint64_t end = saturating_end(segment.offset, segment.filesz);
        if (segment.type != detail::k_pt_load || hole.first < segment.offset || hole.first >= end) {
            continue;
        }
        uint64_t begin = std::max(position, segment.offset);
        // A huge data segment is read up to the hole and a window past it, not to its end.
        end = std::max(hole.second, std::min(end, saturating_end(hole.second, k_refill_window)));
        return {begin, end};
    }
    return hole;
}

// Runs `decode` until it stops failing on holes ahead of the stream position, reading forward
// to fill each; a hole behind the position (already skipped) is the final error.
template <class Decode>
auto decode_with_refills(RetainedStream& source, const detail::Headers* headers, Decode&& decode)
    -> decltype(decode()) {
    for (int refills = 0;; ++refills) {
        auto result = decode();
        if (result.ok())
            return result;
        auto hole = source.take_hole();
        if (!hole)
            return result;
        if (refills == k_max_refills) {
            return util::make_error(util::at_offset(source.name(), hole->first),
                                    fmt::format("ELF metadata is scattered over more than {} "
                                                "ranges of the stream",
                                                k_max_refills));
        }
        auto [begin, end] = widen(headers, source.position(), *hole);
        if (auto status = source.retain(begin, end); !status)
            return status.error();
    }
}

// The head kept in one piece: the program headers and the start of the first PT_LOAD segment
// by file offset, where every linker puts the dynamic metadata (.hash, .gnu.hash, .dynsym,
// .dynstr, .gnu.version*). With GNU ld's separate-code layout that read-only segment holds
// little else, but it can also hold the text (-z noseparate-code) or .rodata and fat binaries
// (lld); where the metadata ends is known only from the dynamic section, which comes later, so
// the segment is kept up to `window` bytes and the rest is skipped.
uint64_t head_end(const detail::Headers& headers, uint64_t window) {
    uint64_t end = headers.codec.ehdr_size();
    if (headers.phnum != 0) {
        end = std::max(end, saturating_end(headers.phoff,
                                           uint64_t{headers.phnum} * headers.codec.phdr_size()));
    }
    const detail::Segment* first = nullptr;
    for (const auto& segment : headers.segments) {
        if (segment.type != detail::k_pt_load || segment.filesz == 0)
            continue;
        if (first == nullptr || segment.offset < first->offset)
            first = &segment;
    }
    if (first != nullptr) {
        end = std::max(end, std::min(saturating_end(first->offset, first->filesz), window));
    }
    return end;
}

Result<ElfInfo> stream_decode(RetainedStream& source, const ReadOptions& options) {
    if (auto status = source.retain(0, 64); !status)
        return status.error();
    ROOTLOCK_TRY(headers, decode_with_refills(source, nullptr,
                                              [&] { return detail::decode_headers(source); }));
    if (auto status = source.retain(0, head_end(headers, options.stream_head_window)); !status)
        return status.error();

    // PT_INTERP and PT_DYNAMIC, in file order, wherever they are.
    std::vector<std::pair<uint64_t, uint64_t>> wanted;
    if (const detail::Segment* interp = headers.interp()) {
        uint64_t length = std::min(interp->filesz, detail::k_max_interp);
        wanted.emplace_back(interp->offset, saturating_end(interp->offset, length));
    }
    if (const detail::Segment* dynamic = headers.dynamic()) {
        uint64_t length = std::min(dynamic->filesz, k_dynamic_prefetch);
        wanted.emplace_back(dynamic->offset, saturating_end(dynamic->offset, length));
    }
    std::sort(wanted.begin(), wanted.end());
    for (const auto& [begin, end] : wanted) {
        if (auto status = source.retain(begin, end); !status)
            return status.error();
    }
    return decode_with_refills(source, &headers,
                               [&] { return detail::decode_object(source, headers, options); });
}

}  // namespace

util::Result<ElfInfo> read_elf_stream(util::ByteStream& stream, uint64_t size,
                                      const std::string& name, const ReadOptions& options,
                                      StreamStats& stats) {
    RetainedStream source(stream, size, name, options.stream_retain_limit);
    auto result = stream_decode(source, options);
    stats = source.stats();
    return result;
}

util::Result<ElfInfo> read_elf_stream(util::ByteStream& stream, uint64_t size,
                                      const std::string& name, const ReadOptions& options) {
    StreamStats ignored;
    return read_elf_stream(stream, size, name, options, ignored);
}

}  // namespace rootlock::elf
