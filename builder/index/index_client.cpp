// Index pages and metadata files through the HTTP client and the caches: a page (or a 404) is
// revalidated with its ETag or Last-Modified when online and read from the page cache alone when
// offline; metadata files with a known hash live in the content store, so they are fetched once
// ever, and those without one are kept in the page cache and revalidated like pages.
#include "index/index_client.hpp"

#include "util/atomic_file.hpp"
#include "util/sha256.hpp"

namespace rootlock::index {

namespace {

std::string metadata_url(const DistributionFile& file) {
    return file.url + ".metadata";
}

std::optional<std::string> sha256_of(const std::map<std::string, std::string>& hashes) {
    auto found = hashes.find("sha256");
    if (found == hashes.end())
        return std::nullopt;
    return found->second;
}

// The content type a cached 404 or 410 is kept under: no index serves it.
constexpr const char* k_absent = "absent";

std::string header_of(const HttpResponse& response, const char* name) {
    auto found = response.headers.find(name);
    return found == response.headers.end() ? std::string() : found->second;
}

// The conditional headers that revalidate `cached` (a page, a metadata file or an absence).
void add_validators(FetchRequest& request, const std::optional<CachedPage>& cached) {
    if (!cached.has_value())
        return;
    if (!cached->etag.empty())
        request.headers.emplace_back("If-None-Match", cached->etag);
    if (!cached->last_modified.empty())
        request.headers.emplace_back("If-Modified-Since", cached->last_modified);
}

}  // namespace

IndexClient::IndexClient(HttpClient& http, PageCache& pages, ContentStore& store, bool offline)
    : m_http(http), m_pages(pages), m_store(store), m_offline(offline) {}

IndexClient::PageRequest IndexClient::prepare(const std::string& index_url,
                                              const std::string& normalized_name) const {
    PageRequest out;
    out.name = normalized_name;
    out.url = project_url(index_url, normalized_name);
    out.key = out.url + "\n" + k_accept_header;
    auto cached = m_pages.get(out.key);
    if (cached.ok())
        out.cached = std::move(*cached);
    else
        out.cache_error = cached.error();
    out.request = FetchRequest{out.url, {{"Accept", k_accept_header}}};
    add_validators(out.request, out.cached);
    return out;
}

util::Result<std::optional<ProjectPage>> IndexClient::parse(const std::string& url,
                                                            const CachedPage& page,
                                                            const std::string& normalized_name) {
    ROOTLOCK_TRY(format, page_format(page.content_type, url));
    const std::string& final_url = page.url.empty() ? url : page.url;
    if (format == PageFormat::json) {
        ROOTLOCK_TRY(parsed, parse_simple_json(page.body, final_url));
        return std::optional<ProjectPage>(std::move(parsed));
    }
    ROOTLOCK_TRY(parsed, parse_simple_html(page.body, final_url, normalized_name));
    return std::optional<ProjectPage>(std::move(parsed));
}

util::Result<std::optional<ProjectPage>> IndexClient::finish(const PageRequest& prepared,
                                                             util::Result<HttpResponse> answer) {
    if (!answer.ok())
        return answer.error();
    HttpResponse& response = *answer;
    const std::string& url = prepared.url;
    if (response.status == 404 || response.status == 410) {
        // Remembered with its validators, so that an offline relock knows the index lacks the
        // project and an online one can ask conditionally.
        ++m_stats.pages_absent;
        (void)m_pages.put(prepared.key, CachedPage{url, k_absent, header_of(response, "etag"),
                                                   header_of(response, "last-modified"), ""});
        return std::optional<ProjectPage>();
    }
    if (response.status == 304 && prepared.cached.has_value()) {
        ++m_stats.pages_revalidated;
        if (prepared.cached->content_type == k_absent)
            return std::optional<ProjectPage>();
        return parse(url, *prepared.cached, prepared.name);
    }
    if (response.status != 200)
        return util::make_network_error(
            url, "the index answered HTTP " + std::to_string(response.status));
    ++m_stats.pages_fetched;
    CachedPage page{response.effective_url.empty() ? url : response.effective_url,
                    header_of(response, "content-type"), header_of(response, "etag"),
                    header_of(response, "last-modified"), std::move(response.body)};
    auto parsed = parse(url, page, prepared.name);
    // A page that does not parse is not cached: the next run asks again.
    if (parsed.ok())
        (void)m_pages.put(prepared.key, page);
    return parsed;
}

util::Result<std::optional<ProjectPage>> IndexClient::project(const std::string& index_url,
                                                              const std::string& normalized_name) {
    PageRequest prepared = prepare(index_url, normalized_name);
    if (auto early = m_prefetched.find(prepared.url); early != m_prefetched.end()) {
        auto result = std::move(early->second);
        m_prefetched.erase(early);
        return result;
    }
    if (m_offline) {
        if (prepared.cache_error)
            return *prepared.cache_error;
        if (!prepared.cached.has_value())
            return util::make_network_error(prepared.url,
                                            "not in the cache and --offline forbids the network");
        ++m_stats.pages_from_cache;
        if (prepared.cached->content_type == k_absent)
            return std::optional<ProjectPage>();
        return parse(prepared.url, *prepared.cached, normalized_name);
    }
    return finish(prepared, m_http.get(prepared.request));
}

void IndexClient::prefetch_projects(const std::string& index_url,
                                    const std::vector<std::string>& normalized_names) {
    if (m_offline)
        return;  // the cache answers at once; nothing to overlap
    std::vector<PageRequest> prepared;
    std::vector<FetchRequest> requests;
    for (const auto& name : normalized_names) {
        const std::string url = project_url(index_url, name);
        if (!m_prefetch_asked.insert(url).second)
            continue;  // asked once per run: the caller's own request follows the result
        prepared.push_back(prepare(index_url, name));
        requests.push_back(prepared.back().request);
    }
    if (requests.empty())
        return;
    auto answers = m_http.get_many(requests);
    for (size_t i = 0; i < prepared.size(); ++i)
        m_prefetched.emplace(prepared[i].url, finish(prepared[i], std::move(answers[i])));
}

IndexClient::MetadataRequest IndexClient::prepare_metadata(const DistributionFile& file) const {
    MetadataRequest out;
    out.url = metadata_url(file);
    out.key = "metadata\n" + out.url;
    out.expected = sha256_of(file.metadata_hashes);
    auto cached = m_pages.get(out.key);
    if (!cached.ok())
        out.cache_error = cached.error();
    // A hashed file's bytes live in the store: only its absence is ever kept here.
    if (cached.ok() && cached->has_value() &&
        (!out.expected.has_value() || (*cached)->content_type == k_absent))
        out.cached = std::move(*cached);
    out.request = FetchRequest{out.url, {}};
    add_validators(out.request, out.cached);
    return out;
}

util::Result<std::optional<std::string>> IndexClient::finish_metadata(
    const MetadataRequest& prepared, util::Result<HttpResponse> answer) {
    if (!answer.ok())
        return answer.error();
    HttpResponse& response = *answer;
    const std::string& url = prepared.url;
    if (response.status == 404 || response.status == 410) {
        // Advertised but absent: the caller reads the wheel instead. Kept, so that a relock
        // asks conditionally and an offline one knows without asking.
        (void)m_pages.put(prepared.key, CachedPage{url, k_absent, header_of(response, "etag"),
                                                   header_of(response, "last-modified"), ""});
        return std::optional<std::string>();
    }
    if (response.status == 304 && prepared.cached.has_value()) {
        ++m_stats.metadata_revalidated;
        if (prepared.cached->content_type == k_absent)
            return std::optional<std::string>();
        return std::optional<std::string>(prepared.cached->body);
    }
    if (response.status != 200)
        return util::make_network_error(
            url, "the index answered HTTP " + std::to_string(response.status));
    ++m_stats.metadata_fetched;
    if (prepared.expected.has_value()) {
        const std::string actual = util::sha256_hex(response.body);
        if (actual != *prepared.expected)
            return util::make_error(
                url, "sha256 mismatch: expected " + *prepared.expected + ", got " + actual);
        ROOTLOCK_TRY(stored, m_store.put_bytes(response.body));
        (void)stored;
    } else {
        (void)m_pages.put(
            prepared.key,
            CachedPage{url, header_of(response, "content-type"), header_of(response, "etag"),
                       header_of(response, "last-modified"), response.body});
    }
    return std::optional<std::string>(std::move(response.body));
}

util::Result<std::optional<std::string>> IndexClient::metadata(const DistributionFile& file) {
    if (!file.has_metadata)
        return std::optional<std::string>();
    const auto expected = sha256_of(file.metadata_hashes);
    if (expected.has_value()) {
        ROOTLOCK_TRY(path, m_store.find(*expected));
        if (path.has_value()) {
            ++m_stats.metadata_from_cache;
            ROOTLOCK_TRY(text, util::read_host_file(*path));
            return std::optional<std::string>(std::move(text));
        }
    }
    MetadataRequest prepared = prepare_metadata(file);
    if (auto early = m_metadata_prefetched.find(prepared.url);
        early != m_metadata_prefetched.end()) {
        auto result = std::move(early->second);
        m_metadata_prefetched.erase(early);
        return result;
    }
    if (m_offline) {
        if (prepared.cache_error)
            return *prepared.cache_error;
        if (!prepared.cached.has_value())
            return util::make_network_error(prepared.url,
                                            "not in the cache and --offline forbids the network");
        ++m_stats.metadata_from_cache;
        if (prepared.cached->content_type == k_absent)
            return std::optional<std::string>();
        return std::optional<std::string>(prepared.cached->body);
    }
    return finish_metadata(prepared, m_http.get(prepared.request));
}

void IndexClient::prefetch_metadata(const std::vector<DistributionFile>& files) {
    if (m_offline)
        return;
    std::vector<DownloadRequest> downloads;
    std::vector<MetadataRequest> prepared;
    std::vector<FetchRequest> requests;
    for (const auto& file : files) {
        if (!file.has_metadata)
            continue;
        const auto expected = sha256_of(file.metadata_hashes);
        if (expected.has_value()) {
            auto present = m_store.find(*expected);
            if (present.ok() && present->has_value())
                continue;
        }
        MetadataRequest request = prepare_metadata(file);
        if (m_metadata_prefetched.count(request.url) != 0)
            continue;
        if (expected.has_value() && !request.cached.has_value()) {
            downloads.push_back(DownloadRequest{request.url, *expected, std::nullopt});
            continue;
        }
        // No hash, or a hashed file the index answered 404 for before: a conditional GET.
        requests.push_back(request.request);
        prepared.push_back(std::move(request));
    }
    if (!requests.empty()) {
        auto answers = m_http.get_many(requests);
        for (size_t i = 0; i < prepared.size(); ++i)
            m_metadata_prefetched.emplace(prepared[i].url,
                                          finish_metadata(prepared[i], std::move(answers[i])));
    }
    if (downloads.empty())
        return;
    auto results = m_http.download(downloads, m_store);
    for (const auto& result : results) {
        if (result.ok())
            ++m_stats.metadata_fetched;
    }
}

}  // namespace rootlock::index
