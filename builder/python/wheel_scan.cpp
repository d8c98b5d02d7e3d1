// The one pass over a wheel: entries confined and hashed as they stream by, ELF objects parsed
// on the way, dist-info texts kept; then the structure, WHEEL and RECORD are checked at the end.
#include "python/wheel_scan.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>

#include <fmt/format.h>

#include "elf/elf_reader.hpp"
#include "fs/archive_reader.hpp"
#include "gpu/fatbin_stream.hpp"
#include "python/metadata.hpp"
#include "python/pep440.hpp"
#include "python/record.hpp"
#include "util/sha256.hpp"

namespace rootlock::python {

namespace {

constexpr size_t k_head_size = 64;  // enough for the ELF magic and a "#!python" line start
constexpr size_t k_drain_block = 64U << 10;

bool starts_with(std::string_view text, std::string_view prefix) {
    return text.substr(0, prefix.size()) == prefix;
}

bool ends_with(std::string_view text, std::string_view suffix) {
    return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

std::string_view top_component(std::string_view path) {
    return path.substr(0, path.find('/'));
}

// Counts and hashes every byte of the current entry; more bytes than declared is a lie of the
// archive (a zip bomb, or a header made to pass a size check), so reading stops right there.
class EntryStream final : public util::ByteStream {
  public:
    EntryStream(fs::ArchiveReader& reader, uint64_t declared, std::string too_large)
        : m_reader(reader), m_declared(declared), m_too_large(std::move(too_large)) {}

    util::Result<size_t> read(std::span<std::byte> out) override {
        if (m_failure)
            return *m_failure;
        auto count = m_reader.read(out);
        if (!count.ok()) {
            m_failure = count.error();
            return count;
        }
        m_total += *count;
        if (m_total > m_declared) {
            m_failure = util::make_error("", m_too_large);
            return *m_failure;
        }
        m_hash.update(std::span<const std::byte>(out.data(), *count));
        if (m_observer != nullptr)
            m_observer->feed(std::span<const std::byte>(out.data(), *count));
        return count;
    }

    // Every byte read from now on is also shown to `observer`.
    void observe(gpu::FatbinStreamScanner* observer) { m_observer = observer; }

    uint64_t total() const { return m_total; }
    const util::Sha256& hash() const { return m_hash; }
    const std::optional<util::Error>& failure() const { return m_failure; }

  private:
    fs::ArchiveReader& m_reader;
    uint64_t m_declared;
    std::string m_too_large;
    uint64_t m_total = 0;
    util::Sha256 m_hash;
    std::optional<util::Error> m_failure;
    gpu::FatbinStreamScanner* m_observer = nullptr;
};

// What the scanner found, on the entry: the architectures that can run, or why none were read
// (ld.so loads such an object all the same, so it is a note for later, not a refusal).
void record_device_code(util::Result<std::optional<gpu::FatbinSummary>> found, WheelEntry& entry) {
    if (!found) {
        entry.device_code_error = found.error().text();
        return;
    }
    if (!found->has_value())
        return;
    for (const gpu::SmName& name : (*found)->architectures)
        entry.architectures.push_back(name.text());
}

// Serves the bytes already peeked from an entry, then the rest of it.
class PrefixStream final : public util::ByteStream {
  public:
    PrefixStream(std::span<const std::byte> head, util::ByteStream& rest)
        : m_head(head), m_rest(rest) {}
    util::Result<size_t> read(std::span<std::byte> out) override {
        if (m_offset < m_head.size()) {
            size_t count = std::min(out.size(), m_head.size() - m_offset);
            std::memcpy(out.data(), m_head.data() + m_offset, count);
            m_offset += count;
            return count;
        }
        return m_rest.read(out);
    }

  private:
    std::span<const std::byte> m_head;
    size_t m_offset = 0;
    util::ByteStream& m_rest;
};

// Fills `out` from `stream` until it is full or the stream ends; the count read.
util::Result<size_t> read_full(util::ByteStream& stream, std::span<std::byte> out) {
    size_t got = 0;
    while (got < out.size()) {
        auto count = stream.read(out.subspan(got));
        if (!count.ok())
            return count.error();
        if (*count == 0)
            break;
        got += *count;
    }
    return got;
}

// Strict UTF-8 (no overlongs, surrogates or code points past U+10FFFF): dist-info texts must
// be UTF-8, and the scan cache stores them as JSON strings, which cannot hold anything else.
bool is_utf8(std::string_view text) {
    size_t i = 0;
    while (i < text.size()) {
        auto byte = static_cast<unsigned char>(text[i]);
        size_t extra = 0;
        uint32_t min = 0;
        uint32_t code = 0;
        if (byte < 0x80) {
            ++i;
            continue;
        }
        if ((byte & 0xE0U) == 0xC0U) {
            extra = 1;
            min = 0x80;
            code = byte & 0x1FU;
        } else if ((byte & 0xF0U) == 0xE0U) {
            extra = 2;
            min = 0x800;
            code = byte & 0x0FU;
        } else if ((byte & 0xF8U) == 0xF0U) {
            extra = 3;
            min = 0x10000;
            code = byte & 0x07U;
        } else {
            return false;
        }
        if (extra > text.size() - i - 1)
            return false;
        for (size_t k = 1; k <= extra; ++k) {
            auto next = static_cast<unsigned char>(text[i + k]);
            if ((next & 0xC0U) != 0x80U)
                return false;
            code = (code << 6) | (next & 0x3FU);
        }
        if (code < min || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF))
            return false;
        i += extra + 1;
    }
    return true;
}

// Why an entry name cannot be installed, or "" when it is a plain relative path. Checked before
// anything else so that no later step ever sees a name that could leave its directory.
std::string path_problem(std::string_view path) {
    if (path.find('\0') != std::string_view::npos)
        return "entry path holds a NUL byte";
    if (path.find('\\') != std::string_view::npos)
        return "entry path holds a backslash";
    if (path.empty())
        return "entry path is empty";
    if (!is_utf8(path))
        return "entry path is not valid UTF-8";
    if (path.front() == '/')
        return "entry path is absolute";
    std::string_view rest = path;
    if (rest.back() == '/')
        rest.remove_suffix(1);  // a directory entry
    size_t pos = 0;
    while (pos <= rest.size()) {
        size_t slash = std::min(rest.find('/', pos), rest.size());
        std::string_view part = rest.substr(pos, slash - pos);
        if (part == "..")
            return "entry path climbs out with '..'";
        if (part.empty() || part == ".")
            return "entry path has an empty or '.' component";
        pos = slash + 1;
    }
    return {};
}

// The "Wheel-Version" header of a WHEEL file, "" when absent. Keys match case-insensitively, as
// the email parser that pip reads WHEEL with does; the header block ends at the first blank line.
std::string wheel_version(std::string_view text) {
    size_t pos = 0;
    while (pos < text.size()) {
        size_t end = text.find('\n', pos);
        if (end == std::string_view::npos)
            end = text.size();
        std::string_view line = text.substr(pos, end - pos);
        pos = end + 1;
        if (!line.empty() && line.back() == '\r')
            line.remove_suffix(1);
        if (line.empty())
            break;
        size_t colon = line.find(':');
        if (colon == std::string_view::npos)
            continue;
        std::string key(line.substr(0, colon));
        std::transform(key.begin(), key.end(), key.begin(),
                       [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; });
        if (key != "wheel-version")
            continue;
        std::string_view value = line.substr(colon + 1);
        while (!value.empty() && (value.front() == ' ' || value.front() == '\t'))
            value.remove_prefix(1);
        while (!value.empty() && (value.back() == ' ' || value.back() == '\t'))
            value.remove_suffix(1);
        return std::string(value);
    }
    return {};
}

// True when the dist-info stem "NAME-VERSION" names the wheel's project and version. The name
// may hold '-' in old wheels, so every split is tried; versions compare as PEP 440 versions.
bool stem_matches(std::string_view stem, const WheelFilename& filename) {
    for (size_t dash = stem.find('-'); dash != std::string_view::npos;
         dash = stem.find('-', dash + 1)) {
        if (normalize_name(stem.substr(0, dash)) != filename.normalized_name)
            continue;
        std::string_view version = stem.substr(dash + 1);
        if (version == filename.version)
            return true;
        auto mine = parse_version(version);
        auto theirs = parse_version(filename.version);
        if (mine.ok() && theirs.ok() && *mine == *theirs)
            return true;
    }
    return false;
}

struct Texts {
    std::map<std::string, std::string, std::less<>> by_path;  // "X.dist-info/METADATA" -> text
};

bool is_kept_text(std::string_view path) {
    size_t slash = path.find('/');
    if (slash == std::string_view::npos || !ends_with(path.substr(0, slash), ".dist-info"))
        return false;
    std::string_view name = path.substr(slash + 1);
    return name == "METADATA" || name == "WHEEL" || name == "RECORD" || name == "entry_points.txt";
}

bool is_script(std::string_view path) {
    size_t slash = path.find('/');
    return slash != std::string_view::npos && ends_with(path.substr(0, slash), ".data") &&
           starts_with(path.substr(slash + 1), "scripts/");
}

class Scanner {
  public:
    Scanner(std::string wheel, fs::ArchiveReader& reader, const ScanOptions& options)
        : m_wheel(std::move(wheel)), m_reader(reader), m_options(options) {}

    util::Error fail(const std::string& message) const {
        return util::make_error(m_wheel, message);
    }

    util::Status run(WheelScan& scan) {
        while (true) {
            auto next = m_reader.next();
            if (!next.ok())
                return next.error();
            if (!next->has_value())
                break;
            auto status = add(**next, scan);
            if (!status.ok())
                return status;
        }
        std::sort(scan.entries.begin(), scan.entries.end(),
                  [](const WheelEntry& a, const WheelEntry& b) { return a.path < b.path; });
        return util::ok_status();
    }

    Texts texts;
    std::set<std::string, std::less<>> top_dirs;  // first components of every entry

  private:
    util::Status add(const fs::ArchiveEntry& header, WheelScan& scan) {
        if (std::string problem = path_problem(header.path); !problem.empty())
            return fail(problem + ": " + header.path);
        std::string path = header.path;
        bool directory = header.type == fs::ArchiveEntryType::directory;
        if (directory)
            path.pop_back();  // "x/" names the directory x
        if (header.type == fs::ArchiveEntryType::symlink)
            return fail("symlink entry: " + path);
        if (!directory && header.type != fs::ArchiveEntryType::regular)
            return fail("entry is not a regular file: " + path);
        if (!m_seen.insert(path).second)
            return fail("duplicate entry: " + path);
        top_dirs.emplace(top_component(path));
        if (directory)
            return util::ok_status();

        m_total += header.size;
        if (m_total > m_options.max_total_size) {
            return fail(fmt::format("entries declare more than {} bytes uncompressed",
                                    m_options.max_total_size));
        }
        WheelEntry entry;
        entry.path = path;
        entry.size = header.size;
        entry.mode = header.mode != 0 ? (header.mode & 07777U) : 0644U;
        entry.executable = (entry.mode & 0111U) != 0;
        EntryStream stream(
            m_reader, header.size,
            fmt::format("entry {} holds more than its declared {} bytes", path, header.size));
        std::array<std::byte, k_head_size> head{};
        auto got = read_full(stream, head);
        if (!got.ok())
            return stream_error(stream, got.error());
        std::span<const std::byte> peeked(head.data(), *got);
        bool keep_text = is_kept_text(path);
        bool script = is_script(path);
        std::string kept;
        // A script may be a compiled program (uv's wheel ships its binary in .data/scripts):
        // the magic decides, and such a file is never a "#!python" script to rewrite.
        std::optional<gpu::FatbinStreamScanner> device_code;
        if (elf::has_elf_magic(peeked) && !keep_text) {
            // Device code is found as every byte passes (read_elf_stream skips most of them).
            device_code.emplace(path, header.size);
            device_code->feed(peeked);
            stream.observe(&*device_code);
            PrefixStream rest(peeked, stream);
            auto info = elf::read_elf_stream(rest, header.size, path, {.symbols = true});
            if (stream.failure())
                return stream_error(stream, *stream.failure());
            if (info.ok())
                entry.elf = std::move(info).value();
            else
                entry.elf_error = info.error().text();
            script = false;
        } else if (keep_text || script) {
            uint64_t limit = keep_text ? m_options.max_text_size : k_max_held_script_size;
            if (header.size > limit) {
                if (keep_text)
                    return fail(fmt::format("{} is over the {}-byte limit", path, limit));
                if (starts_with(std::string_view(reinterpret_cast<const char*>(head.data()), *got),
                                "#!python")) {
                    return fail(fmt::format(
                        "script {} is over the {}-byte limit for rewriting its #!python line", path,
                        limit));
                }
            } else {
                kept.assign(reinterpret_cast<const char*>(head.data()), *got);
                kept.resize(static_cast<size_t>(header.size));
                auto more =
                    read_full(stream, std::as_writable_bytes(std::span(kept)).subspan(*got));
                if (!more.ok())
                    return stream_error(stream, more.error());
                kept.resize(*got + *more);
            }
        }
        // The rest is only hashed: ELF metadata is in, texts are whole.
        m_block.resize(k_drain_block);
        while (true) {
            auto count = stream.read(m_block);
            if (!count.ok())
                return stream_error(stream, count.error());
            if (*count == 0)
                break;
        }
        if (stream.total() != header.size) {
            return fail(fmt::format("entry {} holds {} bytes, not its declared {}", path,
                                    stream.total(), header.size));
        }
        entry.sha256_base64 = util::Sha256::to_base64url(stream.hash().digest());
        if (device_code)
            record_device_code(device_code->finish(), entry);
        if (keep_text && !is_utf8(kept))
            return fail(path + " is not valid UTF-8");
        if (keep_text)
            texts.by_path.emplace(path, std::move(kept));
        else if (script && header.size <= k_max_held_script_size)
            entry.content = std::move(kept);
        scan.entries.push_back(std::move(entry));
        return util::ok_status();
    }

    // An archive failure keeps libarchive's text (named by host path); our own size guard is
    // a problem of the wheel.
    util::Status stream_error(const EntryStream& stream, const util::Error& error) const {
        if (stream.failure() && stream.failure()->where.empty())
            return fail(stream.failure()->message);
        return error;
    }

    std::string m_wheel;
    fs::ArchiveReader& m_reader;
    const ScanOptions& m_options;
    std::set<std::string, std::less<>> m_seen;
    uint64_t m_total = 0;
    std::vector<std::byte> m_block;  // drain buffer, shared by all entries
};

// RECORD against the files: every file listed with a matching sha256 and size (RECORD itself
// and its signatures excepted), every row naming a file the wheel holds.
util::Status check_record(const WheelScan& scan, const std::string& wheel) {
    auto fail = [&](const std::string& message) { return util::make_error(wheel, message); };
    const std::string record_path = scan.dist_info + "/RECORD";
    auto rows = parse_record(scan.record, wheel + "/" + record_path);
    if (!rows.ok())
        return rows.error();
    std::set<std::string, std::less<>> listed;
    for (const RecordEntry& row : *rows) {
        if (!listed.insert(row.path).second)
            return fail("RECORD lists " + row.path + " twice");
        if (row.path == record_path || row.path == record_path + ".jws" ||
            row.path == record_path + ".p7s") {
            continue;
        }
        const WheelEntry* entry = find_entry(scan, row.path);
        if (entry == nullptr)
            return fail("RECORD lists " + row.path + ", which the wheel does not hold");
        if (row.hash_algorithm.empty())
            return fail("RECORD has no hash for " + row.path);
        if (row.hash_algorithm != "sha256") {
            return fail("RECORD hashes " + row.path + " with " + row.hash_algorithm +
                        "; only sha256 is checked");
        }
        if (row.hash_is_hex)
            return fail("RECORD hash for " + row.path + " is hex, not the wheel spec's base64");
        bool same = row.hash_value == entry->sha256_base64;
        if (!same)
            return fail("RECORD hash mismatch for " + row.path);
        if (row.size && *row.size != entry->size) {
            return fail(fmt::format("RECORD size mismatch for {}: RECORD says {}, the file has {}",
                                    row.path, *row.size, entry->size));
        }
    }
    for (const WheelEntry& entry : scan.entries) {
        if (entry.path == record_path || entry.path == record_path + ".jws" ||
            entry.path == record_path + ".p7s") {
            continue;
        }
        if (listed.find(entry.path) == listed.end())
            return fail(entry.path + " is not listed in RECORD");
    }
    return util::ok_status();
}

// The dist-info and data directories, the required texts and WHEEL's version.
util::Status check_layout(WheelScan& scan, const Scanner& scanner, const std::string& wheel) {
    auto fail = [&](const std::string& message) { return util::make_error(wheel, message); };
    std::vector<std::string> dist_infos;
    for (const auto& top : scanner.top_dirs) {
        if (ends_with(top, ".dist-info"))
            dist_infos.push_back(top);
    }
    if (dist_infos.empty())
        return fail("no .dist-info directory");
    if (dist_infos.size() > 1) {
        return fail(
            fmt::format("more than one .dist-info directory: {}", fmt::join(dist_infos, ", ")));
    }
    scan.dist_info = dist_infos.front();
    std::string stem = scan.dist_info.substr(0, scan.dist_info.size() - 10);
    if (!stem_matches(stem, scan.filename)) {
        return fail(fmt::format("{} does not match the file name's project {} version {}",
                                scan.dist_info, scan.filename.normalized_name,
                                scan.filename.version));
    }
    for (const auto& top : scanner.top_dirs) {
        if (!ends_with(top, ".data"))
            continue;
        if (top != stem + ".data")
            return fail(fmt::format("unexpected data directory {} (expected {}.data)", top, stem));
        scan.data_dir = top;
    }
    auto text = [&](const char* name, std::string& out, bool required) -> util::Status {
        auto found = scanner.texts.by_path.find(scan.dist_info + "/" + name);
        if (found == scanner.texts.by_path.end()) {
            if (required)
                return fail(scan.dist_info + "/" + name + " is missing");
            return util::ok_status();
        }
        out = found->second;
        return util::ok_status();
    };
    for (auto status :
         {text("METADATA", scan.metadata, true), text("WHEEL", scan.wheel, true),
          text("RECORD", scan.record, true), text("entry_points.txt", scan.entry_points, false)}) {
        if (!status.ok())
            return status;
    }
    std::string version = wheel_version(scan.wheel);
    if (version.empty())
        return fail(scan.dist_info + "/WHEEL has no Wheel-Version");
    if (version.substr(0, version.find('.')) != "1")
        return fail("unsupported Wheel-Version " + version + " (only 1.x is installable)");
    auto metadata = parse_metadata(scan.metadata, wheel + "/" + scan.dist_info + "/METADATA");
    if (!metadata.ok())
        return metadata.error();
    return util::ok_status();
}

// Sonames the wheel's shared objects answer to, and what its objects need from elsewhere.
void collect_sonames(WheelScan& scan) {
    std::set<std::string> provides;
    for (const WheelEntry& entry : scan.entries) {
        if (!entry.elf || entry.elf->type != elf::k_type_dyn)
            continue;
        std::string name = entry.path.substr(entry.path.rfind('/') + 1);
        if (!entry.elf->soname.empty())
            provides.insert(entry.elf->soname);
        else if (name.find(".so") != std::string::npos)
            provides.insert(name);
    }
    std::set<std::string> needs;
    for (const WheelEntry& entry : scan.entries) {
        if (!entry.elf)
            continue;
        for (const std::string& soname : entry.elf->needed) {
            if (provides.find(soname) == provides.end())
                needs.insert(soname);
        }
    }
    scan.provides.assign(provides.begin(), provides.end());
    scan.needs.assign(needs.begin(), needs.end());
}

}  // namespace

std::vector<std::string> needed_versions(const WheelScan& scan) {
    const std::set<std::string> provided(scan.provides.begin(), scan.provides.end());
    std::set<std::string> versions;
    for (const WheelEntry& entry : scan.entries) {
        if (!entry.elf)
            continue;
        for (const elf::VersionNeed& need : entry.elf->version_needs) {
            if (provided.contains(need.file))
                continue;
            for (const elf::NeededVersion& version : need.versions) {
                if (!version.weak)
                    versions.insert(version.name);
            }
        }
    }
    return {versions.begin(), versions.end()};
}

std::vector<std::string> wheel_architectures(const WheelScan& scan) {
    std::set<gpu::SmName> names;
    for (const WheelEntry& entry : scan.entries) {
        for (const std::string& text : entry.architectures) {
            if (auto name = gpu::parse_sm_name(text); name.ok())
                names.insert(*name);
        }
    }
    std::vector<std::string> out;
    for (const gpu::SmName& name : names)
        out.push_back(name.text());
    return out;
}

const WheelEntry* find_entry(const WheelScan& scan, std::string_view path) {
    auto found = std::lower_bound(
        scan.entries.begin(), scan.entries.end(), path,
        [](const WheelEntry& entry, std::string_view key) { return entry.path < key; });
    if (found == scan.entries.end() || found->path != path)
        return nullptr;
    return &*found;
}

util::Result<WheelScan> scan_wheel(const std::string& host_path, const ScanOptions& options) {
    std::string wheel =
        options.filename.empty() ? host_path.substr(host_path.rfind('/') + 1) : options.filename;
    WheelScan scan;
    auto filename = parse_wheel_filename(wheel);
    if (!filename.ok())
        return filename.error();
    scan.filename = std::move(filename).value();

    // A failure of a cache blob's bytes (a bad CRC, a cut archive) names the wheel a user knows,
    // then the blob; a file of the user's own is named by its path as it is.
    auto named = [&](util::Error error) {
        if (!options.filename.empty() && error.where.rfind(host_path, 0) == 0) {
            error.message += " (the copy at " + error.where + ")";
            error.where = wheel;
        }
        return error;
    };
    auto reader = fs::ArchiveReader::open(host_path, fs::ArchiveFormat::zip);
    if (!reader.ok())
        return named(reader.error());
    Scanner scanner(wheel, **reader, options);
    if (auto status = scanner.run(scan); !status.ok())
        return named(status.error());
    if (auto status = check_layout(scan, scanner, wheel); !status.ok())
        return status.error();
    if (auto status = check_record(scan, wheel); !status.ok())
        return status.error();
    collect_sonames(scan);

    auto digest = util::sha256_file(host_path);
    if (!digest.ok())
        return named(digest.error());
    scan.wheel_sha256 = util::Sha256::to_hex(*digest);
    std::error_code error;
    scan.wheel_size = std::filesystem::file_size(host_path, error);
    if (error)
        return util::make_error(host_path, "cannot read the file size");
    return scan;
}

std::string scan_cache_folder(const std::string& cache_dir) {
    return cache_dir + "/scans/v2";
}

std::string scan_cache_path(const std::string& cache_dir, const std::string& wheel_sha256) {
    return scan_cache_folder(cache_dir) + "/" + wheel_sha256.substr(0, 2) + "/" +
           wheel_sha256.substr(2) + ".json";
}

}  // namespace rootlock::python
