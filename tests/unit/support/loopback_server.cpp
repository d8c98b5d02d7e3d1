// LoopbackServer: POSIX sockets, one thread accepting and one per connection (keep-alive), every
// wait polled in short steps so that destruction stops stalled connections promptly.
#include "support/loopback_server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <stdexcept>

namespace rootlock::testing {

namespace {

constexpr int k_poll_step_ms = 20;
constexpr size_t k_max_request_head = 64 * 1024;

std::string lowercase(std::string_view text) {
    std::string out(text);
    for (char& c : out) {
        if (c >= 'A' && c <= 'Z')
            c = static_cast<char>(c - 'A' + 'a');
    }
    return out;
}

std::string_view trim(std::string_view text) {
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t'))
        text.remove_prefix(1);
    while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r'))
        text.remove_suffix(1);
    return text;
}

bool send_all(int fd, std::string_view bytes) {
    while (!bytes.empty()) {
        ssize_t n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
        if (n <= 0)
            return false;
        bytes.remove_prefix(static_cast<size_t>(n));
    }
    return true;
}

const char* reason(int status) {
    switch (status) {
        case 200:
            return "OK";
        case 206:
            return "Partial Content";
        case 301:
            return "Moved Permanently";
        case 302:
            return "Found";
        case 304:
            return "Not Modified";
        case 401:
            return "Unauthorized";
        case 404:
            return "Not Found";
        case 416:
            return "Range Not Satisfiable";
        case 429:
            return "Too Many Requests";
        case 500:
            return "Internal Server Error";
        case 503:
            return "Service Unavailable";
        default:
            return "Status";
    }
}

// Parses the request head (up to the blank line); false for anything malformed.
bool parse_head(std::string_view head, RecordedRequest& request) {
    auto line_end = head.find("\r\n");
    std::string_view line = head.substr(0, line_end);
    auto first = line.find(' ');
    auto second = line.find(' ', first + 1);
    if (first == std::string_view::npos || second == std::string_view::npos)
        return false;
    request.method = std::string(line.substr(0, first));
    request.target = std::string(line.substr(first + 1, second - first - 1));
    while (line_end != std::string_view::npos) {
        size_t start = line_end + 2;
        line_end = head.find("\r\n", start);
        line = head.substr(
            start, line_end == std::string_view::npos ? std::string_view::npos : line_end - start);
        auto colon = line.find(':');
        if (colon != std::string_view::npos)
            request.headers.emplace_back(lowercase(trim(line.substr(0, colon))),
                                         std::string(trim(line.substr(colon + 1))));
    }
    return true;
}

}  // namespace

// What to send for one request: the head, the body bytes to send, and what to do around them.
struct LoopbackServer::Answer {
    std::string head;
    std::string body;
    int delay_ms = 0;
    int stall_before_ms = -1;  // >= 0: stall before anything, then close
    int stall_after_ms = -1;   // >= 0: stall after the head, then close
    int trickle_ms = -1;       // >= 0: the body one byte at a time, this long apart
    bool close_after = false;
};

std::string RecordedRequest::header(std::string_view name) const {
    for (const auto& [key, value] : headers) {
        if (key == name)
            return value;
    }
    return {};
}

bool RecordedRequest::has_header(std::string_view name) const {
    return std::any_of(headers.begin(), headers.end(),
                       [&](const auto& entry) { return entry.first == name; });
}

LoopbackServer::LoopbackServer() {
    m_listen_fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (m_listen_fd < 0)
        throw std::runtime_error("LoopbackServer: socket failed");
    int yes = 1;
    ::setsockopt(m_listen_fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = 0;
    socklen_t length = sizeof address;
    if (::bind(m_listen_fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
        ::listen(m_listen_fd, 64) != 0 ||
        ::getsockname(m_listen_fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
        ::close(m_listen_fd);
        throw std::runtime_error("LoopbackServer: cannot listen on 127.0.0.1");
    }
    m_port = ntohs(address.sin_port);
    m_acceptor = std::thread([this] { accept_loop(); });
}

LoopbackServer::~LoopbackServer() {
    m_stop = true;
    m_acceptor.join();
    std::vector<std::thread> connections;
    {
        std::lock_guard lock(m_mutex);
        connections.swap(m_connections);
    }
    for (auto& connection : connections)
        connection.join();
    ::close(m_listen_fd);
}

void LoopbackServer::route(const std::string& path, Route route) {
    std::lock_guard lock(m_mutex);
    m_routes[path] = std::move(route);
}

std::string LoopbackServer::url(std::string_view path) const {
    return "http://127.0.0.1:" + std::to_string(m_port) + std::string(path);
}

std::vector<RecordedRequest> LoopbackServer::requests() const {
    std::lock_guard lock(m_mutex);
    return m_requests;
}

std::vector<RecordedRequest> LoopbackServer::requests_for(std::string_view path) const {
    std::vector<RecordedRequest> out;
    for (auto& request : requests()) {
        if (request.target == path || request.target.substr(0, request.target.find('?')) == path)
            out.push_back(request);
    }
    return out;
}

bool LoopbackServer::sleep_ms(int ms) const {
    auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    while (std::chrono::steady_clock::now() < end) {
        if (m_stop)
            return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(std::min(ms, 5)));
    }
    return !m_stop;
}

void LoopbackServer::accept_loop() {
    while (!m_stop) {
        pollfd entry{m_listen_fd, POLLIN, 0};
        if (::poll(&entry, 1, k_poll_step_ms) <= 0)
            continue;
        int fd = ::accept4(m_listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd < 0)
            continue;
        std::lock_guard lock(m_mutex);
        m_connections.emplace_back([this, fd] { serve(fd); });
    }
}

LoopbackServer::Answer LoopbackServer::plan(const RecordedRequest& request) {
    std::lock_guard lock(m_mutex);
    m_requests.push_back(request);
    Answer answer;
    std::string path = request.target.substr(0, request.target.find('?'));
    auto found = m_routes.find(request.method + " " + request.target);
    if (found == m_routes.end())
        found = m_routes.find(request.method + " " + path);
    if (found == m_routes.end())
        found = m_routes.find(request.target);
    if (found == m_routes.end())
        found = m_routes.find(path);
    int status = 404;
    std::vector<std::pair<std::string, std::string>> headers;
    std::string body = "not found\n";
    if (found != m_routes.end()) {
        const Route& route = found->second;
        int k = m_counts[found->first]++;
        answer.delay_ms = route.delay_ms;
        status = route.status;
        headers = route.headers;
        body = route.body;
        if (!route.require_authorization.empty() &&
            request.header("authorization") != route.require_authorization) {
            status = 401;
            headers = {{"WWW-Authenticate", route.challenge}};
            body = "who are you?\n";
        } else if (k < route.fail_first) {
            status = route.fail_status;
            headers.clear();
            body = "try again\n";
        } else if ((k -= route.fail_first) < route.drop_first) {
            answer.close_after = true;
            answer.body = body.substr(0, body.size() / 2);
        } else if ((k -= route.drop_first) < route.stall_first) {
            (route.stall_before_headers ? answer.stall_before_ms : answer.stall_after_ms) =
                route.stall_ms;
        } else if ((k -= route.stall_first) < route.trickle_first) {
            answer.trickle_ms = route.trickle_ms;
        } else if (route.honour_range && request.has_header("range")) {
            std::string range = request.header("range");
            size_t from = 0;
            if (range.rfind("bytes=", 0) == 0 && range.back() == '-')
                std::from_chars(range.data() + 6, range.data() + range.size() - 1, from);
            if (from >= body.size()) {
                status = 416;
                headers = {{"Content-Range", "bytes */" + std::to_string(body.size())}};
                body.clear();
            } else {
                status = 206;
                headers.emplace_back("Content-Range", "bytes " + std::to_string(from) + "-" +
                                                          std::to_string(body.size() - 1) + "/" +
                                                          std::to_string(body.size()));
                body = body.substr(from);
            }
        }
    }
    answer.head = "HTTP/1.1 " + std::to_string(status) + " " + reason(status) + "\r\n";
    for (const auto& [name, value] : headers)
        answer.head += name + ": " + value + "\r\n";
    answer.head += "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n";
    if (!answer.close_after)
        answer.body = std::move(body);
    if (request.method == "HEAD")
        answer.body.clear();
    return answer;
}

void LoopbackServer::serve(int fd) {
    std::string buffer;
    while (!m_stop) {
        auto end = buffer.find("\r\n\r\n");
        if (end == std::string::npos) {
            if (buffer.size() > k_max_request_head)
                break;
            pollfd entry{fd, POLLIN, 0};
            int ready = ::poll(&entry, 1, k_poll_step_ms);
            if (ready < 0)
                break;
            if (ready == 0)
                continue;
            char chunk[4096];
            ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
            if (n <= 0)
                break;
            buffer.append(chunk, static_cast<size_t>(n));
            continue;
        }
        RecordedRequest request;
        bool parsed = parse_head(std::string_view(buffer).substr(0, end + 2), request);
        buffer.erase(0, end + 4);
        if (!parsed)
            break;
        // The body, when the request says it has one (uploads): read whole before answering.
        size_t length = 0;
        if (std::string declared = request.header("content-length"); !declared.empty())
            std::from_chars(declared.data(), declared.data() + declared.size(), length);
        bool complete = true;
        while (buffer.size() < length && !m_stop) {
            pollfd entry{fd, POLLIN, 0};
            int ready = ::poll(&entry, 1, k_poll_step_ms);
            if (ready < 0) {
                complete = false;
                break;
            }
            if (ready == 0)
                continue;
            char chunk[65536];
            ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
            if (n <= 0) {
                complete = false;
                break;
            }
            buffer.append(chunk, static_cast<size_t>(n));
        }
        if (!complete)
            break;
        request.body = buffer.substr(0, length);
        buffer.erase(0, length);
        Answer answer = plan(request);
        int now = ++m_in_flight;
        int seen = m_max_in_flight.load();
        while (now > seen && !m_max_in_flight.compare_exchange_weak(seen, now)) {
        }
        bool keep_going = sleep_ms(answer.delay_ms);
        if (keep_going && answer.stall_before_ms >= 0) {
            sleep_ms(answer.stall_before_ms);
            keep_going = false;
        }
        if (keep_going && answer.trickle_ms >= 0) {
            keep_going = send_all(fd, answer.head);
            for (size_t i = 0; keep_going && i < answer.body.size(); ++i)
                keep_going = send_all(fd, answer.body.substr(i, 1)) && sleep_ms(answer.trickle_ms);
            answer.body.clear();
        } else if (keep_going && answer.stall_after_ms < 0 && !answer.close_after) {
            // One write for the whole answer: two would meet Nagle and delayed ACKs (40 ms).
            keep_going = send_all(fd, answer.head + answer.body);
            answer.body.clear();
        } else if (keep_going) {
            keep_going = send_all(fd, answer.head);
        }
        if (keep_going && answer.stall_after_ms >= 0) {
            sleep_ms(answer.stall_after_ms);
            keep_going = false;
        }
        if (keep_going && !answer.body.empty())
            keep_going = send_all(fd, answer.body);
        keep_going = keep_going && !answer.close_after;
        --m_in_flight;
        if (!keep_going)
            break;
    }
    ::shutdown(fd, SHUT_RDWR);
    ::close(fd);
}

index::HttpOptions loopback_http_options(int retries) {
    ::setenv("no_proxy", "127.0.0.1,localhost", 1);
    ::setenv("NO_PROXY", "127.0.0.1,localhost", 1);
    index::HttpOptions options;
    options.connect_timeout_ms = 2000;
    options.stall_timeout_ms = 2000;
    options.retries = retries;
    options.backoff_initial_ms = 1;
    options.user_agent = "rootlock/test";
    options.netrc_file = "/nonexistent/netrc";
    return options;
}

}  // namespace rootlock::testing
