// IndexClient: one project's page from one simple-API index, negotiated (PEP 691 JSON first, PEP
// 503 HTML as fallback), revalidated with the cached page's validators, and served from the page
// cache alone when offline. Also the PEP 658 metadata files, verified against their hashes, and
// kept with their validators when the index gives no hash (so a relock revalidates them).
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "index/content_store.hpp"
#include "index/http_client.hpp"
#include "index/page_cache.hpp"
#include "index/project_page.hpp"
#include "util/result.hpp"

namespace rootlock::index {

struct IndexClientStats {
    size_t pages_fetched = 0;      // 200 answers
    size_t pages_revalidated = 0;  // 304 answers: the cached page (or absence) was still right
    size_t pages_absent = 0;       // 404 and 410 answers
    size_t pages_from_cache = 0;   // offline: served without asking
    size_t metadata_fetched = 0;
    size_t metadata_revalidated = 0;  // 304 answers for a metadata file kept in the page cache
    size_t metadata_from_cache = 0;   // from the content store, or offline from the page cache
};

class IndexClient {
  public:
    IndexClient(HttpClient& http, PageCache& pages, ContentStore& store, bool offline);

    // The page of `normalized_name` on the index at `index_url`; nullopt when the index does not
    // have the project (404 or 410). Offline, a page not in the cache is a network error.
    // A 404 or 410 is cached like a page, with the ETag and Last-Modified it came with, so that
    // an offline relock knows the index lacks the project; online it is asked again (a lock must
    // see a project that appeared since), conditionally when it had validators: a 304 or another
    // 404 both mean "still absent" (RFC 9110 13.2.1 has an origin ignore the condition on a
    // missing resource; a cache in front of it may answer 304).
    util::Result<std::optional<ProjectPage>> project(const std::string& index_url,
                                                     const std::string& normalized_name);

    // The core metadata of `file` (PEP 658 "<url>.metadata"), checked against the hash the index
    // gave for it; nullopt when the index offers none for that file (or answers 404 for it).
    // With a hash it lives in the content store and is fetched once ever; without one it is kept
    // in the page cache with its validators and revalidated (If-None-Match, If-Modified-Since).
    util::Result<std::optional<std::string>> metadata(const DistributionFile& file);

    // Fetches the pages of several projects at once (each at most once per run), so that the
    // project() calls that follow are answered without a round trip each. Offline: nothing.
    void prefetch_projects(const std::string& index_url,
                           const std::vector<std::string>& normalized_names);

    // Downloads, in parallel, the metadata files of `files` that the store does not hold yet:
    // into the store when the index gave a hash, else as conditional GETs whose answers
    // metadata() then consumes. Failures are left for metadata() to report, located.
    void prefetch_metadata(const std::vector<DistributionFile>& files);

    const IndexClientStats& stats() const { return m_stats; }

  private:
    struct PageRequest {
        std::string name;
        std::string url;
        std::string key;  // in the page cache
        std::optional<CachedPage> cached;
        std::optional<util::Error> cache_error;  // the cached page, damaged (offline only)
        FetchRequest request;                    // with the cached page's validators
    };
    PageRequest prepare(const std::string& index_url, const std::string& normalized_name) const;
    util::Result<std::optional<ProjectPage>> finish(const PageRequest& prepared,
                                                    util::Result<HttpResponse> answer);
    static util::Result<std::optional<ProjectPage>> parse(const std::string& url,
                                                          const CachedPage& page,
                                                          const std::string& normalized_name);
    // A metadata file kept in the page cache (its body, or its absence), and the conditional GET
    // that revalidates it.
    struct MetadataRequest {
        std::string url;
        std::string key;                      // in the page cache
        std::optional<std::string> expected;  // sha256 the index gave
        std::optional<CachedPage> cached;
        std::optional<util::Error> cache_error;  // the cached page, damaged (offline only)
        FetchRequest request;
    };
    MetadataRequest prepare_metadata(const DistributionFile& file) const;
    util::Result<std::optional<std::string>> finish_metadata(const MetadataRequest& prepared,
                                                             util::Result<HttpResponse> answer);

    HttpClient& m_http;
    PageCache& m_pages;
    ContentStore& m_store;
    bool m_offline;
    IndexClientStats m_stats;
    std::map<std::string, util::Result<std::optional<ProjectPage>>> m_prefetched;  // by page URL
    std::set<std::string> m_prefetch_asked;
    std::map<std::string, util::Result<std::optional<std::string>>>
        m_metadata_prefetched;  // by metadata URL
};

}  // namespace rootlock::index
