// The distribution spec's endpoints, each one request (index::HttpClient::send), and the two
// things around them: the auth challenge, met once and then sent with every request, and the
// upload session's recovery (resume from the registry's Range, else start over).
#include "registry/registry_client.hpp"

#include <fmt/format.h>

#include <chrono>
#include <thread>

#include <nlohmann/json.hpp>

#include "index/http_text.hpp"
#include "index/url.hpp"
#include "registry/auth_challenge.hpp"
#include "util/hex.hpp"
#include "util/quote.hpp"

namespace rootlock::registry {

namespace {

constexpr long k_max_backoff_ms = 30000;

std::string header(const index::HttpResponse& response, const std::string& name) {
    auto it = response.headers.find(name);
    return it == response.headers.end() ? std::string() : it->second;
}

// The registry's own words for a refusal ({"errors": [{"code", "message"}]}), on one line.
std::string registry_errors(const std::string& body) {
    auto document = nlohmann::json::parse(body, nullptr, false);
    if (document.is_discarded() || !document.is_object())
        return "";
    auto errors = document.find("errors");
    if (errors == document.end() || !errors->is_array())
        return "";
    std::string out;
    for (const auto& error : *errors) {
        if (!error.is_object())
            continue;
        std::string code = error.value("code", std::string());
        std::string message = error.contains("message") && error["message"].is_string()
                                  ? error["message"].get<std::string>()
                                  : std::string();
        std::string item = code.empty() ? message : message.empty() ? code : code + " " + message;
        if (!item.empty())
            out += (out.empty() ? "" : "; ") + util::printable(item.substr(0, 200));
    }
    return out;
}

// "0-1234" (what distribution sends) or "bytes=0-1234": the next offset, 1235.
std::optional<uint64_t> next_offset(const std::string& range) {
    std::string_view text = range;
    if (text.substr(0, 6) == "bytes=")
        text.remove_prefix(6);
    size_t dash = text.find('-');
    if (dash == std::string_view::npos)
        return std::nullopt;
    auto end = index::parse_u64(text.substr(dash + 1));
    if (!end)
        return std::nullopt;
    return *end + 1;
}

// A failure another attempt may cure: the network's (a reset, a timeout, a 5xx after the
// client's own retries), not a registry's refusal of who we are.
bool is_transient(const util::Error& error) {
    return error.kind == util::ErrorKind::network &&
           error.message.find("credentials") == std::string::npos &&
           error.message.find("asks for") == std::string::npos;
}

std::string with_query(const std::string& url, const std::string& query) {
    return url + (url.find('?') == std::string::npos ? "?" : "&") + query;
}

std::string percent_encode(std::string_view text) {
    std::string out;
    for (char c : text) {
        auto byte = static_cast<unsigned char>(c);
        if (std::isalnum(byte) || c == '-' || c == '_' || c == '.' || c == '~')
            out.push_back(c);
        else
            out += fmt::format("%{:02X}", byte);
    }
    return out;
}

}  // namespace

RegistryClient::RegistryClient(index::HttpClient& http, ImageReference reference,
                               RegistryOptions options)
    : m_http(http), m_reference(std::move(reference)), m_options(std::move(options)) {}

std::string RegistryClient::base() const {
    return std::string(m_options.insecure ? "http://" : "https://") + m_reference.host + "/v2/" +
           m_reference.name;
}

std::string RegistryClient::resolve(const std::string& location) const {
    auto resolved = index::resolve_url(base() + "/", location);
    return resolved ? *resolved : location;
}

util::Error RegistryClient::refused(const index::HttpResponse& response,
                                    const std::string& what) const {
    std::string words = registry_errors(response.body);
    std::string text = fmt::format("{}: HTTP {}", what, response.status);
    if (!words.empty())
        text += " (" + words + ")";
    if (response.status >= 500 || response.status == 429 || response.status == 401 ||
        response.status == 403)
        return util::make_network_error(m_reference.host, text);
    return util::make_error(m_reference.host, text);
}

util::Status RegistryClient::authenticate(const std::string& challenge_header,
                                          const std::string& extra_scope) {
    const std::string& host = m_reference.host;
    if (challenge_header.empty())
        return util::make_network_error(host, "HTTP 401 without a WWW-Authenticate challenge");
    auto challenge = parse_auth_challenge(challenge_header);
    if (!challenge)
        return util::make_network_error(host, challenge.error().text());
    const auto& credentials = m_options.credentials;
    std::string basic;
    if (credentials && !credentials->username.empty())
        basic = "Basic " + util::to_base64(credentials->username + ":" + credentials->password);
    if (challenge->scheme == "basic") {
        if (basic.empty())
            return util::make_network_error(
                host,
                "the registry asks for a user name and password, and none were found "
                "(set ROOTLOCK_REGISTRY_USERNAME and ROOTLOCK_REGISTRY_PASSWORD, pass "
                "--authfile, or run podman login " +
                    host + ")");
        m_authorization = basic;
        return util::ok_status();
    }
    if (challenge->scheme != "bearer")
        return util::make_network_error(host, "the registry asks for " +
                                                  util::quote(challenge->scheme) +
                                                  " authentication, which rootlock does not speak");
    std::string realm = challenge->param("realm");
    bool https = realm.rfind("https://", 0) == 0;
    if (!https && !(m_options.insecure && realm.rfind("http://", 0) == 0))
        return util::make_network_error(
            host, "the token service " + util::quote_prefix(realm, 120) +
                      (m_options.insecure ? " is not an http(s) URL"
                                          : " is not HTTPS (allow plain HTTP with --insecure)"));
    std::string scopes =
        "repository:" + m_reference.name + (m_options.pull_only ? ":pull" : ":pull,push");
    if (!extra_scope.empty())
        scopes += " " + extra_scope;
    std::string url = realm;
    std::string query;
    if (auto service = challenge->param("service"); !service.empty())
        query += "service=" + percent_encode(service);
    for (size_t start = 0; start < scopes.size();) {
        size_t end = scopes.find(' ', start);
        std::string scope = scopes.substr(start, end == std::string::npos ? end : end - start);
        query += (query.empty() ? "" : "&") + std::string("scope=") + percent_encode(scope);
        if (end == std::string::npos)
            break;
        start = end + 1;
    }
    index::SendRequest token_request;
    token_request.follow_redirects = true;
    if (credentials && !credentials->identity_token.empty()) {
        // `docker login` against a token service keeps a refresh token, not a password: the
        // OAuth2 form of the auth spec trades it for an access token.
        token_request.method = "POST";
        token_request.url = url;
        token_request.headers.emplace_back("Content-Type", "application/x-www-form-urlencoded");
        token_request.body = query + "&grant_type=refresh_token&client_id=rootlock&refresh_token=" +
                             percent_encode(credentials->identity_token);
    } else {
        token_request.method = "GET";
        token_request.url = with_query(url, query);
        if (!basic.empty())
            token_request.headers.emplace_back("Authorization", basic);
    }
    ++m_requests;
    ROOTLOCK_TRY(response, m_http.send(token_request));
    if (response.status == 401 || response.status == 403)
        return util::make_network_error(
            host, fmt::format("the token service refused the credentials from {} (HTTP {})",
                              credentials ? credentials->source : std::string("nowhere"),
                              response.status));
    if (response.status != 200)
        return refused(response, "the token service");
    auto document = nlohmann::json::parse(response.body, nullptr, false);
    std::string token;
    if (document.is_object()) {
        for (const char* field : {"token", "access_token"})
            if (auto it = document.find(field);
                it != document.end() && it->is_string() && !it->get<std::string>().empty()) {
                token = it->get<std::string>();
                break;
            }
    }
    if (token.empty() || !util::is_one_line(token))
        return util::make_network_error(host, "the token service's answer holds no token");
    m_authorization = "Bearer " + token;
    m_scopes = scopes;
    return util::ok_status();
}

util::Result<index::HttpResponse> RegistryClient::request(index::SendRequest request,
                                                          const std::string& extra_scope) {
    const auto plain_headers = request.headers;
    for (int round = 0; round < 2; ++round) {
        request.headers = plain_headers;
        if (!m_authorization.empty())
            request.headers.emplace_back("Authorization", m_authorization);
        ++m_requests;
        ROOTLOCK_TRY(response, m_http.send(request));
        // A bearer token is scoped: a new scope (a mount's source) needs a new token.
        bool scope_missing = !extra_scope.empty() &&
                             m_scopes.find(extra_scope) == std::string::npos &&
                             m_authorization.rfind("Bearer ", 0) == 0;
        if (response.status != 401 && !(response.status == 403 && scope_missing))
            return std::move(response);
        if (round == 1) {
            const auto& credentials = m_options.credentials;
            return util::make_network_error(
                m_reference.host,
                credentials ? fmt::format("the registry refused the credentials from {} (HTTP {})",
                                          credentials->source, response.status)
                            : fmt::format("the registry refused access without credentials "
                                          "(HTTP {}); log in with podman login {}",
                                          response.status, m_reference.host));
        }
        ROOTLOCK_TRY(authenticated,
                     authenticate(header(response, "www-authenticate"), extra_scope));
        (void)authenticated;
    }
    return util::make_network_error(m_reference.host, "authentication did not settle");
}

util::Status RegistryClient::ping() {
    index::SendRequest ping;
    ping.url = std::string(m_options.insecure ? "http://" : "https://") + m_reference.host + "/v2/";
    ping.follow_redirects = true;
    ROOTLOCK_TRY(response, request(ping));
    if (response.status != 200)
        return refused(response, "GET /v2/");
    return util::ok_status();
}

util::Result<bool> RegistryClient::has_blob(const oci::Descriptor& blob) {
    index::SendRequest head;
    head.method = "HEAD";
    head.url = base() + "/blobs/" + blob.digest;
    head.follow_redirects = true;
    ROOTLOCK_TRY(response, request(head));
    if (response.status == 200)
        return true;
    if (response.status == 404)
        return false;
    return refused(response, "HEAD of " + blob.digest);
}

util::Result<bool> RegistryClient::mount_blob(const oci::Descriptor& blob,
                                              const std::string& from) {
    index::SendRequest post;
    post.method = "POST";
    post.url = base() + "/blobs/uploads/?mount=" + blob.digest + "&from=" + percent_encode(from);
    ROOTLOCK_TRY(response, request(post, "repository:" + from + ":pull"));
    if (response.status == 201)
        return true;
    if (response.status == 202) {
        m_pending_upload = resolve(header(response, "location"));
        return false;
    }
    return refused(response, "mount of " + blob.digest + " from " + from);
}

util::Result<std::string> RegistryClient::start_upload(const std::string& mount_query) {
    if (!m_pending_upload.empty())
        return std::exchange(m_pending_upload, std::string());
    index::SendRequest post;
    post.method = "POST";
    post.url = base() + "/blobs/uploads/" + mount_query;
    ROOTLOCK_TRY(response, request(post));
    std::string location = header(response, "location");
    if (response.status != 202 || location.empty())
        return refused(response, "starting an upload");
    return resolve(location);
}

util::Status RegistryClient::upload_session(const oci::Descriptor& blob,
                                            const oci::BlobLocation& location,
                                            const std::function<void(uint64_t)>& on_sent,
                                            bool& worth_retrying) {
    // A failure past this point is the session's: a dropped connection, a 5xx or 429, a registry
    // that lost the session (404, 416). Refusals of the request itself are not retried.
    auto failed = [&](const util::Result<index::HttpResponse>& response) -> util::Error {
        if (!response) {
            worth_retrying = is_transient(response.error());
            return response.error();
        }
        long status = response->status;
        worth_retrying = status >= 500 || status == 429 || status == 404 || status == 416;
        return refused(*response, "upload of " + blob.digest);
    };
    worth_retrying = false;
    auto started = start_upload("");
    if (!started) {
        worth_retrying = is_transient(started.error());
        return started.error();
    }
    std::string url = *started;
    auto check_digest = [&](const index::HttpResponse& response) -> util::Status {
        std::string digest = header(response, "docker-content-digest");
        if (!digest.empty() && digest != blob.digest)
            return util::make_error(m_reference.host, "the registry stored " + blob.digest +
                                                          " as " + util::quote(digest));
        return util::ok_status();
    };
    if (blob.size <= m_options.chunk_size) {
        index::SendRequest put;
        put.method = "PUT";
        put.url = with_query(url, "digest=" + blob.digest);
        put.headers.emplace_back("Content-Type", "application/octet-stream");
        put.body_file = location.file;
        put.body_offset = location.offset;
        put.body_length = blob.size;
        put.retry = false;
        put.on_sent = on_sent;
        auto response = request(put);
        if (!response || response->status != 201)
            return failed(response);
        return check_digest(*response);
    }
    uint64_t offset = 0;
    int recoveries = 0;
    while (offset < blob.size) {
        uint64_t length = std::min(m_options.chunk_size, blob.size - offset);
        index::SendRequest patch;
        patch.method = "PATCH";
        patch.url = url;
        patch.headers.emplace_back("Content-Type", "application/octet-stream");
        patch.headers.emplace_back("Content-Range",
                                   fmt::format("{}-{}", offset, offset + length - 1));
        patch.body_file = location.file;
        patch.body_offset = location.offset + offset;
        patch.body_length = length;
        patch.retry = false;
        const uint64_t chunk_start = offset;
        if (on_sent)
            patch.on_sent = [&on_sent, chunk_start](uint64_t sent) { on_sent(chunk_start + sent); };
        auto response = request(patch);
        if (response && response->status == 202) {
            if (auto moved = header(*response, "location"); !moved.empty())
                url = resolve(moved);
            auto next = next_offset(header(*response, "range"));
            offset = next.value_or(offset + length);
            continue;
        }
        // The chunk failed: ask the session where it stands, and go on from there.
        util::Error error = failed(response);
        if (!worth_retrying || ++recoveries > m_options.upload_attempts)
            return error;
        index::SendRequest status_request;
        status_request.url = url;
        auto status = request(status_request);
        if (!status || status->status != 204)
            return error;  // worth_retrying stays set: a new session may do better
        if (auto moved = header(*status, "location"); !moved.empty())
            url = resolve(moved);
        // distribution writes "0-0" for an empty session and for one byte alike: taken as
        // empty; if it held the byte, the next chunk's 416 starts the session over.
        std::string range = header(*status, "range");
        offset = range.empty() || range == "0-0" || range == "bytes=0-0"
                     ? 0
                     : next_offset(range).value_or(0);
        if (offset > blob.size)
            return util::make_error(m_reference.host, "the upload session holds more bytes than " +
                                                          blob.digest + " has");
    }
    index::SendRequest close;
    close.method = "PUT";
    close.url = with_query(url, "digest=" + blob.digest);
    close.retry = false;
    auto response = request(close);
    if (!response || response->status != 201)
        return failed(response);
    return check_digest(*response);
}

util::Status RegistryClient::upload_blob(const oci::Descriptor& blob,
                                         const oci::BlobLocation& location,
                                         const std::function<void(uint64_t)>& on_sent) {
    long delay = std::clamp(m_options.backoff_initial_ms, 0L, k_max_backoff_ms);
    for (int attempt = 1;; ++attempt) {
        bool worth_retrying = false;
        auto done = upload_session(blob, location, on_sent, worth_retrying);
        if (done || !worth_retrying || attempt >= m_options.upload_attempts)
            return done;
        m_pending_upload.clear();
        std::this_thread::sleep_for(std::chrono::milliseconds(delay));
        delay = std::min(delay * 2, k_max_backoff_ms);
    }
}

util::Result<bool> RegistryClient::put_manifest(const std::string& tag_or_digest,
                                                const std::string& media_type,
                                                const std::string& bytes) {
    index::SendRequest put;
    put.method = "PUT";
    put.url = base() + "/manifests/" + tag_or_digest;
    put.headers.emplace_back("Content-Type", media_type);
    put.body = bytes;
    ROOTLOCK_TRY(response, request(put));
    if (response.status != 201)
        return refused(response, "manifest " + tag_or_digest);
    std::string expected = oci::digest_of(bytes);
    std::string digest = header(response, "docker-content-digest");
    if (!digest.empty() && digest != expected)
        return util::make_error(m_reference.host, "the registry stored the manifest " + expected +
                                                      " as " + util::quote(digest));
    return !header(response, "oci-subject").empty();
}

index::DownloadRequest RegistryClient::blob_download(const oci::Descriptor& blob) const {
    index::DownloadRequest download;
    download.url = base() + "/blobs/" + blob.digest;
    download.sha256 = blob.digest.substr(blob.digest.find(':') + 1);
    download.size = blob.size;
    return download;
}

std::vector<std::pair<std::string, std::string>> RegistryClient::download_headers() const {
    if (m_authorization.empty())
        return {};
    return {{"Authorization", m_authorization}};
}

util::Result<std::optional<RegistryClient::Manifest>> RegistryClient::get_manifest(
    const std::string& tag_or_digest, const std::string& accept) {
    index::SendRequest get;
    get.url = base() + "/manifests/" + tag_or_digest;
    get.headers.emplace_back("Accept", accept);
    get.follow_redirects = true;
    get.max_body = 16ull << 20;
    ROOTLOCK_TRY(response, request(get));
    if (response.status == 404)
        return std::optional<Manifest>();
    if (response.status != 200)
        return refused(response, "manifest " + tag_or_digest);
    Manifest out;
    out.media_type = header(response, "content-type");
    out.digest = header(response, "docker-content-digest");
    out.body = std::move(response.body);
    return std::optional<Manifest>(std::move(out));
}

}  // namespace rootlock::registry
