// index_tar: tar headers parsed by hand (ustar, pax records, GNU long names, base-256 numbers),
// every read bounds-checked, plus member streams over pread.
#include "image/tar_index.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <limits>
#include <optional>
#include <span>
#include <tuple>

#include <fmt/format.h>

#include "fs/archive_reader.hpp"
#include "fs/tree_errors.hpp"
#include "util/atomic_file.hpp"
#include "util/sha256.hpp"

namespace rootlock::image {

namespace {

constexpr uint64_t k_block = 512;
constexpr size_t k_piece = size_t{1} << 20;
using Block = std::array<unsigned char, k_block>;

// Bytes of untrusted text made safe for a one-line message.
std::string printable(std::string_view text) {
    std::string out;
    for (char ch : text) {
        auto byte = static_cast<unsigned char>(ch);
        if (byte < 0x20 || byte == 0x7F) {
            out += fmt::format("\\x{:02x}", byte);
        } else {
            out += ch;
        }
    }
    return out;
}

// The text of a NUL-terminated header field of `length` bytes at `offset`.
std::string field_text(const Block& block, size_t offset, size_t length) {
    const char* begin = reinterpret_cast<const char*>(block.data()) + offset;
    size_t used = 0;
    while (used < length && begin[used] != '\0')
        ++used;
    return std::string(begin, used);
}

// An octal or base-256 numeric field (GNU's rules: base-256 starts with 0x80, or 0xFF for a
// negative number). Errors carry no location; the caller adds the header's.
util::Result<int64_t> parse_number(const Block& block, size_t offset, size_t length,
                                   std::string_view field, bool allow_negative) {
    std::span<const unsigned char> bytes(block.data() + offset, length);
    const unsigned char first = bytes[0];
    if ((first & 0x80U) != 0) {
        if (first != 0x80U && first != 0xFFU) {
            return util::make_error(
                "", fmt::format("{}: bad base-256 number (first byte 0x{:02x})", field, first));
        }
        const bool negative = first == 0xFFU;
        if (negative && !allow_negative)
            return util::make_error("", fmt::format("{}: negative value", field));
        // Sign-extended big-endian: the bytes shifted out must all repeat the sign.
        uint64_t value = negative ? ~uint64_t{0} : 0;
        const uint64_t sign_byte = negative ? 0xFFU : 0U;
        for (unsigned char byte : bytes.subspan(1)) {
            if ((value >> 56) != sign_byte)
                return util::make_error("", fmt::format("{}: base-256 number too large", field));
            value = (value << 8) | byte;
        }
        if (((value >> 63) != 0) != negative)
            return util::make_error("", fmt::format("{}: base-256 number too large", field));
        return static_cast<int64_t>(value);
    }
    size_t at = 0;
    while (at < length && bytes[at] == ' ')
        ++at;
    uint64_t value = 0;
    while (at < length && bytes[at] >= '0' && bytes[at] <= '7') {
        if (value > (uint64_t{std::numeric_limits<int64_t>::max()} >> 3))
            return util::make_error("", fmt::format("{}: octal number too large", field));
        value = (value << 3) | (bytes[at] - '0');
        ++at;
    }
    for (; at < length; ++at) {
        if (bytes[at] != ' ' && bytes[at] != '\0') {
            std::string_view text(reinterpret_cast<const char*>(bytes.data()), length);
            return util::make_error("", fmt::format("{}: bad octal number \"{}\"", field,
                                                    printable(text.substr(0, text.find('\0')))));
        }
    }
    return static_cast<int64_t>(value);
}

// A pax decimal ("1234"); nullopt for anything else, including overflow.
std::optional<uint64_t> parse_decimal(std::string_view text) {
    if (text.empty() || text.size() > 20)
        return std::nullopt;
    uint64_t value = 0;
    for (char ch : text) {
        if (ch < '0' || ch > '9')
            return std::nullopt;
        const auto digit = static_cast<uint64_t>(ch - '0');
        if (value > (std::numeric_limits<uint64_t>::max() - digit) / 10)
            return std::nullopt;
        value = value * 10 + digit;
    }
    return value;
}

struct Timestamp {
    int64_t seconds = 0;
    uint32_t nanoseconds = 0;
};

// A pax time: "-?SECONDS(.FRACTION)?", the fraction cut to nanoseconds.
std::optional<Timestamp> parse_pax_time(std::string_view text) {
    const bool negative = !text.empty() && text.front() == '-';
    if (negative)
        text.remove_prefix(1);
    const size_t dot = text.find('.');
    auto whole = parse_decimal(text.substr(0, dot));
    if (!whole || *whole > uint64_t{std::numeric_limits<int64_t>::max()})
        return std::nullopt;
    uint32_t nanoseconds = 0;
    if (dot != std::string_view::npos) {
        std::string_view fraction = text.substr(dot + 1);
        if (fraction.empty())
            return std::nullopt;
        uint32_t scale = 100000000;
        for (char ch : fraction) {
            if (ch < '0' || ch > '9')
                return std::nullopt;
            nanoseconds += static_cast<uint32_t>(ch - '0') * scale;
            scale /= 10;
        }
    }
    Timestamp out{static_cast<int64_t>(*whole), nanoseconds};
    if (negative) {
        // -1.25 is 1.25 s before the epoch: -2 s plus 0.75 s.
        out.seconds = -out.seconds;
        if (nanoseconds != 0) {
            out.seconds -= 1;
            out.nanoseconds = 1000000000U - nanoseconds;
        }
    }
    return out;
}

// Extended headers read so far, waiting for the member they describe.
struct Pending {
    bool any = false;
    uint64_t first_offset = 0;
    std::optional<std::string> pax_path, pax_linkpath, gnu_name, gnu_link;
    std::optional<uint64_t> size, uid, gid;
    std::optional<Timestamp> mtime;
    std::map<std::string, std::string> xattrs;
};

class TarParser {
  public:
    TarParser(const util::FileSource& file, std::string name)
        : m_file(file), m_name(std::move(name)) {}

    util::Result<std::vector<TarMember>> run();

  private:
    util::Error error_at(uint64_t offset, std::string message) const {
        return util::make_error(util::at_offset(m_name, offset), std::move(message));
    }
    util::Error relocate(const util::Error& error, uint64_t offset) const {
        return error_at(offset, error.message);
    }
    util::Result<std::string> read_extended(uint64_t header, uint64_t data, uint64_t size) const;
    util::Status apply_pax(std::string_view data, uint64_t data_offset, bool global);
    util::Result<TarMember> make_member(const Block& block, uint64_t offset, uint64_t size);

    const util::FileSource& m_file;
    std::string m_name;
    Pending m_pending;
};

util::Result<std::string> TarParser::read_extended(uint64_t header, uint64_t data,
                                                   uint64_t size) const {
    if (size > k_max_tar_extended_header) {
        return error_at(header, fmt::format("extended header of {} bytes is larger than {}", size,
                                            k_max_tar_extended_header));
    }
    std::string text(static_cast<size_t>(size), '\0');
    auto read = m_file.read_at(data, std::as_writable_bytes(std::span(text)));
    if (!read.ok())
        return error_at(header, "unreadable extended header: " + read.error().message);
    return text;
}

util::Status TarParser::apply_pax(std::string_view data, uint64_t data_offset, bool global) {
    size_t at = 0;
    while (at < data.size() && data[at] != '\0') {
        const uint64_t where = data_offset + at;
        size_t space = at;
        while (space < data.size() && space - at < 20 && data[space] >= '0' && data[space] <= '9')
            ++space;
        auto length = parse_decimal(data.substr(at, space - at));
        if (!length || space >= data.size() || data[space] != ' ')
            return error_at(where, "bad pax record length");
        if (*length <= space - at + 1 || *length > data.size() - at)
            return error_at(where, fmt::format("pax record length {} is out of bounds", *length));
        std::string_view record = data.substr(at, static_cast<size_t>(*length));
        if (record.back() != '\n')
            return error_at(where, "pax record does not end with a newline");
        std::string_view body = record.substr(space - at + 1);
        body.remove_suffix(1);
        const size_t equals = body.find('=');
        if (equals == std::string_view::npos || equals == 0)
            return error_at(where, "pax record without a keyword");
        std::string_view key = body.substr(0, equals);
        std::string_view value = body.substr(equals + 1);
        at += static_cast<size_t>(*length);
        if (key.starts_with("GNU.sparse."))
            return error_at(where, "GNU sparse members are not supported");
        if (global)
            continue;  // global records ('g') set defaults nobody writes for a rootfs
        // An empty value deletes the keyword: the ustar header's field applies again.
        const bool reset = value.empty();
        if (key == "path") {
            m_pending.pax_path = reset ? std::nullopt : std::optional<std::string>(value);
        } else if (key == "linkpath") {
            m_pending.pax_linkpath = reset ? std::nullopt : std::optional<std::string>(value);
        } else if (key == "size" || key == "uid" || key == "gid") {
            std::optional<uint64_t> number;
            if (!reset) {
                number = parse_decimal(value);
                if (!number || *number > uint64_t{std::numeric_limits<int64_t>::max()}) {
                    return error_at(
                        where, fmt::format("pax {}: bad number \"{}\"", key, printable(value)));
                }
            }
            (key == "size"  ? m_pending.size
             : key == "uid" ? m_pending.uid
                            : m_pending.gid) = number;
        } else if (key == "mtime") {
            m_pending.mtime.reset();
            if (!reset) {
                m_pending.mtime = parse_pax_time(value);
                if (!m_pending.mtime)
                    return error_at(where,
                                    fmt::format("pax mtime: bad time \"{}\"", printable(value)));
            }
        } else if (key.starts_with("SCHILY.xattr.") && key.size() > 13) {
            std::string name(key.substr(13));
            if (reset) {
                m_pending.xattrs.erase(name);
            } else {
                m_pending.xattrs[name] = std::string(value);
            }
        }
    }
    return util::ok_status();
}

// Header offsets of ustar fields.
constexpr size_t k_name = 0, k_mode = 100, k_uid = 108, k_gid = 116, k_size = 124, k_mtime = 136,
                 k_checksum = 148, k_typeflag = 156, k_linkname = 157, k_magic = 257,
                 k_devmajor = 329, k_devminor = 337, k_prefix = 345;

std::string_view type_name(TarMemberType type) {
    switch (type) {
        case TarMemberType::regular:
            return "regular file";
        case TarMemberType::hardlink:
            return "hard link";
        case TarMemberType::symlink:
            return "symbolic link";
        case TarMemberType::char_device:
            return "character device";
        case TarMemberType::block_device:
            return "block device";
        case TarMemberType::directory:
            return "directory";
        case TarMemberType::fifo:
            return "fifo";
    }
    return "member";
}

util::Result<TarMember> TarParser::make_member(const Block& block, uint64_t offset, uint64_t size) {
    TarMember member;
    switch (block[k_typeflag]) {
        case '0':
        case '\0':
        case '7':
            member.type = TarMemberType::regular;
            break;
        case '1':
            member.type = TarMemberType::hardlink;
            break;
        case '2':
            member.type = TarMemberType::symlink;
            break;
        case '3':
            member.type = TarMemberType::char_device;
            break;
        case '4':
            member.type = TarMemberType::block_device;
            break;
        case '5':
            member.type = TarMemberType::directory;
            break;
        case '6':
            member.type = TarMemberType::fifo;
            break;
        default:
            return error_at(
                offset,
                fmt::format("unsupported member type '{}'",
                            printable(std::string(1, static_cast<char>(block[k_typeflag])))));
    }
    // Only GNU tar and libarchive agree on skipping data after a hard link; for other
    // non-regular members readers disagree, so an archive declaring data there is ambiguous.
    if (size != 0 && member.type != TarMemberType::regular &&
        member.type != TarMemberType::hardlink) {
        return error_at(offset,
                        fmt::format("a {} declares {} data bytes", type_name(member.type), size));
    }
    const bool posix = std::memcmp(block.data() + k_magic, "ustar\0", 6) == 0;
    if (m_pending.pax_path) {
        member.stored_path = *m_pending.pax_path;
    } else if (m_pending.gnu_name) {
        member.stored_path = *m_pending.gnu_name;
    } else {
        std::string prefix = posix ? field_text(block, k_prefix, 155) : std::string();
        std::string name = field_text(block, k_name, 100);
        member.stored_path = prefix.empty() ? name : prefix + "/" + name;
    }
    auto path = canonical_tar_path(member.stored_path);
    if (!path.ok())
        return relocate(path.error(), offset);
    member.path = std::move(path.value());
    std::string link = m_pending.pax_linkpath.value_or(
        m_pending.gnu_link.value_or(field_text(block, k_linkname, 100)));
    if (member.type == TarMemberType::hardlink) {
        auto target = canonical_tar_path(link);
        if (!target.ok())
            return error_at(offset, "hard link target: " + target.error().message);
        member.link_target = std::move(target.value());
    } else if (member.type == TarMemberType::symlink) {
        member.link_target = std::move(link);
    }
    auto mode = parse_number(block, k_mode, 8, "mode", false);
    if (!mode.ok())
        return relocate(mode.error(), offset);
    member.mode = static_cast<uint32_t>(mode.value() & 07777);
    // A pax record replaces a header field, which then need not be valid (GNU tar writes
    // an out-of-range uid as zeros plus a record).
    if (m_pending.uid) {
        member.uid = *m_pending.uid;
    } else {
        auto uid = parse_number(block, k_uid, 8, "uid", false);
        if (!uid.ok())
            return relocate(uid.error(), offset);
        member.uid = static_cast<uint64_t>(uid.value());
    }
    if (m_pending.gid) {
        member.gid = *m_pending.gid;
    } else {
        auto gid = parse_number(block, k_gid, 8, "gid", false);
        if (!gid.ok())
            return relocate(gid.error(), offset);
        member.gid = static_cast<uint64_t>(gid.value());
    }
    Timestamp time;
    if (m_pending.mtime) {
        time = *m_pending.mtime;
    } else {
        auto mtime = parse_number(block, k_mtime, 12, "mtime", true);
        if (!mtime.ok())
            return relocate(mtime.error(), offset);
        time.seconds = mtime.value();
    }
    member.mtime = time.seconds;
    member.mtime_nsec = time.nanoseconds;
    if (member.type == TarMemberType::char_device || member.type == TarMemberType::block_device) {
        for (auto [field, at, out] : {std::tuple{"devmajor", k_devmajor, &member.dev_major},
                                      std::tuple{"devminor", k_devminor, &member.dev_minor}}) {
            auto number = parse_number(block, at, 8, field, false);
            if (!number.ok())
                return relocate(number.error(), offset);
            if (number.value() > std::numeric_limits<uint32_t>::max())
                return error_at(offset, fmt::format("{}: value too large", field));
            *out = static_cast<uint32_t>(number.value());
        }
    }
    member.size = size;
    member.xattrs.assign(m_pending.xattrs.begin(), m_pending.xattrs.end());
    member.header_offset = m_pending.any ? m_pending.first_offset : offset;
    member.data_offset = offset + k_block;
    return member;
}

util::Result<std::vector<TarMember>> TarParser::run() {
    std::vector<TarMember> members;
    const uint64_t file_size = m_file.size();
    uint64_t offset = 0;
    Block block{};
    while (true) {
        if (offset >= file_size)
            break;
        if (file_size - offset < k_block) {
            return error_at(offset, fmt::format("truncated header ({} of {} bytes)",
                                                file_size - offset, k_block));
        }
        auto read = m_file.read_at(offset, std::as_writable_bytes(std::span(block)));
        if (!read.ok())
            return error_at(offset, "unreadable header: " + read.error().message);
        if (std::all_of(block.begin(), block.end(), [](unsigned char b) { return b == 0; }))
            break;
        auto stored = parse_number(block, k_checksum, 8, "checksum", false);
        if (!stored.ok())
            return relocate(stored.error(), offset);
        uint64_t unsigned_sum = 0;
        int64_t signed_sum = 0;
        for (size_t i = 0; i < k_block; ++i) {
            const unsigned char byte = (i >= k_checksum && i < k_checksum + 8) ? ' ' : block[i];
            unsigned_sum += byte;
            signed_sum += static_cast<signed char>(byte);
        }
        if (static_cast<uint64_t>(stored.value()) != unsigned_sum && stored.value() != signed_sum) {
            return error_at(offset, fmt::format("header checksum mismatch (stored 0{:o}, computed "
                                                "0{:o})",
                                                stored.value(), unsigned_sum));
        }
        if (std::memcmp(block.data() + k_magic, "ustar", 5) != 0)
            return error_at(offset, "not a ustar header (no \"ustar\" magic)");
        const unsigned char type = block[k_typeflag];
        auto header_size = parse_number(block, k_size, 12, "size", false);
        if (!header_size.ok())
            return relocate(header_size.error(), offset);
        const bool extended = type == 'x' || type == 'g' || type == 'L' || type == 'K';
        const uint64_t size = (!extended && m_pending.size)
                                  ? *m_pending.size
                                  : static_cast<uint64_t>(header_size.value());
        const uint64_t data = offset + k_block;
        if (size > file_size - data) {
            return error_at(offset, fmt::format("member data of {} bytes runs past the end of "
                                                "the file ({} bytes)",
                                                size, file_size));
        }
        const uint64_t next = data + (size + k_block - 1) / k_block * k_block;
        if (type == 'S')
            return error_at(offset, "GNU sparse members are not supported");
        if (extended) {
            if (!m_pending.any) {
                m_pending.any = true;
                m_pending.first_offset = offset;
            }
            ROOTLOCK_TRY(text, read_extended(offset, data, size));
            if (type == 'x' || type == 'g') {
                ROOTLOCK_TRY(applied, apply_pax(text, data, type == 'g'));
                (void)applied;
            } else {
                // GNU long names end with a NUL (counted in the size).
                std::string name = text.substr(0, text.find('\0'));
                (type == 'L' ? m_pending.gnu_name : m_pending.gnu_link) = std::move(name);
            }
            if (type == 'g' && m_pending.first_offset == offset)
                m_pending = Pending{};
            offset = next;
            continue;
        }
        ROOTLOCK_TRY(member, make_member(block, offset, size));
        members.push_back(std::move(member));
        m_pending = Pending{};
        offset = next;
    }
    if (m_pending.any)
        return error_at(m_pending.first_offset, "extended header not followed by a member");
    return members;
}

class TarMemberStream final : public util::ByteStream {
  public:
    TarMemberStream(std::shared_ptr<const util::FileSource> file, uint64_t offset, uint64_t size)
        : m_file(std::move(file)), m_offset(offset), m_remaining(size) {}

    util::Result<size_t> read(std::span<std::byte> out) override {
        const size_t count = static_cast<size_t>(std::min<uint64_t>(out.size(), m_remaining));
        if (count == 0)
            return size_t{0};
        ROOTLOCK_TRY(done, m_file->read_at(m_offset, out.first(count)));
        (void)done;
        m_offset += count;
        m_remaining -= count;
        return count;
    }

  private:
    std::shared_ptr<const util::FileSource> m_file;
    uint64_t m_offset;
    uint64_t m_remaining;
};

}  // namespace

const TarMember* TarIndex::find(std::string_view canonical_path) const {
    auto it = by_path.find(canonical_path);
    return it == by_path.end() ? nullptr : &members[it->second];
}

util::Result<std::string> canonical_tar_path(std::string_view stored) {
    if (stored.empty())
        return util::make_error("", "empty member path");
    if (stored.find('\0') != std::string_view::npos)
        return util::make_error("", "member path holds a NUL byte: " + printable(stored));
    std::string out;
    size_t at = 0;
    while (at <= stored.size()) {
        size_t slash = stored.find('/', at);
        if (slash == std::string_view::npos)
            slash = stored.size();
        std::string_view part = stored.substr(at, slash - at);
        if (part == "..")
            return util::make_error("", "member path climbs out of the root: " + printable(stored));
        if (!part.empty() && part != ".") {
            out += '/';
            out += part;
        }
        at = slash + 1;
    }
    return out.empty() ? std::string("/") : out;
}

util::Result<TarIndex> index_tar(const std::string& host_path) {
    ROOTLOCK_TRY(file, util::FileSource::open(host_path, host_path));
    TarIndex index;
    index.name = host_path;
    index.file = std::shared_ptr<const util::FileSource>(std::move(file));
    ROOTLOCK_TRY(members, TarParser(*index.file, host_path).run());
    index.members = std::move(members);
    for (size_t i = 0; i < index.members.size(); ++i)
        index.by_path[index.members[i].path] = i;
    return index;
}

std::unique_ptr<util::ByteStream> open_member(const TarIndex& index, const TarMember& member) {
    return std::make_unique<TarMemberStream>(index.file, member.data_offset, member.size);
}

}  // namespace rootlock::image
