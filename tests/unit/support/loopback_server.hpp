// LoopbackServer: a small real HTTP/1.1 server on 127.0.0.1 for the HTTP client's tests, scripted
// per path (failures, dropped and stalled bodies, Range, auth), recording every request it saw.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "index/http_client.hpp"

namespace rootlock::testing {

// HTTP options for talking to a LoopbackServer: fast retries, a short stall limit, no .netrc,
// and no proxy that could catch the loopback traffic (no_proxy is set for the process).
index::HttpOptions loopback_http_options(int retries);

struct RecordedRequest {
    std::string method;
    std::string target;                                        // as sent: path and query
    std::vector<std::pair<std::string, std::string>> headers;  // names lowercased
    std::string body;                                          // Content-Length bytes

    // The value of the first header with this (lowercase) name; "" when absent.
    std::string header(std::string_view name) const;
    bool has_header(std::string_view name) const;
};

// How one path answers. A route's requests are numbered from 0; request k gets, in order:
// fail_status for k < fail_first, then headers and half the body before the connection closes
// for the next drop_first, then a stall for the next stall_first, then the normal answer.
struct Route {
    int status = 200;
    std::vector<std::pair<std::string, std::string>> headers;  // besides Content-Length
    std::string body;
    bool honour_range = false;  // "Range: bytes=N-" gets 206 and Content-Range
    int fail_first = 0;
    int fail_status = 500;
    int drop_first = 0;
    int stall_first = 0;
    int stall_ms = 0;                   // how long a stall sends nothing, then the server closes
    bool stall_before_headers = false;  // stall before the status line instead of after headers
    int delay_ms = 0;                   // every answer waits this long first
    int trickle_first = 0;              // the first answers send their body one byte at a time,
    int trickle_ms = 0;                 // this long apart (never silent, never done)
    std::string require_authorization;  // 401 unless the Authorization header is exactly this
    std::string challenge = "Basic realm=\"test\"";  // the 401's WWW-Authenticate
};

class LoopbackServer {
  public:
    // Listens on an ephemeral port; throws std::runtime_error when it cannot.
    LoopbackServer();
    ~LoopbackServer();
    LoopbackServer(const LoopbackServer&) = delete;
    LoopbackServer& operator=(const LoopbackServer&) = delete;

    // `path` is a path, a path with its query, or either after a method ("PATCH /v2/x"), the
    // most specific first. Unrouted paths answer 404.
    void route(const std::string& path, Route route);

    uint16_t port() const { return m_port; }
    // "http://127.0.0.1:PORT" + path.
    std::string url(std::string_view path) const;

    std::vector<RecordedRequest> requests() const;
    // The requests whose target is `path`, or whose path is (whatever their query).
    std::vector<RecordedRequest> requests_for(std::string_view path) const;
    // The most requests that were being answered at the same moment.
    int max_in_flight() const { return m_max_in_flight.load(); }

  private:
    struct Answer;
    void accept_loop();
    void serve(int fd);
    Answer plan(const RecordedRequest& request);
    bool sleep_ms(int ms) const;  // false when the server is stopping

    int m_listen_fd = -1;
    uint16_t m_port = 0;
    std::atomic<bool> m_stop{false};
    std::atomic<int> m_in_flight{0};
    std::atomic<int> m_max_in_flight{0};
    std::thread m_acceptor;
    mutable std::mutex m_mutex;
    std::vector<std::thread> m_connections;
    std::map<std::string, Route> m_routes;
    std::map<std::string, int> m_counts;
    std::vector<RecordedRequest> m_requests;
};

}  // namespace rootlock::testing
