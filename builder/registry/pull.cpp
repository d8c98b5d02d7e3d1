// The pull side of the distribution spec, for reading only: what a manifest needs lands in the
// content store under its digest (the store verifies every byte), and nothing is unpacked.
#include "registry/pull.hpp"

#include "oci/image_source.hpp"
#include "util/quote.hpp"

namespace rootlock::registry {

namespace {

constexpr const char* k_docker_manifest = "application/vnd.docker.distribution.manifest.v2+json";
constexpr const char* k_docker_list = "application/vnd.docker.distribution.manifest.list.v2+json";

std::string accept_all() {
    return std::string(oci::k_media_manifest) + ", " + oci::k_media_index + ", " +
           k_docker_manifest + ", " + k_docker_list;
}

bool is_index(const std::string& media_type, const std::string& body) {
    if (media_type.find(oci::k_media_index) == 0 || media_type.find(k_docker_list) == 0)
        return true;
    // A registry may answer without a Content-Type: the document says what it is.
    return media_type.empty() && body.find("\"manifests\"") != std::string::npos;
}

}  // namespace

util::Result<oci::OciSource> pull_image(RegistryClient& client, index::HttpClient& http,
                                        index::ContentStore& store, const oci::Platform& platform) {
    const ImageReference& reference = client.reference();
    const std::string name = reference.text();
    ROOTLOCK_TRY(reachable, client.ping());
    (void)reachable;
    std::string wanted = reference.digest.empty() ? reference.tag : reference.digest;
    std::string expected = reference.digest;
    for (int depth = 0;; ++depth) {
        ROOTLOCK_TRY(fetched, client.get_manifest(wanted, accept_all()));
        if (!fetched)
            return util::make_error(name, "no such image (" + wanted + ")");
        std::string digest = oci::digest_of(fetched->body);
        if (!expected.empty() && digest != expected)
            return util::make_error(name, "the registry's manifest for " + wanted + " is " +
                                              digest + ", not " + expected);
        if (expected.empty() && !fetched->digest.empty() && fetched->digest != digest)
            return util::make_error(name, "the manifest's bytes are " + digest +
                                              ", the registry says " +
                                              util::quote_prefix(fetched->digest, 80));
        if (is_index(fetched->media_type, fetched->body)) {
            if (depth > 0)
                return util::make_error(name, "an index inside an index");
            ROOTLOCK_TRY(entries, oci::parse_platform_index(fetched->body, name));
            ROOTLOCK_TRY(chosen, oci::pick_platform(entries, platform, name));
            wanted = chosen.digest;
            expected = chosen.digest;
            continue;
        }
        ROOTLOCK_TRY(blobs, oci::parse_manifest(fetched->body, name));
        std::vector<oci::Descriptor> needed{blobs.config};
        needed.insert(needed.end(), blobs.layers.begin(), blobs.layers.end());
        std::vector<index::DownloadRequest> requests;
        for (const auto& blob : needed)
            requests.push_back(client.blob_download(blob));
        auto stored = http.download(requests, store, client.download_headers());
        std::map<std::string, std::string> paths;
        for (size_t i = 0; i < stored.size(); ++i) {
            if (!stored[i])
                return stored[i].error();
            paths[needed[i].digest] = stored[i]->path;
        }
        oci::OciSource source;
        source.name = name;
        source.manifest = std::move(fetched->body);
        source.manifest_digest = digest;
        source.locate = [paths](const oci::Descriptor& blob) -> util::Result<fs::FileRange> {
            auto it = paths.find(blob.digest);
            if (it == paths.end())
                return util::make_error(blob.digest, "not pulled");
            return fs::FileRange{it->second, 0, blob.size};
        };
        return source;
    }
}

}  // namespace rootlock::registry
