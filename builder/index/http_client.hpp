// The HTTP client every network access goes through: GETs of index pages and parallel downloads
// straight into the content store, with retries, resume, stall detection and an offline switch.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "index/content_store.hpp"
#include "index/http_text.hpp"
#include "util/result.hpp"

namespace rootlock::index {

struct Progress {
    size_t files_done = 0;
    size_t files_total = 0;
    uint64_t bytes_done = 0;
    uint64_t bytes_total = 0;  // the sum of the sizes known so far (index sizes, Content-Length)
    std::string current;       // the URL (credentials removed) that moved last
};

struct HttpOptions {
    long connect_timeout_ms = 10000;
    // No byte received for this long (from the start of a transfer or since the last byte): the
    // attempt fails, and is retried like a timeout. Checked by the client's own loop, so it is
    // precise to a few milliseconds.
    long stall_timeout_ms = 30000;
    // Fewer bytes than this per second, in or out, over any stall_timeout_ms window of an
    // attempt (a server that sends one byte every few seconds): the attempt fails and is retried
    // like a silent one. 0 turns the check off.
    uint64_t min_rate = 1024;
    // The whole client's end: a transfer not done by then fails at once, without a retry, as a
    // network failure naming the URL. Unset: no deadline.
    std::optional<std::chrono::steady_clock::time_point> deadline;
    int retries = 4;                // extra attempts after a 5xx, 429, reset, timeout, short body
    long backoff_initial_ms = 250;  // doubled each retry, capped at 30 s
    int max_parallel = 8;           // concurrent transfers in download()
    std::string user_agent;         // "rootlock/<version>"
    // Empty: curl's default ($NETRC, else ~/.netrc). Either way the file is optional.
    std::string netrc_file;
    bool offline = false;  // every request fails at once, nothing leaves the machine
    std::function<void(const Progress&)> progress;  // optional; called from the caller
};

struct HttpResponse {
    long status = 0;  // 200, 304, 404 ... (after redirects)
    std::string body;
    std::map<std::string, std::string> headers;  // of the final response; names lowercased,
                                                 // the last value wins
    // After redirects, as curl reports it: it keeps any credentials of the URL asked for, so it
    // can resolve relative links; use redact_url before showing it.
    std::string effective_url;
};

struct FetchRequest {
    std::string url;
    std::vector<std::pair<std::string, std::string>> headers;  // e.g. Accept, If-None-Match
    uint64_t max_body = 64ull << 20;                           // bigger bodies fail
};

// A request with any method and an optional body, for APIs beyond GET (an OCI registry's
// uploads): the body is `body`, or `body_length` bytes of `body_file` from `body_offset`, read
// as they are sent (a multi-gigabyte layer is never held in memory).
struct SendRequest {
    std::string method = "GET";  // GET, HEAD, POST, PUT, PATCH, DELETE
    std::string url;
    std::vector<std::pair<std::string, std::string>> headers;
    std::string body;
    std::string body_file;  // when set, the body comes from this file instead of `body`
    uint64_t body_offset = 0;
    uint64_t body_length = 0;
    uint64_t max_body = 1ull << 20;  // of the response
    // Registries answer uploads with a Location to go on with, never a redirect to follow; a
    // GET of a blob may redirect to storage.
    bool follow_redirects = false;
    // Whether a reset, timeout, 5xx or 429 is tried again here. Off for a step that cannot be
    // repeated alone (a chunk of an upload session): its caller starts over instead, and sees
    // a 5xx as a response.
    bool retry = true;
    std::function<void(uint64_t sent)> on_sent;  // body bytes sent so far, as they go
};

struct DownloadRequest {
    std::string url;
    std::string sha256;  // expected hex digest (either case); empty when the index gave none
    std::optional<uint64_t> size;  // expected size when known
};

// Error texts (`where` is always the URL with any user:password@ removed):
//   "not in the cache and --offline forbids the network"           network
//   "no data received for 0.3 s"                                    network (after retries)
//   "HTTP 503" (5xx or 429 after the last retry; 4xx in download)   network
//   "response body exceeds N bytes" (get's max_body)                 network
//   "sha256 mismatch: expected X, got Y"                            integrity
//   "size mismatch: expected N bytes, got M" / "got more"           integrity
//   curl's own text for other failures ("Couldn't connect to server") network
// A digest or size mismatch is ErrorKind::integrity (exit 3, like every download that fails its
// digest, wherever it is found): the bytes arrived whole, and they are not the ones the index
// (or the lockfile) promised, so retrying would not help.
class HttpClient {
  public:
    explicit HttpClient(HttpOptions options);
    ~HttpClient();
    HttpClient(const HttpClient&) = delete;
    HttpClient& operator=(const HttpClient&) = delete;

    // One GET with retries. 4xx other than 429 are returned (not errors) so callers can decide;
    // 5xx or 429 after the last retry, network failures and timeouts are errors. The body is
    // decoded (gzip, br, zstd) when the server compresses it.
    util::Result<HttpResponse> get(const FetchRequest& request);

    // Several GETs at once (at most max_parallel in flight), each as get() would answer it;
    // results in request order.
    std::vector<util::Result<HttpResponse>> get_many(const std::vector<FetchRequest>& requests);

    // One request of any method, retried as get() is when `retry` is set. Every status is a
    // response but 5xx and 429 when retried to the end; failures to connect or send are errors.
    util::Result<HttpResponse> send(const SendRequest& request);

    // Downloads every request, at most max_parallel at once (HTTP/2 multiplexing where the
    // server offers it), straight into `store`: a temp file hashed while written, renamed into
    // place only when the digest and size match. A blob already in the store is not downloaded
    // again (also when offline); requests for the same digest share one transfer. A transfer
    // cut mid-body resumes with "Range: bytes=<have>-". Results are in request order.
    // `headers` go with every request's every attempt (a registry's Authorization); curl drops
    // them on a redirect to another host, so a token never reaches the storage a registry
    // redirects blobs to.
    std::vector<util::Result<StoredBlob>> download(
        const std::vector<DownloadRequest>& requests, ContentStore& store,
        const std::vector<std::pair<std::string, std::string>>& headers = {});

    // Transfer attempts started so far (each retry counts), for tests.
    uint64_t requests_made() const { return m_requests_made; }

  private:
    struct Engine;
    HttpOptions m_options;
    std::unique_ptr<Engine> m_engine;
    uint64_t m_requests_made = 0;
};

}  // namespace rootlock::index
