// `rootlock push`: an OCI image on disk (layout or archive) into a registry, sending only what
// the registry lacks. Blobs first (the config and layers; nothing already there is uploaded, a
// blob rootlock pushed to another repository of the same registry is mounted from there), then
// the manifest under its tag, then the artifacts that refer to it (the SBOM, which index.json's
// image entry names, or artifacts listed in index.json) by digest, listed for the referrers API
// or, where the registry has none, under the spec's fallback tag.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "oci/image_source.hpp"
#include "registry/registry_client.hpp"
#include "util/result.hpp"

namespace rootlock::registry {

struct PushProgress {
    size_t blobs_done = 0;
    size_t blobs_total = 0;
    uint64_t bytes_sent = 0;   // of the blobs being uploaded
    uint64_t bytes_total = 0;  // all blobs' sizes that need an upload, as known so far
    std::string current;       // the digest being sent
};

struct PushOptions {
    std::string image;                    // which image of the layout ("" for the only one)
    std::vector<std::string> mount_from;  // repositories of the same registry to mount from
    // Where rootlock remembers which repositories it pushed each blob to ("" for nowhere), so
    // a push to a new repository mounts instead of uploading.
    std::string record_dir;
    std::function<void(const PushProgress&)> progress;
};

struct PushedBlob {
    oci::Descriptor descriptor;
    BlobOutcome outcome = BlobOutcome::present;
    std::string mounted_from;
};

struct PushReport {
    std::string reference;        // "host/name:tag"
    std::string manifest_digest;  // the image's
    std::vector<PushedBlob> blobs;
    std::vector<oci::Descriptor> artifacts;  // manifests pushed that refer to the image
    std::string referrers_tag;               // the fallback tag written, or ""
    uint64_t bytes_uploaded = 0;
    uint64_t requests = 0;
};

util::Result<PushReport> push_image(const oci::ImageSource& source, RegistryClient& client,
                                    const PushOptions& options);

}  // namespace rootlock::registry
