// index_zip and the member streams: the end records and central directory parsed by hand with
// every read bounds-checked, and ISA-L's raw inflate and CRC-32: about twice zlib's speed, and
// the inflate is most of a build's work on the thread that feeds the tar.
#include "fs/zip_index.hpp"

#include <isa-l/crc.h>
#include <isa-l/igzip_lib.h>

#include <algorithm>
#include <array>
#include <limits>
#include <optional>
#include <span>
#include <vector>

#include <fmt/format.h>

namespace rootlock::fs {

namespace {

constexpr size_t k_piece = size_t{1} << 20;
constexpr uint32_t k_eocd_signature = 0x06054b50U;
constexpr uint32_t k_zip64_locator_signature = 0x07064b50U;
constexpr uint32_t k_zip64_eocd_signature = 0x06064b50U;
constexpr uint32_t k_central_signature = 0x02014b50U;
constexpr uint32_t k_local_signature = 0x04034b50U;
constexpr size_t k_eocd_size = 22, k_locator_size = 20, k_zip64_eocd_size = 56;
constexpr size_t k_central_size = 46, k_local_size = 30;
constexpr uint32_t k_max32 = 0xFFFFFFFFU;
constexpr uint16_t k_unix_host = 3;

uint16_t le16(std::span<const unsigned char> bytes, size_t at) {
    return static_cast<uint16_t>(bytes[at] | (bytes[at + 1] << 8));
}

uint32_t le32(std::span<const unsigned char> bytes, size_t at) {
    return static_cast<uint32_t>(le16(bytes, at)) |
           (static_cast<uint32_t>(le16(bytes, at + 2)) << 16);
}

uint64_t le64(std::span<const unsigned char> bytes, size_t at) {
    return static_cast<uint64_t>(le32(bytes, at)) |
           (static_cast<uint64_t>(le32(bytes, at + 4)) << 32);
}

class ZipParser {
  public:
    ZipParser(const util::FileSource& file, std::string name)
        : m_file(file), m_name(std::move(name)) {}
    util::Result<std::vector<ZipMember>> run();

  private:
    util::Error error_at(uint64_t offset, std::string message) const {
        return util::make_error(util::at_offset(m_name, offset), std::move(message));
    }
    util::Result<std::vector<unsigned char>> read(uint64_t offset, uint64_t size) const {
        std::vector<unsigned char> bytes(static_cast<size_t>(size));
        auto read = m_file.read_at(offset, std::as_writable_bytes(std::span(bytes)));
        if (!read.ok())
            return error_at(offset, "unreadable: " + read.error().message);
        return bytes;
    }
    util::Status apply_zip64_extra(std::span<const unsigned char> extra, uint64_t where,
                                   ZipMember& member) const;

    const util::FileSource& m_file;
    std::string m_name;
};

util::Status ZipParser::apply_zip64_extra(std::span<const unsigned char> extra, uint64_t where,
                                          ZipMember& member) const {
    size_t at = 0;
    while (at + 4 <= extra.size()) {
        const uint16_t id = le16(extra, at);
        const uint16_t size = le16(extra, at + 2);
        if (size > extra.size() - at - 4)
            return error_at(where, "extra field runs past the record's end");
        if (id == 0x0001) {
            // Only the fields whose 32-bit value is saturated are present, in this order.
            std::span<const unsigned char> data = extra.subspan(at + 4, size);
            size_t used = 0;
            for (uint64_t* field : {&member.uncompressed_size, &member.compressed_size,
                                    &member.local_header_offset}) {
                if (*field != k_max32)
                    continue;
                if (used + 8 > data.size())
                    return error_at(where, "ZIP64 extra field too short");
                *field = le64(data, used);
                used += 8;
            }
        }
        at += 4U + size;
    }
    return util::ok_status();
}

util::Result<std::vector<ZipMember>> ZipParser::run() {
    const uint64_t file_size = m_file.size();
    if (file_size < k_eocd_size)
        return util::make_error(m_name, "no end of central directory record (not a zip archive)");
    const uint64_t tail_size = std::min<uint64_t>(file_size, k_eocd_size + 0xFFFF);
    const uint64_t tail_offset = file_size - tail_size;
    ROOTLOCK_TRY(tail, read(tail_offset, tail_size));
    std::optional<size_t> found;
    for (size_t at = tail.size() - k_eocd_size + 1; at-- > 0;) {
        if (le32(tail, at) == k_eocd_signature &&
            le16(tail, at + 20) <= tail.size() - at - k_eocd_size) {
            found = at;
            break;
        }
    }
    if (!found)
        return util::make_error(m_name, "no end of central directory record (not a zip archive)");
    const uint64_t eocd = tail_offset + *found;
    std::span<const unsigned char> record = std::span(tail).subspan(*found, k_eocd_size);
    uint64_t entries = le16(record, 10);
    uint64_t cd_size = le32(record, 12);
    uint64_t cd_offset = le32(record, 16);
    uint64_t cd_limit = eocd;
    if (le16(record, 4) != 0 && le16(record, 4) != 0xFFFF)
        return error_at(eocd, "multi-disk archives are not supported");
    if (eocd >= k_locator_size) {
        ROOTLOCK_TRY(locator, read(eocd - k_locator_size, k_locator_size));
        if (le32(locator, 0) == k_zip64_locator_signature) {
            const uint64_t zip64 = le64(locator, 8);
            if (zip64 > eocd - k_locator_size ||
                eocd - k_locator_size - zip64 < k_zip64_eocd_size) {
                return error_at(
                    eocd - k_locator_size,
                    fmt::format("ZIP64 end record offset 0x{:x} lies outside the file", zip64));
            }
            ROOTLOCK_TRY(end64, read(zip64, k_zip64_eocd_size));
            if (le32(end64, 0) != k_zip64_eocd_signature)
                return error_at(zip64, "no ZIP64 end of central directory record");
            if (le32(end64, 16) != 0 || le32(end64, 20) != 0)
                return error_at(zip64, "multi-disk archives are not supported");
            entries = le64(end64, 32);
            cd_size = le64(end64, 40);
            cd_offset = le64(end64, 48);
            cd_limit = zip64;
        }
    }
    if (cd_offset > cd_limit || cd_size > cd_limit - cd_offset) {
        return error_at(eocd, fmt::format("central directory ({} bytes at 0x{:x}) lies outside "
                                          "the file",
                                          cd_size, cd_offset));
    }
    if (cd_size > k_max_zip_central_directory) {
        return error_at(eocd, fmt::format("central directory of {} bytes is larger than {}",
                                          cd_size, k_max_zip_central_directory));
    }
    if (entries > cd_size / k_central_size) {
        return error_at(eocd, fmt::format("{} entries cannot fit in a central directory of {} "
                                          "bytes",
                                          entries, cd_size));
    }
    ROOTLOCK_TRY(directory, read(cd_offset, cd_size));
    std::vector<ZipMember> members;
    members.reserve(static_cast<size_t>(entries));
    size_t at = 0;
    for (uint64_t i = 0; i < entries; ++i) {
        const uint64_t where = cd_offset + at;
        if (directory.size() - at < k_central_size)
            return error_at(where, "central directory record runs past the directory's end");
        std::span<const unsigned char> header = std::span(directory).subspan(at, k_central_size);
        if (le32(header, 0) != k_central_signature)
            return error_at(where, "bad central directory record signature");
        const size_t name_size = le16(header, 28);
        const size_t extra_size = le16(header, 30);
        const size_t comment_size = le16(header, 32);
        if (directory.size() - at - k_central_size < name_size + extra_size + comment_size)
            return error_at(where, "central directory record runs past the directory's end");
        ZipMember member;
        member.flags = le16(header, 8);
        member.method = le16(header, 10);
        member.crc32 = le32(header, 16);
        member.compressed_size = le32(header, 20);
        member.uncompressed_size = le32(header, 24);
        member.external_attributes = le32(header, 38);
        member.local_header_offset = le32(header, 42);
        const auto* name = directory.data() + at + k_central_size;
        member.name.assign(reinterpret_cast<const char*>(name), name_size);
        ROOTLOCK_TRY(applied, apply_zip64_extra(std::span(directory).subspan(
                                                    at + k_central_size + name_size, extra_size),
                                                where, member));
        (void)applied;
        if ((le16(header, 4) >> 8) == k_unix_host)
            member.unix_mode = member.external_attributes >> 16;
        if (member.local_header_offset > cd_offset ||
            cd_offset - member.local_header_offset < k_local_size) {
            return error_at(where, fmt::format("local header offset 0x{:x} lies outside the "
                                               "member data",
                                               member.local_header_offset));
        }
        members.push_back(std::move(member));
        at += k_central_size + name_size + extra_size + comment_size;
    }
    return members;
}

// ISA-L's raw inflate state (about 50 KB, so on the heap); it holds no other resource.
class Inflater {
  public:
    void start() {
        m_state = std::make_unique<inflate_state>();
        isal_inflate_init(m_state.get());
        m_state->crc_flag = ISAL_DEFLATE;  // raw deflate, as zip stores it; the CRC is ours
    }
    inflate_state& state() { return *m_state; }

  private:
    std::unique_ptr<inflate_state> m_state;
};

// What a failed isal_inflate() call means, in the words zlib used for the same faults.
std::string inflate_problem(int status) {
    switch (status) {
        case ISAL_INVALID_BLOCK:
            return "invalid block type";
        case ISAL_INVALID_SYMBOL:
            return "invalid code";
        case ISAL_INVALID_LOOKBACK:
            return "invalid distance too far back";
        default:
            return fmt::format("ISA-L error {}", status);
    }
}

class ZipMemberStream final : public util::ByteStream {
  public:
    ZipMemberStream(std::shared_ptr<const util::FileSource> file, std::string archive,
                    ZipMember member)
        : m_file(std::move(file)), m_archive(std::move(archive)), m_member(std::move(member)) {}

    util::Result<size_t> read(std::span<std::byte> out) override {
        if (m_failure)
            return *m_failure;
        if (m_done || out.empty())
            return size_t{0};
        auto count = m_started ? step(out) : start_then_step(out);
        if (!count.ok())
            m_failure = count.error();
        return count;
    }

  private:
    util::Error fail(std::string problem) const {
        return util::make_error(m_archive + ": " + m_member.name, std::move(problem));
    }
    util::Result<size_t> start_then_step(std::span<std::byte> out);
    util::Result<size_t> step(std::span<std::byte> out);
    util::Result<size_t> step_inflate(std::span<std::byte> out);
    util::Result<size_t> produced(std::span<const std::byte> bytes, bool at_end);

    std::shared_ptr<const util::FileSource> m_file;
    std::string m_archive;
    ZipMember m_member;
    std::optional<util::Error> m_failure;
    bool m_started = false;
    bool m_done = false;
    uint64_t m_offset = 0;     // next compressed byte to read from the file
    uint64_t m_remaining = 0;  // compressed bytes not yet read from the file
    uint64_t m_total = 0;      // uncompressed bytes produced
    uint32_t m_crc = 0;
    Inflater m_inflater;
    std::vector<unsigned char> m_input;
};

util::Result<size_t> ZipMemberStream::start_then_step(std::span<std::byte> out) {
    m_started = true;
    if (m_member.method != k_zip_stored && m_member.method != k_zip_deflated)
        return fail(fmt::format("unsupported compression method {}", m_member.method));
    if ((m_member.flags & 1U) != 0)
        return fail("encrypted members are not supported");
    std::array<unsigned char, k_local_size> local{};
    const uint64_t offset = m_member.local_header_offset;
    if (!m_file->read_at(offset, std::as_writable_bytes(std::span(local))).ok())
        return fail(fmt::format("local header at 0x{:x} runs past the end of the file", offset));
    if (le32(local, 0) != k_local_signature)
        return fail(fmt::format("no local header at 0x{:x}", offset));
    const uint64_t name_size = le16(local, 26);
    const uint64_t extra_size = le16(local, 28);
    const uint64_t file_size = m_file->size();
    const uint64_t data = offset + k_local_size + name_size + extra_size;
    if (data > file_size || m_member.compressed_size > file_size - data)
        return fail("member data runs past the end of the file");
    // Readers that trust the local header would see another file: refuse the ambiguity.
    std::string local_name(static_cast<size_t>(name_size), '\0');
    if (!m_file->read_at(offset + k_local_size, std::as_writable_bytes(std::span(local_name)))
             .ok() ||
        local_name != m_member.name)
        return fail("local header name differs from the central directory");
    m_offset = data;
    m_remaining = m_member.compressed_size;
    if (m_member.method == k_zip_stored) {
        if (m_member.compressed_size != m_member.uncompressed_size) {
            return fail(fmt::format("stored member's sizes differ ({} compressed, {} uncompressed)",
                                    m_member.compressed_size, m_member.uncompressed_size));
        }
    } else {
        m_inflater.start();
        m_input.resize(static_cast<size_t>(std::min<uint64_t>(k_piece, m_remaining)));
    }
    return step(out);
}

util::Result<size_t> ZipMemberStream::step(std::span<std::byte> out) {
    if (m_member.method == k_zip_deflated)
        return step_inflate(out);
    const auto count = static_cast<size_t>(std::min<uint64_t>({out.size(), m_remaining, k_piece}));
    if (count > 0) {
        auto read = m_file->read_at(m_offset, out.first(count));
        if (!read.ok())
            return read.error();
        m_offset += count;
        m_remaining -= count;
    }
    return produced(out.first(count), m_remaining == 0);
}

util::Result<size_t> ZipMemberStream::step_inflate(std::span<std::byte> out) {
    inflate_state& z = m_inflater.state();
    while (true) {
        if (z.avail_in == 0 && m_remaining > 0) {
            const auto count = static_cast<size_t>(std::min<uint64_t>(m_input.size(), m_remaining));
            auto read =
                m_file->read_at(m_offset, std::as_writable_bytes(std::span(m_input).first(count)));
            if (!read.ok())
                return read.error();
            m_offset += count;
            m_remaining -= count;
            z.next_in = m_input.data();
            z.avail_in = static_cast<uint32_t>(count);
        }
        const size_t room = std::min<size_t>(out.size(), std::numeric_limits<uint32_t>::max());
        z.next_out = reinterpret_cast<uint8_t*>(out.data());
        z.avail_out = static_cast<uint32_t>(room);
        const int status = isal_inflate(&z);
        const size_t count = room - z.avail_out;
        if (status < 0)
            return fail("bad deflate data (" + inflate_problem(status) + ")");
        if (z.block_state == ISAL_BLOCK_FINISH)
            return produced(out.first(count), true);
        if (count > 0)
            return produced(out.first(count), false);
        if (z.avail_in == 0 && m_remaining == 0)
            return fail("deflate data ends early");
    }
}

util::Result<size_t> ZipMemberStream::produced(std::span<const std::byte> bytes, bool at_end) {
    m_crc =
        crc32_gzip_refl(m_crc, reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size());
    m_total += bytes.size();
    if (m_total > m_member.uncompressed_size) {
        return fail(fmt::format("more than the declared {} uncompressed bytes",
                                m_member.uncompressed_size));
    }
    if (at_end) {
        if (m_total != m_member.uncompressed_size) {
            return fail(fmt::format("{} uncompressed bytes, {} declared", m_total,
                                    m_member.uncompressed_size));
        }
        if (m_crc != m_member.crc32)
            return fail("CRC-32 mismatch");
        m_done = true;
    }
    return bytes.size();
}

}  // namespace

const ZipMember* ZipIndex::find(std::string_view member_name) const {
    auto it = by_name.find(member_name);
    return it == by_name.end() ? nullptr : &members[it->second];
}

util::Result<ZipIndex> index_zip(const std::string& host_path, std::string name) {
    if (name.empty())
        name = host_path;
    ROOTLOCK_TRY(file, util::FileSource::open(host_path, name));
    ZipIndex index;
    index.name = std::move(name);
    index.file = std::shared_ptr<const util::FileSource>(std::move(file));
    ROOTLOCK_TRY(members, ZipParser(*index.file, index.name).run());
    index.members = std::move(members);
    for (size_t i = 0; i < index.members.size(); ++i)
        index.by_name[index.members[i].name] = i;
    return index;
}

std::unique_ptr<util::ByteStream> open_member(const ZipIndex& index, const ZipMember& member) {
    return std::make_unique<ZipMemberStream>(index.file, index.name, member);
}

}  // namespace rootlock::fs
