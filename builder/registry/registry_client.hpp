// One repository of an OCI registry, spoken to as the distribution spec says: blobs checked,
// mounted and uploaded, manifests put and fetched. Authentication follows the registry's own
// challenge (Basic, or a Bearer token from its realm), so one client works with a plain
// htpasswd registry and with a token service alike.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "index/http_client.hpp"
#include "oci/image_source.hpp"
#include "registry/credentials.hpp"
#include "registry/image_reference.hpp"
#include "util/result.hpp"

namespace rootlock::registry {

struct RegistryOptions {
    bool insecure = false;  // plain HTTP; without it every request is HTTPS
    // Blobs up to this size go in one PUT; bigger ones in PATCH chunks of this size, so a
    // dropped connection costs one chunk (the upload resumes where the registry says it is).
    uint64_t chunk_size = 64ull << 20;
    int upload_attempts = 5;  // per blob: a failed upload session is started over this often
    long backoff_initial_ms = 250;
    std::optional<Credentials> credentials;
    bool pull_only = false;  // a bearer token for pull alone (check and diff of a reference)
};

// How a blob reached the registry.
enum class BlobOutcome { present, mounted, uploaded };

class RegistryClient {
  public:
    RegistryClient(index::HttpClient& http, ImageReference reference, RegistryOptions options);

    const ImageReference& reference() const { return m_reference; }

    // GET /v2/: reachable, and what it asks for. Errors: the host unreachable (network),
    // credentials refused or missing (network: exit 3, one line naming where they came from).
    util::Status ping();

    // HEAD of the blob in this repository.
    util::Result<bool> has_blob(const oci::Descriptor& blob);
    // POST ...?mount=DIGEST&from=REPO: true when the registry linked it; false when it did not
    // (it then opened an upload, which upload_blob() uses).
    util::Result<bool> mount_blob(const oci::Descriptor& blob, const std::string& from);
    // The blob's bytes from `location`, monolithic or chunked; a session that fails is resumed
    // from the registry's Range when it can be, else started over, up to upload_attempts.
    // `on_sent` sees the blob's bytes sent so far (it may go back after a restart).
    util::Status upload_blob(const oci::Descriptor& blob, const oci::BlobLocation& location,
                             const std::function<void(uint64_t)>& on_sent);

    // PUT of a manifest under `tag_or_digest`. The registry's Docker-Content-Digest, when it
    // sends one, must be the manifest's digest. Returns whether it answered OCI-Subject (it
    // keeps referrers itself).
    util::Result<bool> put_manifest(const std::string& tag_or_digest, const std::string& media_type,
                                    const std::string& bytes);
    // GET of a manifest (or an index): its body and media type; nullopt on 404.
    struct Manifest {
        std::string media_type;
        std::string body;
        std::string digest;  // the Docker-Content-Digest, or ""
    };
    util::Result<std::optional<Manifest>> get_manifest(const std::string& tag_or_digest,
                                                       const std::string& accept);

    // The blob's URL for index::HttpClient::download, and the headers a GET of it needs (the
    // Authorization the challenge set up).
    index::DownloadRequest blob_download(const oci::Descriptor& blob) const;
    std::vector<std::pair<std::string, std::string>> download_headers() const;

    // Requests made so far, attempts included (for the summary and tests).
    uint64_t requests() const { return m_requests; }

  private:
    std::string base() const;  // "https://host/v2/NAME"
    util::Result<index::HttpResponse> request(index::SendRequest request,
                                              const std::string& extra_scope = "");
    util::Status authenticate(const std::string& challenge_header, const std::string& extra_scope);
    util::Error refused(const index::HttpResponse& response, const std::string& what) const;
    util::Result<std::string> start_upload(const std::string& mount_query);
    // One upload session; `worth_retrying` tells whether another session may do better.
    util::Status upload_session(const oci::Descriptor& blob, const oci::BlobLocation& location,
                                const std::function<void(uint64_t)>& on_sent, bool& worth_retrying);
    std::string resolve(const std::string& location) const;

    index::HttpClient& m_http;
    ImageReference m_reference;
    RegistryOptions m_options;
    std::string m_authorization;   // the header's value once a challenge was met
    std::string m_scopes;          // the bearer token's scopes
    std::string m_pending_upload;  // an upload a refused mount opened
    uint64_t m_requests = 0;
};

}  // namespace rootlock::registry
