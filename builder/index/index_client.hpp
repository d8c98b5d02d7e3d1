// IndexClient: one project's page from one simple-API index, negotiated (PEP 691 JSON first, PEP
// 503 HTML as fallback), revalidated with the cached page's validators, and served from the page
// cache alone when offline. Also the PEP 658 metadata files, verified against their hashes.
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
    size_t pages_revalidated = 0;  // 304 answers: the cached page was still right
    size_t pages_from_cache = 0;   // offline: served without asking
    size_t metadata_fetched = 0;
    size_t metadata_from_cache = 0;
};

class IndexClient {
  public:
    IndexClient(HttpClient& http, PageCache& pages, ContentStore& store, bool offline);

    // The page of `normalized_name` on the index at `index_url`; nullopt when the index does not
    // have the project (404 or 410). Offline, a page not in the cache is a network error.
    util::Result<std::optional<ProjectPage>> project(const std::string& index_url,
                                                     const std::string& normalized_name);

    // The core metadata of `file` (PEP 658 "<url>.metadata"), checked against the hash the index
    // gave for it; nullopt when the index offers none for that file.
    util::Result<std::optional<std::string>> metadata(const DistributionFile& file);

    // Fetches the pages of several projects at once (each at most once per run), so that the
    // project() calls that follow are answered without a round trip each. Offline: nothing.
    void prefetch_projects(const std::string& index_url,
                           const std::vector<std::string>& normalized_names);

    // Downloads, in parallel, the metadata files of `files` whose hashes the index gave and that
    // the store does not hold yet. Failures are left for metadata() to report, located.
    void prefetch_metadata(const std::vector<DistributionFile>& files);

    const IndexClientStats& stats() const { return m_stats; }

  private:
    struct PageRequest {
        std::string name;
        std::string url;
        std::string key;  // in the page cache
        std::optional<CachedPage> cached;
        FetchRequest request;  // with the cached page's validators
    };
    PageRequest prepare(const std::string& index_url, const std::string& normalized_name) const;
    util::Result<std::optional<ProjectPage>> finish(const PageRequest& prepared,
                                                    util::Result<HttpResponse> answer);
    static util::Result<std::optional<ProjectPage>> parse(const std::string& url,
                                                          const CachedPage& page,
                                                          const std::string& normalized_name);

    HttpClient& m_http;
    PageCache& m_pages;
    ContentStore& m_store;
    bool m_offline;
    IndexClientStats m_stats;
    std::map<std::string, util::Result<std::optional<ProjectPage>>> m_prefetched;  // by page URL
    std::set<std::string> m_prefetch_asked;
};

}  // namespace rootlock::index
