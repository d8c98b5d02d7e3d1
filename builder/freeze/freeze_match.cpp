// Matching frozen distributions to index wheels: candidates gathered for every package first, so
// that pages and wheels are fetched in parallel, then each candidate's RECORD read from the zip.
#include "freeze/freeze_match.hpp"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <tuple>

#include "fs/zip_index.hpp"
#include "index/content_store.hpp"
#include "index/index_client.hpp"
#include "index/page_cache.hpp"
#include "python/metadata.hpp"
#include "python/pep440.hpp"
#include "python/record.hpp"
#include "python/wheel_filename.hpp"
#include "python/wheel_tags.hpp"
#include "util/hex.hpp"

namespace rootlock::freeze {

namespace {

struct Candidate {
    const index::DistributionFile* file = nullptr;
    int priority = 0;
    size_t download = 0;  // index into the one download batch
};

struct Pending {
    pylock::LockPackage* package = nullptr;
    const python::Distribution* dist = nullptr;
    std::string label;      // "NAME VERSION"
    std::string index_url;  // where the project was found
    std::optional<index::ProjectPage> page;
    std::vector<Candidate> candidates;  // in the target's order
};

// A RECORD digest reduced to (algorithm, raw bytes): pip writes base64url, dh-python hex.
using Digest = std::pair<std::string, std::string>;

std::optional<std::string> from_base64url(std::string_view text) {
    std::string out;
    uint32_t buffer = 0;
    int bits = 0;
    for (char c : text) {
        int value = -1;
        if (c >= 'A' && c <= 'Z')
            value = c - 'A';
        else if (c >= 'a' && c <= 'z')
            value = c - 'a' + 26;
        else if (c >= '0' && c <= '9')
            value = c - '0' + 52;
        else if (c == '-' || c == '+')
            value = 62;
        else if (c == '_' || c == '/')
            value = 63;
        else if (c == '=')
            break;
        else
            return std::nullopt;
        buffer = (buffer << 6) | static_cast<uint32_t>(value);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out.push_back(static_cast<char>((buffer >> bits) & 0xffU));
        }
    }
    return out;
}

std::optional<Digest> digest_of(const python::RecordEntry& row) {
    if (row.hash_algorithm.empty())
        return std::nullopt;
    auto bytes = row.hash_is_hex ? util::from_hex(row.hash_value) : from_base64url(row.hash_value);
    if (!bytes.has_value())
        return std::nullopt;
    return Digest{row.hash_algorithm, std::move(*bytes)};
}

bool ends_with(std::string_view text, std::string_view suffix) {
    return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

bool starts_with(std::string_view text, std::string_view prefix) {
    return text.substr(0, prefix.size()) == prefix;
}

// Installed rows an installer writes or rewrites, so that no wheel can be expected to agree.
bool ignored_installed_row(std::string_view path) {
    if (starts_with(path, "../") || starts_with(path, "/"))
        return true;  // scripts and .data targets outside site-packages
    const size_t slash = path.find('/');
    if (slash != std::string_view::npos && ends_with(path.substr(0, slash), ".dist-info")) {
        const std::string_view rest = path.substr(slash + 1);
        if (rest == "RECORD" || rest == "INSTALLER" || rest == "REQUESTED" ||
            rest == "direct_url.json")
            return true;
    }
    return ends_with(path, ".pyc") &&
           (starts_with(path, "__pycache__/") || path.find("/__pycache__/") != std::string::npos);
}

// A wheel RECORD path as it lands in site-packages; nullopt for files installed elsewhere.
std::optional<std::string> installed_path_of(std::string_view path) {
    const size_t slash = path.find('/');
    if (slash == std::string_view::npos || !ends_with(path.substr(0, slash), ".data"))
        return std::string(path);
    const std::string_view rest = path.substr(slash + 1);
    for (std::string_view scheme : {"purelib/", "platlib/"}) {
        if (starts_with(rest, scheme))
            return std::string(rest.substr(scheme.size()));
    }
    return std::nullopt;
}

std::string normalized_version(std::string_view text) {
    auto version = python::parse_version(text);
    return version.ok() ? python::to_string(*version) : std::string(text);
}

const python::Distribution* installed(const python::PythonEnvironment& env,
                                      const pylock::LockPackage& package) {
    for (const auto& dist : env.distributions) {
        if (dist.name == package.name && normalized_version(dist.version) == package.version)
            return &dist;
    }
    return nullptr;
}

std::optional<python::SupportedTags> target_tags(const pylock::LockTarget& target) {
    auto minor_of = [](const std::string& text) -> std::optional<int> {
        // "3.11" / "2.36": the major must be the one named, the minor a small number.
        const size_t dot = text.find('.');
        if (dot == std::string::npos || dot + 1 >= text.size() || text.size() - dot > 4)
            return std::nullopt;
        int minor = 0;
        for (char c : text.substr(dot + 1)) {
            if (c < '0' || c > '9')
                return std::nullopt;
            minor = minor * 10 + (c - '0');
        }
        return minor;
    };
    if (target.arch.empty() || target.python.substr(0, 2) != "3." ||
        target.glibc.substr(0, 2) != "2.")
        return std::nullopt;
    auto python_minor = minor_of(target.python);
    auto glibc_minor = minor_of(target.glibc);
    if (!python_minor || !glibc_minor)
        return std::nullopt;
    return python::SupportedTags(
        python::TargetTags{3, *python_minor, target.arch, 2, *glibc_minor, false});
}

// The RECORD inside the wheel at `host_path`, read without extracting anything.
util::Result<std::vector<python::RecordEntry>> wheel_record(const std::string& host_path,
                                                            const std::string& filename,
                                                            const std::string& project) {
    ROOTLOCK_TRY(zip, fs::index_zip(host_path, filename));
    std::vector<const fs::ZipMember*> records;
    for (const auto& member : zip.members) {
        const size_t slash = member.name.find('/');
        if (slash != std::string::npos && member.name.substr(slash) == "/RECORD" &&
            ends_with(std::string_view(member.name).substr(0, slash), ".dist-info"))
            records.push_back(&member);
    }
    if (records.size() > 1) {
        // Only the project's own dist-info counts (its name up to the first '-').
        std::erase_if(records, [&](const fs::ZipMember* member) {
            return python::normalize_name(member->name.substr(0, member->name.find('-'))) !=
                   project;
        });
    }
    if (records.size() != 1)
        return util::make_error(
            filename, records.empty() ? "no .dist-info/RECORD" : "more than one .dist-info/RECORD");
    const fs::ZipMember& member = *records.front();
    if (member.uncompressed_size > k_max_candidate_record_bytes)
        return util::make_error(filename, member.name + ": larger than " +
                                              std::to_string(k_max_candidate_record_bytes) +
                                              " bytes");
    auto stream = fs::open_member(zip, member);
    std::string text;
    std::array<std::byte, 64 * 1024> buffer{};
    while (true) {
        ROOTLOCK_TRY(got, stream->read(std::span<std::byte>(buffer)));
        if (got == 0)
            break;
        if (text.size() + got > k_max_candidate_record_bytes)
            return util::make_error(filename, member.name + ": larger than declared");
        text.append(reinterpret_cast<const char*>(buffer.data()), got);
    }
    return python::parse_record(text, filename + ": " + member.name);
}

// "" when the wheel matches; else why not ("PATH differs", "no installed file in common").
std::string compare(const python::Distribution& dist,
                    const std::vector<python::RecordEntry>& wheel_rows) {
    std::map<std::string, Digest> wheel;
    for (const auto& row : wheel_rows) {
        auto path = installed_path_of(row.path);
        auto digest = digest_of(row);
        if (path.has_value() && digest.has_value())
            wheel.emplace(std::move(*path), std::move(*digest));
    }
    size_t compared = 0;
    for (const auto& row : dist.record) {
        if (ignored_installed_row(row.path))
            continue;
        auto digest = digest_of(row);
        auto found = wheel.find(row.path);
        if (!digest.has_value() || found == wheel.end() || found->second.first != digest->first)
            continue;  // unhashed, not in this wheel, or another algorithm: proves nothing
        if (found->second.second != digest->second)
            return row.path + " differs";
        ++compared;
    }
    return compared == 0 ? "no installed file in common" : "";
}

std::string join(const std::vector<std::string>& parts, std::string_view separator) {
    std::string out;
    for (const auto& part : parts)
        out += (out.empty() ? "" : std::string(separator)) + part;
    return out;
}

// The page-cache key under which a wheel's sha256 is remembered when the index lists none; the
// one WheelFetcher uses, so that `lock` and `freeze` share what they learnt.
std::string hash_key(const std::string& url) {
    return "wheel-sha256\n" + url;
}

}  // namespace

util::Result<MatchReport> match_wheels(FreezeResult& frozen, const python::PythonEnvironment& env,
                                       const MatchOptions& options) {
    MatchReport report;
    index::HttpOptions http_options = options.http;
    http_options.offline = options.offline;
    index::HttpClient http(http_options);
    index::ContentStore store(options.cache_dir);
    index::PageCache pages(options.cache_dir);
    store.set_offline(options.offline);  // a damaged entry cannot be fetched again
    pages.set_offline(options.offline);
    index::IndexClient client(http, pages, store, options.offline);

    const pylock::LockTarget target =
        frozen.lock.rootlock ? frozen.lock.rootlock->target : pylock::LockTarget{};
    const std::optional<python::SupportedTags> tags = target_tags(target);
    if (!tags.has_value())
        report.notes.push_back(
            "the target's glibc or arch is unknown: every wheel of each version is a candidate");

    // 1. Pages (the first index's in one parallel round trip) and candidates for every package.
    std::vector<Pending> pending;
    std::vector<std::string> names;
    for (auto& package : frozen.lock.packages) {
        pending.push_back(Pending{
            &package, installed(env, package), package.name + " " + package.version, {}, {}, {}});
        names.push_back(package.name);
    }
    if (!options.index_urls.empty())
        client.prefetch_projects(options.index_urls.front(), names);

    std::vector<index::DownloadRequest> requests;
    for (Pending& item : pending) {
        if (item.dist == nullptr || !item.dist->has_record)
            continue;
        for (const auto& url : options.index_urls) {
            ROOTLOCK_TRY(page, client.project(url, item.package->name));
            if (!page.has_value())
                continue;
            item.index_url = url;
            item.page = std::move(*page);
            break;
        }
        if (!item.page.has_value())
            continue;
        for (const auto& file : item.page->files) {
            auto wheel = python::parse_wheel_filename(file.filename);
            if (!wheel.ok() || wheel->normalized_name != item.package->name ||
                normalized_version(wheel->version) != item.package->version)
                continue;
            int priority = 0;
            if (tags.has_value()) {
                auto best = tags->best_priority(*wheel);
                if (!best.has_value())
                    continue;
                priority = *best;
            }
            item.candidates.push_back(Candidate{&file, priority, 0});
        }
        std::sort(item.candidates.begin(), item.candidates.end(),
                  [](const Candidate& a, const Candidate& b) {
                      return std::tie(a.priority, a.file->filename, a.file->url) <
                             std::tie(b.priority, b.file->filename, b.file->url);
                  });
        for (Candidate& candidate : item.candidates) {
            const index::DistributionFile& file = *candidate.file;
            auto known = file.hashes.find("sha256");
            std::string expected = known == file.hashes.end() ? std::string() : known->second;
            if (expected.empty()) {
                auto remembered = pages.get(hash_key(file.url));
                if (remembered.ok() && remembered->has_value())
                    expected = (*remembered)->body;
            }
            candidate.download = requests.size();
            requests.push_back(index::DownloadRequest{file.url, expected, file.size});
        }
    }

    // 2. Every candidate in one parallel batch; a blob the store holds is not fetched again.
    std::vector<util::Result<index::StoredBlob>> blobs =
        requests.empty() ? std::vector<util::Result<index::StoredBlob>>{}
                         : http.download(requests, store);
    for (const auto& blob : blobs) {
        if (!blob.ok() && blob.error().kind == util::ErrorKind::network)
            return blob.error();
    }

    // 3. Each package's candidates compared, in the target's order.
    for (Pending& item : pending) {
        pylock::LockPackage& package = *item.package;
        auto unmatched = [&](std::string why) {
            report.unmatched.push_back(package.name);
            report.notes.push_back(item.label + ": " + std::move(why));
        };
        if (item.dist == nullptr || !item.dist->has_record) {
            unmatched("no installed RECORD to compare");
            continue;
        }
        if (!item.page.has_value()) {
            unmatched("no project of that name on any index");
            continue;
        }
        if (item.candidates.empty()) {
            unmatched("no wheel of this version for the target on " + item.index_url);
            continue;
        }
        std::vector<const Candidate*> matches;
        std::vector<std::string> reasons;
        for (const Candidate& candidate : item.candidates) {
            const index::DistributionFile& file = *candidate.file;
            const auto& blob = blobs[candidate.download];
            if (!blob.ok()) {
                reasons.push_back(blob.error().text());  // "URL: ...", the URL names the file
                continue;
            }
            if (file.hashes.count("sha256") == 0)
                (void)pages.put(hash_key(file.url),
                                index::CachedPage{file.url, "text/plain", "", "", blob->sha256});
            auto rows = wheel_record(blob->path, file.filename, package.name);
            if (!rows.ok()) {
                reasons.push_back(rows.error().text());  // located in the wheel already
                continue;
            }
            std::string why = compare(*item.dist, *rows);
            if (why.empty())
                matches.push_back(&candidate);
            else
                reasons.push_back(file.filename + ": " + why);
        }
        if (matches.empty()) {
            unmatched("no candidate wheel matches the installed files (" + join(reasons, "; ") +
                      ")");
            continue;
        }
        const Candidate& chosen = *matches.front();
        if (matches.size() > 1) {
            std::vector<std::string> files;
            for (const Candidate* match : matches)
                files.push_back(match->file->filename);
            report.notes.push_back(item.label + ": " + join(files, ", ") +
                                   " all match the installed files; chose " +
                                   chosen.file->filename + ", the target's first");
        }
        const index::StoredBlob& blob = *blobs[chosen.download];
        pylock::LockWheel wheel;
        wheel.name = chosen.file->filename;
        wheel.url = chosen.file->url;
        wheel.size = blob.size;
        wheel.upload_time = chosen.file->upload_time;
        wheel.hashes["sha256"] = blob.sha256;
        package.wheels = {std::move(wheel)};
        package.index = item.index_url;
        report.matched.push_back(package.name);
    }
    return report;
}

}  // namespace rootlock::freeze
