// ld.so.cache reading, writing and lookup, after glibc 2.36's elf/cache.c, elf/stringtable.c,
// elf/dl-cache.c and sysdeps/generic/dl-cache.h; the unit tests hold real ldconfig output to it.
#include "loader/ld_so_cache.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <map>
#include <set>

#include <fmt/format.h>

#include "util/byte_source.hpp"

namespace rootlock::loader {

namespace {

constexpr std::string_view k_old_magic = "ld.so-1.7.0";
constexpr std::string_view k_new_magic = "glibc-ld.so.cache";
constexpr std::string_view k_new_version = "1.1";
constexpr uint64_t k_old_header_size = 16;  // magic[11], pad, uint32 nlibs
constexpr uint64_t k_old_entry_size = 12;   // int32 flags, uint32 key, value
constexpr uint64_t k_new_header_size = 48;
constexpr uint64_t k_new_entry_size = 24;  // int32 flags, uint32 key, value, osversion; u64 hwcap
constexpr uint64_t k_new_alignment = 8;    // __alignof__ (struct cache_file_new)
constexpr uint32_t k_extension_magic = 0xeaa42174;  // (uint32_t) -358342284
constexpr uint32_t k_tag_generator = 0;
constexpr uint32_t k_tag_hwcaps = 1;
// The extension directory ldconfig sizes for every known tag, whether written or not.
constexpr uint32_t k_extension_directory_size = 8 + 2 * 16;
constexpr uint8_t k_endian_mask = 3;
constexpr uint8_t k_endian_invalid = 1;
constexpr uint8_t k_endian_little = 2;
constexpr uint8_t k_endian_big = 3;

bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

// Bounds-checked little-endian reads over the whole file; callers check ranges first.
class Bytes {
  public:
    Bytes(std::span<const std::byte> bytes, const std::string& name)
        : m_bytes(bytes), m_name(name) {}

    uint64_t size() const { return m_bytes.size(); }
    bool fits(uint64_t offset, uint64_t length) const {
        return offset <= size() && length <= size() - offset;
    }
    uint8_t u8(uint64_t offset) const { return std::to_integer<uint8_t>(m_bytes[offset]); }
    uint32_t u32(uint64_t offset) const {
        uint32_t value = 0;
        for (uint64_t i = 0; i < 4; ++i)
            value |= uint32_t{u8(offset + i)} << (8 * i);
        return value;
    }
    uint64_t u64(uint64_t offset) const {
        return uint64_t{u32(offset)} | (uint64_t{u32(offset + 4)} << 32);
    }
    std::string_view text(uint64_t offset, uint64_t length) const {
        return {reinterpret_cast<const char*>(m_bytes.data()) + offset, length};
    }
    bool starts_with(std::string_view prefix, uint64_t offset = 0) const {
        return fits(offset, prefix.size()) && text(offset, prefix.size()) == prefix;
    }
    util::Error error(uint64_t offset, std::string message) const {
        return util::make_error(util::at_offset(m_name, offset), std::move(message));
    }
    std::string end_text() const {
        return fmt::format("the end of the file (0x{:x} bytes)", size());
    }

    // The NUL-terminated string at `offset`; `what` names it in errors, which are located at
    // `field` (where the offset was read) or at the string itself when it is unterminated.
    util::Result<std::string> c_string(uint64_t offset, uint64_t field,
                                       std::string_view what) const {
        if (offset >= size()) {
            return error(field,
                         fmt::format("{} offset 0x{:x} is past {}", what, offset, end_text()));
        }
        const void* start = m_bytes.data() + offset;
        const void* nul = std::memchr(start, 0, size() - offset);
        if (nul == nullptr)
            return error(offset, fmt::format("{} is not NUL-terminated", what));
        return std::string(static_cast<const char*>(start));
    }

  private:
    std::span<const std::byte> m_bytes;
    const std::string& m_name;
};

// Prints a short header field for messages: printable ASCII as is, the rest as \xNN.
std::string printable(std::string_view text) {
    std::string out;
    for (char c : text) {
        auto byte = static_cast<unsigned char>(c);
        if (byte >= 0x20 && byte < 0x7f && c != '"' && c != '\\') {
            out += c;
        } else {
            out += fmt::format("\\x{:02x}", byte);
        }
    }
    return out;
}

// The glibc-hwcaps names of the extension section (file-relative string offsets, as ld.so reads
// them), and the generator string.
struct Extensions {
    std::vector<std::string> hwcaps;
    std::string generator;
};

util::Result<Extensions> read_extensions(const Bytes& bytes, uint64_t offset_field,
                                         uint32_t offset) {
    Extensions result;
    if (offset == 0)
        return result;  // no extensions: not a format error
    if (offset % 4 != 0) {
        return bytes.error(offset_field,
                           fmt::format("extension offset 0x{:x} is not a multiple of 4", offset));
    }
    if (!bytes.fits(offset, 8)) {
        return bytes.error(offset_field, fmt::format("extension directory at 0x{:x} runs past {}",
                                                     offset, bytes.end_text()));
    }
    if (uint32_t magic = bytes.u32(offset); magic != k_extension_magic) {
        return bytes.error(offset, fmt::format("bad extension magic 0x{:08x}", magic));
    }
    uint32_t count = bytes.u32(offset + 4);
    if (!bytes.fits(offset + 8, uint64_t{count} * 16)) {
        return bytes.error(
            offset + 4, fmt::format("{} extension sections run past {}", count, bytes.end_text()));
    }
    for (uint32_t i = 0; i < count; ++i) {
        uint64_t at = offset + 8 + uint64_t{i} * 16;
        uint32_t tag = bytes.u32(at);
        uint32_t data = bytes.u32(at + 8);
        uint32_t size = bytes.u32(at + 12);
        if (!bytes.fits(data, size)) {
            return bytes.error(at, fmt::format("extension section {} (tag {}): 0x{:x} bytes at "
                                               "0x{:x} run past {}",
                                               i, tag, size, data, bytes.end_text()));
        }
        if (tag == k_tag_generator) {
            result.generator = std::string(bytes.text(data, size));
        } else if (tag == k_tag_hwcaps) {
            if (data % 4 != 0 || size % 4 != 0) {
                return bytes.error(at, fmt::format("glibc-hwcaps section (0x{:x} bytes at 0x{:x}) "
                                                   "is not made of aligned 4-byte indices",
                                                   size, data));
            }
            result.hwcaps.clear();
            for (uint32_t k = 0; k < size / 4; ++k) {
                uint64_t field = data + uint64_t{k} * 4;
                auto name =
                    bytes.c_string(bytes.u32(field), field, fmt::format("glibc-hwcaps name {}", k));
                if (!name.ok())
                    return name.error();
                // An empty name is refused: the writer (like ldconfig) represents "no
                // subdirectory" by the absence of the hwcaps bit, so it could not write it back.
                if (name->empty()) {
                    return bytes.error(field, fmt::format("glibc-hwcaps name {} is empty (ldconfig "
                                                          "never writes one, and ld.so would never "
                                                          "search it)",
                                                          k));
                }
                result.hwcaps.push_back(std::move(name).value());
            }
        }
        // Unknown tags are skipped, as ld.so skips them.
    }
    return result;
}

// The new-format cache whose header is at `base`.
util::Result<LdSoCache> parse_new(const Bytes& bytes, uint64_t base) {
    if (!bytes.fits(base, k_new_header_size)) {
        return bytes.error(base, fmt::format("header truncated: needs {} bytes, file has {}",
                                             k_new_header_size, bytes.size() - base));
    }
    uint32_t nlibs = bytes.u32(base + 20);
    uint32_t len_strings = bytes.u32(base + 24);
    uint8_t endian = bytes.u8(base + 28) & k_endian_mask;
    if (endian == k_endian_invalid)
        return bytes.error(base + 28, "cache flags mark the file invalid");
    if (endian == k_endian_big) {
        return bytes.error(base + 28, "big-endian cache; only little-endian caches are read");
    }
    uint64_t table = base + k_new_header_size;
    uint64_t table_size = uint64_t{nlibs} * k_new_entry_size;
    if (!bytes.fits(table, table_size)) {
        return bytes.error(base + 20,
                           fmt::format("{} entries need 0x{:x} bytes from 0x{:x}, past {}", nlibs,
                                       table_size, table, bytes.end_text()));
    }
    if (!bytes.fits(table + table_size, len_strings)) {
        return bytes.error(base + 24,
                           fmt::format("string table of 0x{:x} bytes from 0x{:x} runs past {}",
                                       len_strings, table + table_size, bytes.end_text()));
    }
    auto extensions = read_extensions(bytes, base + 32, bytes.u32(base + 32));
    if (!extensions.ok())
        return extensions.error();

    LdSoCache cache;
    cache.generator = std::move(extensions->generator);
    cache.entries.reserve(nlibs);
    for (uint32_t i = 0; i < nlibs; ++i) {
        uint64_t at = table + uint64_t{i} * k_new_entry_size;
        CacheEntry entry;
        entry.flags = static_cast<int32_t>(bytes.u32(at));
        entry.hwcap = bytes.u64(at + 16);
        // Key and value count from the new header, which is the file's start in the new format.
        auto soname =
            bytes.c_string(base + bytes.u32(at + 4), at + 4, fmt::format("entry {}: soname", i));
        if (!soname.ok())
            return soname.error();
        auto path =
            bytes.c_string(base + bytes.u32(at + 8), at + 8, fmt::format("entry {}: path", i));
        if (!path.ok())
            return path.error();
        entry.soname = std::move(soname).value();
        entry.path = std::move(path).value();
        if (is_hwcaps_extension(entry.hwcap)) {
            auto index = static_cast<uint32_t>(entry.hwcap);
            if (index >= extensions->hwcaps.size()) {
                return bytes.error(at + 16,
                                   fmt::format("entry {}: glibc-hwcaps index {} is out of range "
                                               "({} subdirectories)",
                                               i, index, extensions->hwcaps.size()));
            }
            entry.hwcaps_subdir = extensions->hwcaps[index];
        }
        cache.entries.push_back(std::move(entry));
    }
    return cache;
}

// The old libc5-era format; a new-format cache may hide behind it, aligned after its entries.
util::Result<LdSoCache> parse_old(const Bytes& bytes) {
    if (!bytes.fits(0, k_old_header_size)) {
        return bytes.error(0,
                           fmt::format("old-format header truncated: needs {} bytes, file has {}",
                                       k_old_header_size, bytes.size()));
    }
    uint32_t nlibs = bytes.u32(12);
    uint64_t strings = k_old_header_size + uint64_t{nlibs} * k_old_entry_size;
    if (strings > bytes.size()) {
        return bytes.error(12, fmt::format("old-format table of {} entries runs past {}", nlibs,
                                           bytes.end_text()));
    }
    uint64_t new_base = (strings + k_new_alignment - 1) & ~(k_new_alignment - 1);
    if (bytes.fits(new_base, k_new_header_size) &&
        bytes.starts_with(std::string(k_new_magic) + std::string(k_new_version), new_base)) {
        return parse_new(bytes, new_base);
    }
    LdSoCache cache;
    for (uint32_t i = 0; i < nlibs; ++i) {
        uint64_t at = k_old_header_size + uint64_t{i} * k_old_entry_size;
        CacheEntry entry;
        entry.flags = static_cast<int32_t>(bytes.u32(at));
        auto soname =
            bytes.c_string(strings + bytes.u32(at + 4), at + 4, fmt::format("entry {}: soname", i));
        if (!soname.ok())
            return soname.error();
        auto path =
            bytes.c_string(strings + bytes.u32(at + 8), at + 8, fmt::format("entry {}: path", i));
        if (!path.ok())
            return path.error();
        entry.soname = std::move(soname).value();
        entry.path = std::move(path).value();
        cache.entries.push_back(std::move(entry));
    }
    return cache;
}

// ldconfig's string table (stringtable_finalize): strings ordered by their reversal, descending,
// so that each string that ends another follows it and shares its bytes (tail merging).
struct StringTable {
    std::map<std::string, uint32_t> offsets;
    std::string bytes;
};

StringTable build_string_table(const std::set<std::string>& strings) {
    std::vector<std::string> order;
    order.reserve(strings.size());
    for (const auto& s : strings)
        order.emplace_back(s.rbegin(), s.rend());
    std::sort(order.begin(), order.end(), std::greater<>());  // unsigned bytes, like memcmp
    StringTable table;
    uint64_t previous_offset = 0;
    std::string previous;
    for (size_t j = 0; j < order.size(); ++j) {
        std::string current(order[j].rbegin(), order[j].rend());
        uint64_t offset = 0;
        if (j > 0) {
            bool merged =
                previous.size() >= current.size() &&
                previous.compare(previous.size() - current.size(), current.size(), current) == 0;
            offset = merged ? previous_offset + previous.size() - current.size()
                            : previous_offset + previous.size() + 1;
        }
        if (table.bytes.size() < offset + current.size() + 1) {
            table.bytes.resize(offset + current.size() + 1, '\0');
            table.bytes.replace(offset, current.size(), current);
        }
        table.offsets[current] = static_cast<uint32_t>(offset);
        previous_offset = offset;
        previous = std::move(current);
    }
    return table;
}

void put_u32(std::vector<std::byte>& out, uint32_t value) {
    for (int i = 0; i < 4; ++i)
        out.push_back(static_cast<std::byte>((value >> (8 * i)) & 0xff));
}

void put_u64(std::vector<std::byte>& out, uint64_t value) {
    put_u32(out, static_cast<uint32_t>(value));
    put_u32(out, static_cast<uint32_t>(value >> 32));
}

void put_text(std::vector<std::byte>& out, std::string_view text) {
    for (char c : text)
        out.push_back(static_cast<std::byte>(c));
}

}  // namespace

bool is_hwcaps_extension(uint64_t hwcap) {
    return ((hwcap >> 32) & ~uint64_t{k_hwcap_isa_level_mask}) == (k_hwcap_extension >> 32);
}

util::Result<LdSoCache> parse_ld_so_cache(std::span<const std::byte> bytes,
                                          const std::string& name) {
    Bytes data(bytes, name);
    if (data.size() == 0)
        return data.error(0, "empty file");
    if (data.starts_with(k_old_magic))
        return parse_old(data);
    if (data.starts_with(k_new_magic)) {
        if (!data.fits(0, k_new_magic.size() + k_new_version.size())) {
            return data.error(0, "truncated magic");
        }
        if (auto version = data.text(k_new_magic.size(), k_new_version.size());
            version != k_new_version) {
            return data.error(k_new_magic.size(),
                              fmt::format("unsupported cache version \"{}\"", printable(version)));
        }
        return parse_new(data, 0);
    }
    std::string_view head = data.text(0, data.size());
    if (k_old_magic.starts_with(head) || k_new_magic.starts_with(head)) {
        return data.error(0, "truncated magic");
    }
    return data.error(0, "unknown magic (not an ld.so.cache file)");
}

int cache_libcmp(std::string_view left, std::string_view right) {
    size_t i = 0;
    size_t j = 0;
    auto at = [](std::string_view s, size_t k) { return k < s.size() ? s[k] : '\0'; };
    while (i < left.size()) {
        char a = left[i];
        char b = at(right, j);
        if (is_digit(a)) {
            if (!is_digit(b))
                return 1;
            size_t i_end = i;
            size_t j_end = j;
            while (i_end < left.size() && is_digit(left[i_end]))
                ++i_end;
            while (j_end < right.size() && is_digit(right[j_end]))
                ++j_end;
            while (i + 1 < i_end && left[i] == '0')
                ++i;
            while (j + 1 < j_end && right[j] == '0')
                ++j;
            std::string_view x = left.substr(i, i_end - i);
            std::string_view y = right.substr(j, j_end - j);
            if (x.size() != y.size())
                return x.size() < y.size() ? -1 : 1;
            if (int c = x.compare(y); c != 0)
                return c < 0 ? -1 : 1;
            i = i_end;
            j = j_end;
        } else if (is_digit(b)) {
            return -1;
        } else if (a != b) {
            return static_cast<signed char>(a) - static_cast<signed char>(b);
        } else {
            ++i;
            ++j;
        }
    }
    return -static_cast<signed char>(at(right, j));
}

bool cache_entry_before(const CacheEntry& left, const CacheEntry& right) {
    if (int c = cache_libcmp(left.soname, right.soname); c != 0)
        return c > 0;
    if (left.flags != right.flags)
        return left.flags > right.flags;
    bool left_named = !left.hwcaps_subdir.empty();
    bool right_named = !right.hwcaps_subdir.empty();
    if (left_named != right_named)
        return left_named;
    if (left_named)
        return left.hwcaps_subdir < right.hwcaps_subdir;
    int left_bits = std::popcount(left.hwcap);
    int right_bits = std::popcount(right.hwcap);
    if (left_bits != right_bits)
        return left_bits > right_bits;
    return left.hwcap > right.hwcap;
}

void sort_cache_entries(std::vector<CacheEntry>& entries) {
    std::stable_sort(entries.begin(), entries.end(), cache_entry_before);
}

void assign_hwcaps_indices(std::vector<CacheEntry>& entries) {
    std::set<std::string> names;
    for (const auto& entry : entries) {
        if (!entry.hwcaps_subdir.empty())
            names.insert(entry.hwcaps_subdir);
    }
    for (auto& entry : entries) {
        if (entry.hwcaps_subdir.empty()) {
            // No subdirectory: no extension index either, so what is written reads back.
            if (is_hwcaps_extension(entry.hwcap))
                entry.hwcap = 0;
            continue;
        }
        auto index =
            static_cast<uint64_t>(std::distance(names.begin(), names.find(entry.hwcaps_subdir)));
        uint64_t isa_level = (entry.hwcap >> 32) & k_hwcap_isa_level_mask;
        entry.hwcap = k_hwcap_extension | (isa_level << 32) | index;
    }
}

std::vector<std::byte> write_ld_so_cache(const std::vector<CacheEntry>& input,
                                         const CacheWriteOptions& options) {
    std::vector<CacheEntry> entries = input;
    sort_cache_entries(entries);
    assign_hwcaps_indices(entries);

    std::set<std::string> strings;
    std::set<std::string> hwcaps;
    for (const auto& entry : entries) {
        strings.insert(entry.soname);
        strings.insert(entry.path);
        if (!entry.hwcaps_subdir.empty()) {
            strings.insert(entry.hwcaps_subdir);
            hwcaps.insert(entry.hwcaps_subdir);
        }
    }
    StringTable table = build_string_table(strings);

    // Offsets count from the start of the file, which is the new header: ldconfig's str_offset.
    auto string_base = static_cast<uint32_t>(k_new_header_size + entries.size() * k_new_entry_size);
    uint32_t extension_offset =
        (string_base + static_cast<uint32_t>(table.bytes.size()) + 3) & ~uint32_t{3};

    std::vector<std::byte> out;
    put_text(out, k_new_magic);
    put_text(out, k_new_version);
    put_u32(out, static_cast<uint32_t>(entries.size()));
    put_u32(out, static_cast<uint32_t>(table.bytes.size()));
    out.push_back(std::byte{k_endian_little});
    out.insert(out.end(), 3, std::byte{0});
    put_u32(out, extension_offset);
    out.insert(out.end(), 12, std::byte{0});
    for (const auto& entry : entries) {
        put_u32(out, static_cast<uint32_t>(entry.flags));
        put_u32(out, string_base + table.offsets.at(entry.soname));
        put_u32(out, string_base + table.offsets.at(entry.path));
        put_u32(out, 0);  // osversion, unused since glibc 2.33
        put_u64(out, entry.hwcap);
    }
    put_text(out, table.bytes);
    out.resize(extension_offset, std::byte{0});

    // The directory, then the hwcaps indices, then the generator (placed as ldconfig places it:
    // after room for every known section, less the hwcaps one when it is absent).
    auto hwcaps_count = static_cast<uint32_t>(hwcaps.size());
    uint32_t hwcaps_offset = extension_offset + k_extension_directory_size;
    uint32_t generator_offset =
        hwcaps_count == 0 ? hwcaps_offset - 16 : hwcaps_offset + 4 * hwcaps_count;
    put_u32(out, k_extension_magic);
    put_u32(out, hwcaps_count == 0 ? 1 : 2);
    put_u32(out, k_tag_generator);
    put_u32(out, 0);
    put_u32(out, generator_offset);
    put_u32(out, static_cast<uint32_t>(options.generator.size()));
    if (hwcaps_count > 0) {
        put_u32(out, k_tag_hwcaps);
        put_u32(out, 0);
        put_u32(out, hwcaps_offset);
        put_u32(out, 4 * hwcaps_count);
        for (const auto& name : hwcaps)
            put_u32(out, string_base + table.offsets.at(name));
    }
    put_text(out, options.generator);
    return out;
}

}  // namespace rootlock::loader
