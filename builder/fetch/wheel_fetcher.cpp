// Wheels into the content store and through the scanner, each at most once per run and each
// scan at most once ever: a scan is keyed by the wheel's sha256, so it never goes stale.
#include "fetch/wheel_fetcher.hpp"

#include <unistd.h>

#include <atomic>
#include <thread>

#include "util/atomic_file.hpp"
#include "util/cache_damage.hpp"
#include "util/sealed_text.hpp"

namespace rootlock::fetch {

namespace {

// The page-cache key that remembers the sha256 of a file the index listed without a hash.
std::string hash_key(const std::string& url) {
    return "wheel-sha256\n" + url;
}

}  // namespace

WheelFetcher::WheelFetcher(index::HttpClient& http, index::ContentStore& store,
                           index::PageCache& pages, bool offline, int threads)
    : m_http(http), m_store(store), m_pages(pages), m_offline(offline), m_threads(threads) {}

std::string WheelFetcher::scan_cache_path(const std::string& sha256) const {
    return python::scan_cache_path(m_store.root(), sha256);
}

util::Result<std::optional<std::shared_ptr<const python::WheelScan>>> WheelFetcher::cached_scan(
    const std::string& sha256) const {
    using Found = std::optional<std::shared_ptr<const python::WheelScan>>;
    const std::string path = scan_cache_path(sha256);
    auto cached = util::read_host_file(path);
    if (!cached.ok())
        return Found();
    auto content = util::unseal_text(*cached);
    if (!content) {
        if (auto refused = util::discard_damaged(
                path, "damaged: its content does not match the digest it was written with",
                m_offline, "scan the wheel again"))
            return *refused;
        return Found();
    }
    auto parsed = python::scan_from_json(std::string(*content));
    if (!parsed.ok() || parsed->wheel_sha256 != sha256)
        return Found();  // another schema's scan: rescanned from the wheel, then replaced
    return Found(std::make_shared<python::WheelScan>(std::move(*parsed)));
}

util::Result<std::shared_ptr<const python::WheelScan>> WheelFetcher::scan(
    const std::string& sha256, const std::string& host_path, const std::string& filename,
    bool& from_cache) {
    const std::string cache_path = scan_cache_path(sha256);
    ROOTLOCK_TRY(cached, cached_scan(sha256));
    if (cached) {
        from_cache = true;
        return *cached;
    }
    python::ScanOptions options;
    options.filename = filename;
    ROOTLOCK_TRY(fresh, python::scan_wheel(host_path, options));
    if (fresh.wheel_sha256 != sha256)
        return util::make_error(host_path, "changed while it was being scanned");
    from_cache = false;
    (void)util::write_file_atomically(cache_path, util::seal_text(python::scan_to_json(fresh)));
    return std::shared_ptr<const python::WheelScan>(
        std::make_shared<python::WheelScan>(std::move(fresh)));
}

std::vector<util::Result<FetchedWheel>> WheelFetcher::fetch(
    const std::vector<const ChosenFile*>& files) {
    const size_t count = files.size();
    std::vector<std::optional<util::Result<FetchedWheel>>> results(count);
    std::vector<std::string> sha256(count);
    std::vector<std::string> paths(count);

    // 1. What the store already holds; the rest goes into one parallel download.
    std::vector<index::DownloadRequest> requests;
    std::vector<size_t> requested;
    for (size_t i = 0; i < count; ++i) {
        const auto& file = files[i]->file;
        if (auto done = m_done.find(file.url); done != m_done.end()) {
            results[i] = done->second;
            continue;
        }
        auto known = file.hashes.find("sha256");
        std::string expected = known == file.hashes.end() ? std::string() : known->second;
        if (expected.empty()) {
            auto remembered = m_pages.get(hash_key(file.url));
            if (!remembered.ok()) {
                results[i] = remembered.error();  // damaged, and --offline
                continue;
            }
            if (remembered->has_value())
                expected = (*remembered)->body;
        }
        if (!expected.empty()) {
            // A wheel scanned before needs no bytes to be locked: the scan is keyed by the
            // hash the index vouches for. (Building the image reads and verifies the blob.)
            auto scanned = cached_scan(expected);
            if (!scanned.ok()) {
                results[i] = scanned.error();
                continue;
            }
            if (*scanned) {
                ++m_stats.scans_from_cache;
                FetchedWheel wheel{expected, (**scanned)->wheel_size, m_store.blob_path(expected),
                                   **scanned};
                m_done.emplace(file.url, wheel);
                results[i] = std::move(wheel);
                continue;
            }
            auto present = m_store.find(expected);
            if (!present.ok()) {
                results[i] = present.error();
                continue;
            }
            if (present->has_value()) {
                sha256[i] = expected;
                paths[i] = **present;
                continue;
            }
        }
        if (m_offline) {
            results[i] = util::make_network_error(
                file.url, "not in the cache and --offline forbids the network");
            continue;
        }
        requests.push_back(index::DownloadRequest{file.url, expected, file.size});
        requested.push_back(i);
    }
    if (!requests.empty()) {
        auto downloaded = m_http.download(requests, m_store);
        for (size_t k = 0; k < requested.size(); ++k) {
            const size_t i = requested[k];
            if (!downloaded[k].ok()) {
                results[i] = downloaded[k].error();
                continue;
            }
            ++m_stats.downloaded;
            sha256[i] = downloaded[k]->sha256;
            paths[i] = downloaded[k]->path;
            if (files[i]->file.hashes.count("sha256") == 0)
                (void)m_pages.put(
                    hash_key(files[i]->file.url),
                    index::CachedPage{files[i]->file.url, "text/plain", "", "", sha256[i]});
        }
    }

    // 2. Scans, on a few threads: each wheel is independent, and parsing dominates.
    std::vector<size_t> to_scan;
    for (size_t i = 0; i < count; ++i) {
        if (!results[i].has_value())
            to_scan.push_back(i);
    }
    std::vector<std::optional<util::Result<std::shared_ptr<const python::WheelScan>>>> scans(count);
    std::vector<char> from_cache(count, 0);
    std::atomic<size_t> next{0};
    auto worker = [&] {
        for (size_t k = next++; k < to_scan.size(); k = next++) {
            const size_t i = to_scan[k];
            bool cached = false;
            scans[i] = scan(sha256[i], paths[i], files[i]->file.filename, cached);
            from_cache[i] = cached ? 1 : 0;
        }
    };
    const size_t thread_count =
        std::min(to_scan.size(), static_cast<size_t>(std::max(1, m_threads)));
    std::vector<std::thread> threads;
    for (size_t t = 1; t < thread_count; ++t)
        threads.emplace_back(worker);
    if (thread_count > 0)
        worker();
    for (auto& thread : threads)
        thread.join();
    for (size_t i : to_scan) {
        if (scans[i]->ok())
            ++(from_cache[i] != 0 ? m_stats.scans_from_cache : m_stats.scanned);
    }

    std::vector<util::Result<FetchedWheel>> out;
    out.reserve(count);
    for (size_t i = 0; i < count; ++i) {
        if (results[i].has_value()) {
            out.push_back(std::move(*results[i]));
            continue;
        }
        if (!scans[i]->ok()) {
            out.push_back(scans[i]->error());
            continue;
        }
        FetchedWheel wheel{sha256[i], (**scans[i])->wheel_size, paths[i], **scans[i]};
        m_done.emplace(files[i]->file.url, wheel);
        out.push_back(std::move(wheel));
    }
    return out;
}

util::Result<std::string> WheelFetcher::metadata(const ChosenFile& file) {
    auto results = fetch({&file});
    if (!results[0].ok())
        return results[0].error();
    return results[0]->scan->metadata;
}

}  // namespace rootlock::fetch
