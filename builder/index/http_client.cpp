// libcurl, wrapped once: RAII handles, one multi loop that runs every transfer (a GET is a loop
// of one), and the retry, resume, stall and store rules that loop applies to each attempt.
#include "index/http_client.hpp"

#include <curl/curl.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <mutex>

#include "index/curl_loader.hpp"
#include "index/http_text.hpp"
#include "util/sha256.hpp"

namespace rootlock::index {

namespace {

using Clock = std::chrono::steady_clock;
using Millis = std::chrono::milliseconds;

constexpr long k_max_backoff_ms = 30000;
constexpr long k_max_redirects = 10;
constexpr auto k_poll_interval = Millis(100);
constexpr auto k_progress_interval = Millis(100);

struct EasyDeleter {
    void operator()(CURL* handle) const { curl_easy_cleanup(handle); }
};
struct MultiDeleter {
    void operator()(CURLM* handle) const { curl_multi_cleanup(handle); }
};
struct SlistDeleter {
    void operator()(curl_slist* list) const { curl_slist_free_all(list); }
};
using EasyHandle = std::unique_ptr<CURL, EasyDeleter>;
using MultiHandle = std::unique_ptr<CURLM, MultiDeleter>;
using Slist = std::unique_ptr<curl_slist, SlistDeleter>;

void global_init() {
    static std::once_flag once;
    std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

// Failures worth another attempt: the server or the path to it may do better next time.
bool is_transient(CURLcode code) {
    switch (code) {
        case CURLE_COULDNT_CONNECT:
        case CURLE_OPERATION_TIMEDOUT:
        case CURLE_PARTIAL_FILE:
        case CURLE_RECV_ERROR:
        case CURLE_SEND_ERROR:
        case CURLE_GOT_NOTHING:
        case CURLE_HTTP2:
        case CURLE_HTTP2_STREAM:
        case CURLE_SSL_CONNECT_ERROR:
            return true;
        default:
            return false;
    }
}

// curl's fixed text for the code; its error buffer only where it names a certificate problem,
// since elsewhere it carries timings ("after 3 ms") that would make messages vary run to run.
std::string curl_message(CURLcode code, const char* buffer) {
    bool tls = code == CURLE_PEER_FAILED_VERIFICATION || code == CURLE_SSL_CONNECT_ERROR ||
               code == CURLE_SSL_CACERT_BADFILE || code == CURLE_SSL_CERTPROBLEM;
    if (tls && buffer[0] != '\0')
        return buffer;
    return curl_easy_strerror(code);
}

// One URL being fetched, across its attempts: the request, the sink (memory or a store temp
// file), and the outcome. Callbacks reach it through curl's user-data pointer.
struct Transfer {
    // The request.
    std::string url;
    std::string shown;  // url without credentials, the `where` of every error
    std::vector<std::pair<std::string, std::string>> request_headers;
    bool to_file = false;
    uint64_t max_body = 0;
    std::string method = "GET";
    bool follow_redirects = true;
    int retries = 0;  // extra attempts allowed
    bool server_errors_are_responses = false;
    // The upload body: `upload_text`, or `upload_length` bytes of `upload_fd` from
    // `upload_offset`; `upload_sent` counts this attempt's bytes.
    bool has_upload = false;
    std::string upload_text;
    int upload_fd = -1;
    uint64_t upload_offset = 0;
    uint64_t upload_length = 0;
    uint64_t upload_sent = 0;
    std::function<void(uint64_t)> on_sent;
    std::optional<uint64_t> expected_size;
    std::string expected_sha256;
    ContentStore* store = nullptr;

    // The current attempt.
    EasyHandle easy;
    Slist header_list;
    bool in_multi = false;
    int attempts = 0;
    Clock::time_point ready_at{};
    Clock::time_point last_activity{};
    // The current minimum-rate window: when it began and the bytes moved since.
    Clock::time_point window_start{};
    uint64_t window_bytes = 0;
    std::array<char, CURL_ERROR_SIZE> error_buffer{};
    std::optional<util::Error> abort;  // a callback failed the transfer for good
    std::string restart_reason;        // a callback refused a resumed body: start over
    bool decided = false;              // whether this attempt's body was judged yet
    bool keep_body = false;            // the body goes to the sink (not an error page)
    uint64_t range_from = 0;

    // What arrived.
    std::map<std::string, std::string> headers;
    std::string body;
    std::string temp_path;
    int fd = -1;
    util::Sha256 hasher;
    uint64_t written = 0;
    uint64_t known_total = 0;

    // The outcome.
    bool finished = false;
    std::optional<util::Error> error;
    long status = 0;
    std::string effective_url;
    StoredBlob blob;

    void restart_file() {
        if (fd >= 0 && ::ftruncate(fd, 0) == 0)
            ::lseek(fd, 0, SEEK_SET);
        hasher = util::Sha256();
        written = 0;
    }
};

size_t on_header(char* data, size_t size, size_t count, void* user) {
    auto& t = *static_cast<Transfer*>(user);
    size_t length = size * count;
    t.last_activity = Clock::now();
    std::string_view line(data, length);
    if (line.substr(0, 5) == "HTTP/") {
        t.headers.clear();  // a new response (redirect, 100 Continue): only the last one counts
        return length;
    }
    auto colon = line.find(':');
    if (colon != std::string_view::npos && colon > 0)
        t.headers[lowercase(trim(line.substr(0, colon)))] = trim(line.substr(colon + 1));
    return length;
}

// Judges a file transfer's response once, before its first body byte: a 200 restarts the file
// (the server ignored the Range), a 206 must continue exactly where the file ends.
bool accept_status(Transfer& t, long status) {
    t.decided = true;
    t.keep_body = status == 200 || status == 206;
    if (status == 200) {
        if (t.written > 0)
            t.restart_file();
        if (auto length = t.headers.find("content-length"); length != t.headers.end())
            t.known_total = parse_u64(length->second).value_or(0);
    } else if (status == 206) {
        auto range = t.headers.find("content-range");
        auto parsed = range == t.headers.end() ? std::nullopt : parse_content_range(range->second);
        if (t.range_from == 0 || !parsed || parsed->first != t.written) {
            t.restart_file();
            t.restart_reason = "the server answered a different range than asked";
            return false;
        }
        t.known_total = parsed->second.value_or(0);
    }
    return true;
}

size_t on_body(char* data, size_t size, size_t count, void* user) {
    auto& t = *static_cast<Transfer*>(user);
    size_t length = size * count;
    t.last_activity = Clock::now();
    t.window_bytes += length;
    if (!t.to_file) {
        if (t.body.size() + length > t.max_body) {
            t.abort = util::make_network_error(
                t.shown, fmt::format("response body exceeds {} bytes", t.max_body));
            return 0;
        }
        t.body.append(data, length);
        return length;
    }
    if (!t.decided) {
        long status = 0;
        curl_easy_getinfo(t.easy.get(), CURLINFO_RESPONSE_CODE, &status);
        if (!accept_status(t, status))
            return 0;
    }
    if (!t.keep_body)
        return length;  // an error page: read and dropped, the status decides
    if (t.expected_size && t.written + length > *t.expected_size) {
        t.abort = util::make_integrity_error(
            t.shown, fmt::format("size mismatch: expected {} bytes, got more", *t.expected_size));
        return 0;
    }
    size_t done = 0;
    while (done < length) {
        ssize_t n = ::write(t.fd, data + done, length - done);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            t.abort = util::make_io_error(t.temp_path, std::strerror(errno));
            return 0;
        }
        done += static_cast<size_t>(n);
    }
    t.hasher.update(std::string_view(data, length));
    t.written += length;
    return length;
}

// Feeds the upload body to curl, from memory or by pread() from its file, so a retried
// attempt (or a rewind curl asks for) reads the same bytes again.
size_t on_read(char* buffer, size_t size, size_t count, void* user) {
    auto& t = *static_cast<Transfer*>(user);
    t.last_activity = Clock::now();
    uint64_t room = static_cast<uint64_t>(size) * count;
    uint64_t n = std::min(room, t.upload_length - t.upload_sent);
    if (n == 0)
        return 0;
    t.window_bytes += n;
    if (t.upload_fd < 0) {
        std::memcpy(buffer, t.upload_text.data() + t.upload_sent, n);
    } else {
        ssize_t got = 0;
        do {
            got = ::pread(t.upload_fd, buffer, n,
                          static_cast<off_t>(t.upload_offset + t.upload_sent));
        } while (got < 0 && errno == EINTR);
        if (got <= 0) {
            t.abort = util::make_error(
                t.shown, got < 0 ? std::string("cannot read the body: ") + std::strerror(errno)
                                 : "the body's file ended early");
            return CURL_READFUNC_ABORT;
        }
        n = static_cast<uint64_t>(got);
    }
    t.upload_sent += n;
    if (t.on_sent)
        t.on_sent(t.upload_sent);
    return static_cast<size_t>(n);
}

int on_seek(void* user, curl_off_t offset, int origin) {
    auto& t = *static_cast<Transfer*>(user);
    if (origin != SEEK_SET || offset < 0 || static_cast<uint64_t>(offset) > t.upload_length)
        return CURL_SEEKFUNC_CANTSEEK;
    t.upload_sent = static_cast<uint64_t>(offset);
    return CURL_SEEKFUNC_OK;
}

}  // namespace

// The multi handle (its connection cache outlives single requests, so connections are reused)
// and the loop that drives transfers through their attempts.
struct HttpClient::Engine {
    const HttpOptions& options;
    uint64_t& requests_made;
    MultiHandle multi;

    // Offsets for the progress report: requests the store answered without a transfer.
    size_t files_total = 0;
    size_t base_files = 0;
    uint64_t base_bytes = 0;

    Engine(const HttpOptions& o, uint64_t& counter)
        : options(o), requests_made(counter), multi(curl_multi_init()) {
        if (multi)
            curl_multi_setopt(multi.get(), CURLMOPT_PIPELINING, CURLPIPE_MULTIPLEX);
    }

    void finish(Transfer& t, std::optional<util::Error> error) {
        t.finished = true;
        t.error = std::move(error);
        t.easy.reset();
        t.header_list.reset();
        if (t.fd >= 0) {
            ::close(t.fd);
            t.fd = -1;
        }
        if (t.error && !t.temp_path.empty() && t.store != nullptr)
            t.store->discard(t.temp_path);
    }

    util::Status configure(Transfer& t) {
        CURL* h = t.easy.get();
        CURLcode rc = CURLE_OK;
        auto set = [&](CURLoption option, auto value) {
            if (rc == CURLE_OK)
                rc = curl_easy_setopt(h, option, value);
        };
        set(CURLOPT_URL, t.url.c_str());
        set(CURLOPT_PROTOCOLS_STR, "http,https");
        set(CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
        set(CURLOPT_FOLLOWLOCATION, t.follow_redirects ? 1L : 0L);
        set(CURLOPT_MAXREDIRS, k_max_redirects);
        set(CURLOPT_CONNECTTIMEOUT_MS, options.connect_timeout_ms);
        set(CURLOPT_NOSIGNAL, 1L);
        set(CURLOPT_NETRC, static_cast<long>(CURL_NETRC_OPTIONAL));
        if (!options.netrc_file.empty())
            set(CURLOPT_NETRC_FILE, options.netrc_file.c_str());
        if (!options.user_agent.empty())
            set(CURLOPT_USERAGENT, options.user_agent.c_str());
        set(CURLOPT_ERRORBUFFER, t.error_buffer.data());
        set(CURLOPT_HEADERFUNCTION, on_header);
        set(CURLOPT_HEADERDATA, static_cast<void*>(&t));
        set(CURLOPT_WRITEFUNCTION, on_body);
        set(CURLOPT_WRITEDATA, static_cast<void*>(&t));
        if (t.method == "HEAD") {
            set(CURLOPT_NOBODY, 1L);
        } else if (t.has_upload) {
            set(CURLOPT_UPLOAD, 1L);
            set(CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(t.upload_length));
            set(CURLOPT_READFUNCTION, on_read);
            set(CURLOPT_READDATA, static_cast<void*>(&t));
            set(CURLOPT_SEEKFUNCTION, on_seek);
            set(CURLOPT_SEEKDATA, static_cast<void*>(&t));
        }
        if (t.method != "GET" && t.method != "HEAD" && !(t.method == "PUT" && t.has_upload))
            set(CURLOPT_CUSTOMREQUEST, t.method.c_str());
        if (t.to_file) {
            // Bytes are hashed as they arrive, so they must be the file itself: no decoding.
            set(CURLOPT_PIPEWAIT, 1L);
            if (t.range_from > 0)
                set(CURLOPT_RANGE, fmt::format("{}-", t.range_from).c_str());
        } else {
            set(CURLOPT_ACCEPT_ENCODING, "");
        }
        Slist list;
        for (const auto& [name, value] : t.request_headers) {
            std::string line = name + ": " + value;
            curl_slist* grown = curl_slist_append(list.get(), line.c_str());
            if (grown == nullptr)
                return util::make_network_error(t.shown, "out of memory");
            (void)list.release();
            list.reset(grown);
        }
        t.header_list = std::move(list);
        if (t.header_list)
            set(CURLOPT_HTTPHEADER, t.header_list.get());
        if (rc != CURLE_OK)
            return util::make_network_error(t.shown, curl_easy_strerror(rc));
        return util::ok_status();
    }

    util::Status start_attempt(Transfer& t) {
        t.easy.reset(curl_easy_init());
        if (!t.easy || !multi)
            return util::make_network_error(t.shown,
                                            curl_load_error().empty()
                                                ? "cannot start a transfer"
                                                : "cannot start a transfer: " + curl_load_error());
        t.error_buffer[0] = '\0';
        t.abort.reset();
        t.restart_reason.clear();
        t.decided = false;
        t.keep_body = false;
        t.headers.clear();
        t.body.clear();
        t.upload_sent = 0;
        if (t.to_file) {
            if (t.fd < 0) {
                auto temp = t.store->temp_path();
                if (!temp)
                    return temp.error();
                t.temp_path = *temp;
                t.fd = ::open(t.temp_path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOFOLLOW);
                if (t.fd < 0)
                    return util::make_io_error(t.temp_path, std::strerror(errno));
            }
            t.range_from = t.written;
        }
        auto configured = configure(t);
        if (!configured)
            return configured;
        if (curl_multi_add_handle(multi.get(), t.easy.get()) != CURLM_OK)
            return util::make_network_error(t.shown,
                                            curl_load_error().empty()
                                                ? "cannot start a transfer"
                                                : "cannot start a transfer: " + curl_load_error());
        t.in_multi = true;
        ++t.attempts;
        ++requests_made;
        t.last_activity = Clock::now();
        t.window_start = t.last_activity;
        t.window_bytes = 0;
        return util::ok_status();
    }

    void detach(Transfer& t) {
        if (t.in_multi)
            curl_multi_remove_handle(multi.get(), t.easy.get());
        t.in_multi = false;
    }

    // A failed attempt that may be retried: later, with a doubled delay, or never again.
    void retry_or_fail(Transfer& t, std::string reason) {
        if (t.attempts > t.retries) {
            finish(t, util::make_network_error(t.shown, std::move(reason)));
            return;
        }
        long delay = std::clamp(options.backoff_initial_ms, 0L, k_max_backoff_ms);
        for (int i = 1; i < t.attempts && delay < k_max_backoff_ms; ++i)
            delay = std::min(delay * 2, k_max_backoff_ms);
        t.ready_at = Clock::now() + Millis(delay);
    }

    void finish_file(Transfer& t) {
        if (t.expected_size && t.written < *t.expected_size && t.known_total == 0) {
            // A body that ended early without having said its length (chunked, or closed by the
            // server) looks complete to HTTP, yet may be a cut: resumed from where it stopped. A
            // body that said its length and gave it all is another file: a size mismatch below.
            retry_or_fail(t, fmt::format("the response ended after {} of {} bytes", t.written,
                                         *t.expected_size));
            return;
        }
        const std::string actual = t.hasher.hex_digest();
        if (!t.expected_sha256.empty() && actual != t.expected_sha256 && !t.expected_size &&
            t.known_total == 0 && t.attempts <= t.retries) {
            // Ended by the connection closing, with neither a declared length nor a size to
            // hold it to (a base named by URL and digest alone): it may have been cut anywhere,
            // so the bytes are fetched again from the start before they count as wrong.
            t.restart_file();
            retry_or_fail(t,
                          "the response ended without a declared length, its bytes not the "
                          "sha256's: fetched again");
            return;
        }
        if (::close(t.fd) != 0) {
            t.fd = -1;
            finish(t, util::make_io_error(t.temp_path, std::strerror(errno)));
            return;
        }
        t.fd = -1;
        if (t.expected_size && t.written != *t.expected_size) {
            finish(t, util::make_integrity_error(
                          t.shown, fmt::format("size mismatch: expected {} bytes, got {}",
                                               *t.expected_size, t.written)));
            return;
        }
        if (!t.expected_sha256.empty() && actual != t.expected_sha256) {
            finish(t,
                   util::make_integrity_error(t.shown, "sha256 mismatch: expected " +
                                                           t.expected_sha256 + ", got " + actual));
            return;
        }
        auto committed = t.store->commit(t.temp_path, actual);
        if (!committed) {
            finish(t, committed.error());
            return;
        }
        t.blob = StoredBlob{actual, t.written, *committed};
        finish(t, std::nullopt);
    }

    void complete_attempt(Transfer& t, CURLcode code) {
        if (t.abort) {
            finish(t, *t.abort);
            return;
        }
        if (code != CURLE_OK) {
            if (!t.restart_reason.empty())
                retry_or_fail(t, t.restart_reason);
            else if (is_transient(code))
                retry_or_fail(t, curl_message(code, t.error_buffer.data()));
            else
                finish(t, util::make_network_error(t.shown,
                                                   curl_message(code, t.error_buffer.data())));
            return;
        }
        long status = 0;
        curl_easy_getinfo(t.easy.get(), CURLINFO_RESPONSE_CODE, &status);
        if ((status >= 500 || status == 429) &&
            !(t.server_errors_are_responses && t.attempts > t.retries)) {
            retry_or_fail(t, fmt::format("HTTP {}", status));
            return;
        }
        if (!t.to_file) {
            t.status = status;
            char* effective = nullptr;
            curl_easy_getinfo(t.easy.get(), CURLINFO_EFFECTIVE_URL, &effective);
            t.effective_url = effective != nullptr ? effective : t.url;
            finish(t, std::nullopt);
            return;
        }
        if (status == 416 && t.range_from > 0) {
            t.restart_file();
            retry_or_fail(t, "HTTP 416");
            return;
        }
        if (status != 200 && status != 206) {
            finish(t, util::make_network_error(t.shown, fmt::format("HTTP {}", status)));
            return;
        }
        if (!t.decided && !accept_status(t, status)) {
            retry_or_fail(t, t.restart_reason);
            return;
        }
        finish_file(t);
    }

    void report(const std::vector<Transfer*>& transfers) {
        Progress progress;
        progress.files_total = files_total;
        progress.files_done = base_files;
        progress.bytes_done = base_bytes;
        progress.bytes_total = base_bytes;
        Clock::time_point latest{};
        for (const Transfer* t : transfers) {
            progress.files_done += t->finished ? 1 : 0;
            progress.bytes_done += t->written;
            progress.bytes_total += t->expected_size.value_or(t->known_total);
            if (t->attempts > 0 && t->last_activity >= latest) {
                latest = t->last_activity;
                progress.current = t->shown;
            }
        }
        progress.bytes_total = std::max(progress.bytes_total, progress.bytes_done);
        options.progress(progress);
    }

    // Drives every transfer to its outcome: starts attempts as slots and backoff delays allow,
    // collects finished ones, fails stalled ones, and sleeps in curl_multi_poll in between.
    void run(const std::vector<Transfer*>& transfers) {
        auto stall = Millis(std::max(options.stall_timeout_ms, 1L));
        size_t limit = static_cast<size_t>(std::max(options.max_parallel, 1));
        size_t active = 0;
        size_t reported_files = SIZE_MAX;
        Clock::time_point last_report{};
        for (Transfer* t : transfers)
            t->ready_at = Clock::now();
        while (true) {
            auto now = Clock::now();
            bool all_finished = true;
            for (Transfer* t : transfers) {
                if (t->finished)
                    continue;
                all_finished = false;
                if (!t->in_multi && t->ready_at <= now && active < limit) {
                    auto started = start_attempt(*t);
                    if (started)
                        ++active;
                    else
                        finish(*t, started.error());
                }
            }
            if (all_finished)
                break;
            int running = 0;
            curl_multi_perform(multi.get(), &running);
            int left = 0;
            while (CURLMsg* message = curl_multi_info_read(multi.get(), &left)) {
                if (message->msg != CURLMSG_DONE)
                    continue;
                CURL* easy = message->easy_handle;
                CURLcode code = message->data.result;
                for (Transfer* t : transfers) {
                    if (t->in_multi && t->easy.get() == easy) {
                        detach(*t);
                        --active;
                        complete_attempt(*t, code);
                        break;
                    }
                }
            }
            now = Clock::now();
            auto wake = now + k_poll_interval;
            bool any_left = false;
            for (Transfer* t : transfers) {
                if (t->finished)
                    continue;
                any_left = true;
                if (options.deadline && now >= *options.deadline) {
                    if (t->in_multi) {
                        detach(*t);
                        --active;
                    }
                    finish(*t, util::make_network_error(t->shown, "the run's deadline passed"));
                    continue;
                }
                if (t->in_multi && now - t->last_activity >= stall) {
                    detach(*t);
                    --active;
                    retry_or_fail(*t, "no data received for " +
                                          format_seconds(options.stall_timeout_ms) + " s");
                    continue;
                }
                if (t->in_multi && now - t->window_start >= stall) {
                    // The window's bytes against the rate: too few is a failure like silence;
                    // enough starts the next window.
                    // The window as it passed (at least --timeout, to the millisecond), so a
                    // window of 1.5 s asks for 1.5 s worth of bytes, not one second's.
                    const auto window_ms = static_cast<uint64_t>(
                        std::chrono::duration_cast<std::chrono::milliseconds>(now - t->window_start)
                            .count());
                    // A window without a byte is silence, which the stall check names.
                    if (options.min_rate > 0 && t->window_bytes > 0 &&
                        t->window_bytes * 1000 < options.min_rate * window_ms) {
                        const uint64_t bytes = t->window_bytes;
                        detach(*t);
                        --active;
                        retry_or_fail(*t,
                                      fmt::format("{} bytes in {} s, below the minimum "
                                                  "rate of {} bytes/s",
                                                  bytes, format_seconds(options.stall_timeout_ms),
                                                  options.min_rate));
                        continue;
                    }
                    t->window_start = now;
                    t->window_bytes = 0;
                }
                if (t->in_multi)
                    wake = std::min({wake, t->last_activity + stall, t->window_start + stall});
                if (options.deadline)
                    wake = std::min(wake, *options.deadline);
                else if (t->ready_at > now || active < limit)
                    wake = std::min(wake, t->ready_at);
            }
            if (options.progress) {
                size_t done = 0;
                for (const Transfer* t : transfers)
                    done += t->finished ? 1 : 0;
                if (done != reported_files || now - last_report >= k_progress_interval) {
                    report(transfers);
                    reported_files = done;
                    last_report = now;
                }
            }
            if (!any_left)
                continue;  // the loop's head reports the end without another poll
            auto wait = std::chrono::duration_cast<Millis>(wake - Clock::now()).count();
            curl_multi_poll(multi.get(), nullptr, 0, static_cast<int>(std::max<int64_t>(wait, 0)),
                            nullptr);
        }
        if (options.progress)
            report(transfers);
    }
};

HttpClient::HttpClient(HttpOptions options) : m_options(std::move(options)) {
    global_init();
    m_engine = std::make_unique<Engine>(m_options, m_requests_made);
}

HttpClient::~HttpClient() = default;

util::Result<HttpResponse> HttpClient::get(const FetchRequest& request) {
    Transfer t;
    t.url = request.url;
    t.shown = redact_url(request.url);
    t.retries = m_options.retries;
    if (m_options.offline)
        return util::make_network_error(t.shown,
                                        "not in the cache and --offline forbids the network");
    t.request_headers = request.headers;
    t.max_body = request.max_body;
    // Progress is for downloads; a page fetch is too short to report on.
    auto progress = std::exchange(m_options.progress, nullptr);
    m_engine->files_total = 0;
    m_engine->run({&t});
    m_options.progress = std::move(progress);
    if (t.error)
        return *t.error;
    return HttpResponse{t.status, std::move(t.body), std::move(t.headers),
                        std::move(t.effective_url)};
}

util::Result<HttpResponse> HttpClient::send(const SendRequest& request) {
    Transfer t;
    t.url = request.url;
    t.shown = redact_url(request.url);
    if (m_options.offline)
        return util::make_network_error(t.shown, "--offline forbids the network");
    t.method = request.method;
    t.follow_redirects = request.follow_redirects;
    t.retries = request.retry ? m_options.retries : 0;
    t.server_errors_are_responses = !request.retry;
    t.request_headers = request.headers;
    t.max_body = request.max_body;
    t.on_sent = request.on_sent;
    t.has_upload = !request.body_file.empty() || !request.body.empty() || request.method == "PUT" ||
                   request.method == "POST" || request.method == "PATCH";
    if (!request.body_file.empty()) {
        t.upload_fd = ::open(request.body_file.c_str(), O_RDONLY | O_CLOEXEC);
        if (t.upload_fd < 0)
            return util::make_error(request.body_file, std::strerror(errno));
        t.upload_offset = request.body_offset;
        t.upload_length = request.body_length;
    } else {
        t.upload_text = request.body;
        t.upload_length = request.body.size();
    }
    auto progress = std::exchange(m_options.progress, nullptr);
    m_engine->files_total = 0;
    m_engine->run({&t});
    m_options.progress = std::move(progress);
    if (t.upload_fd >= 0)
        ::close(t.upload_fd);
    if (t.error)
        return *t.error;
    return HttpResponse{t.status, std::move(t.body), std::move(t.headers),
                        std::move(t.effective_url)};
}

std::vector<util::Result<HttpResponse>> HttpClient::get_many(
    const std::vector<FetchRequest>& requests) {
    std::vector<std::unique_ptr<Transfer>> owned;
    std::vector<Transfer*> transfers;
    for (const auto& request : requests) {
        auto t = std::make_unique<Transfer>();
        t->url = request.url;
        t->shown = redact_url(request.url);
        t->retries = m_options.retries;
        t->request_headers = request.headers;
        t->max_body = request.max_body;
        transfers.push_back(t.get());
        owned.push_back(std::move(t));
    }
    if (!m_options.offline && !transfers.empty()) {
        auto progress = std::exchange(m_options.progress, nullptr);
        m_engine->files_total = 0;
        m_engine->run(transfers);
        m_options.progress = std::move(progress);
    }
    std::vector<util::Result<HttpResponse>> out;
    out.reserve(owned.size());
    for (auto& t : owned) {
        if (m_options.offline) {
            out.emplace_back(util::make_network_error(
                t->shown, "not in the cache and --offline forbids the network"));
        } else if (t->error) {
            out.emplace_back(*t->error);
        } else {
            out.emplace_back(HttpResponse{t->status, std::move(t->body), std::move(t->headers),
                                          std::move(t->effective_url)});
        }
    }
    return out;
}

std::vector<util::Result<StoredBlob>> HttpClient::download(
    const std::vector<DownloadRequest>& requests, ContentStore& store,
    const std::vector<std::pair<std::string, std::string>>& headers) {
    std::vector<std::optional<util::Result<StoredBlob>>> early(requests.size());
    std::vector<std::unique_ptr<Transfer>> owned(requests.size());
    std::vector<size_t> same_as(requests.size(), SIZE_MAX);  // a duplicate's first request
    std::map<std::string, size_t> first_by_digest;
    std::vector<Transfer*> transfers;
    m_engine->base_files = 0;
    m_engine->base_bytes = 0;
    for (size_t i = 0; i < requests.size(); ++i) {
        const auto& request = requests[i];
        std::string shown = redact_url(request.url);
        std::string sha256 = lowercase(request.sha256);
        if (!sha256.empty()) {
            if (!util::is_sha256_hex(sha256)) {
                early[i] = util::make_error(shown, "expected sha256 is not 64 hexadecimal digits");
                ++m_engine->base_files;
                continue;
            }
            auto [it, inserted] = first_by_digest.emplace(sha256, i);
            if (!inserted) {
                same_as[i] = it->second;
                ++m_engine->base_files;
                continue;
            }
            auto found = store.find(sha256);
            if (!found || found->has_value()) {
                ++m_engine->base_files;
                if (!found) {
                    early[i] = util::make_error(shown, found.error().text());
                    continue;
                }
                struct stat info {};
                uint64_t size = ::stat((*found)->c_str(), &info) == 0
                                    ? static_cast<uint64_t>(info.st_size)
                                    : request.size.value_or(0);
                early[i] = StoredBlob{sha256, size, **found};
                m_engine->base_bytes += size;
                continue;
            }
        }
        if (m_options.offline) {
            early[i] = util::make_network_error(
                shown, "not in the cache and --offline forbids the network");
            ++m_engine->base_files;
            continue;
        }
        auto t = std::make_unique<Transfer>();
        t->url = request.url;
        t->shown = std::move(shown);
        t->retries = m_options.retries;
        t->to_file = true;
        t->request_headers = headers;
        t->expected_size = request.size;
        t->expected_sha256 = sha256;
        t->store = &store;
        transfers.push_back(t.get());
        owned[i] = std::move(t);
    }
    m_engine->files_total = requests.size();
    if (!transfers.empty() || m_options.progress)
        m_engine->run(transfers);

    std::vector<util::Result<StoredBlob>> results;
    results.reserve(requests.size());
    auto outcome = [&](size_t i) -> util::Result<StoredBlob> {
        if (early[i])
            return *early[i];
        const Transfer& t = *owned[i];
        if (t.error)
            return *t.error;
        return t.blob;
    };
    for (size_t i = 0; i < requests.size(); ++i)
        results.push_back(outcome(same_as[i] == SIZE_MAX ? i : same_as[i]));
    return results;
}

}  // namespace rootlock::index
