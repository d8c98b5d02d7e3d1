// WheelFetcher: the chosen wheels, downloaded in parallel into the content store (verified
// against the index's sha256, or hashed and remembered when the index gave none) and scanned
// once: the scan (files, ELF metadata, dist-info texts) is cached by the wheel's sha256.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "index/content_store.hpp"
#include "index/http_client.hpp"
#include "index/index_client.hpp"
#include "index/page_cache.hpp"
#include "python/wheel_scan.hpp"
#include "util/result.hpp"

namespace rootlock::fetch {

// The wheel chosen for one (project, version): the best-ranked tag the target accepts.
struct ChosenFile {
    index::DistributionFile file;
    std::string index_name;
    std::string index_url;
    int tag_priority = 0;
};

struct FetchedWheel {
    std::string sha256;
    uint64_t size = 0;
    std::string host_path;  // the blob's place in the content store; absent when the scan came
                            // from the cache (a lock needs the scan, not the bytes)
    std::shared_ptr<const python::WheelScan> scan;
};

struct FetcherStats {
    size_t downloaded = 0;  // wheels fetched over the network this run
    size_t scans_from_cache = 0;
    size_t scanned = 0;
};

class WheelFetcher {
  public:
    WheelFetcher(index::HttpClient& http, index::ContentStore& store, index::PageCache& pages,
                 bool offline, int threads);

    // Results in the order of `files`.
    std::vector<util::Result<FetchedWheel>> fetch(const std::vector<const ChosenFile*>& files);
    // One wheel's METADATA text (fetching and scanning it), for indexes without metadata files.
    util::Result<std::string> metadata(const ChosenFile& file);

    const FetcherStats& stats() const { return m_stats; }

  private:
    util::Result<std::shared_ptr<const python::WheelScan>> scan(const std::string& sha256,
                                                                const std::string& host_path,
                                                                const std::string& filename,
                                                                bool& from_cache);
    std::string scan_cache_path(const std::string& sha256) const;
    util::Result<std::optional<std::shared_ptr<const python::WheelScan>>> cached_scan(
        const std::string& sha256) const;

    index::HttpClient& m_http;
    index::ContentStore& m_store;
    index::PageCache& m_pages;
    bool m_offline;
    int m_threads;
    FetcherStats m_stats;
    std::map<std::string, FetchedWheel> m_done;  // by url
};

}  // namespace rootlock::fetch
