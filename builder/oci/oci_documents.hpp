// The JSON documents of an OCI image (image-spec 1.1): the config, the manifest, the layout's
// index.json and oci-layout. Each is written in one fixed key order with no spaces, so that the
// same image gives the same bytes, and so the same digests, on every machine: the manifest
// digest is the image's identity in a registry, and a lock must name one.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace rootlock::oci {

inline constexpr const char* k_media_manifest = "application/vnd.oci.image.manifest.v1+json";
inline constexpr const char* k_media_index = "application/vnd.oci.image.index.v1+json";
inline constexpr const char* k_media_config = "application/vnd.oci.image.config.v1+json";
inline constexpr const char* k_media_layer_gzip = "application/vnd.oci.image.layer.v1.tar+gzip";
inline constexpr const char* k_media_layer_zstd = "application/vnd.oci.image.layer.v1.tar+zstd";
inline constexpr const char* k_media_layer_tar = "application/vnd.oci.image.layer.v1.tar";

// A content-addressed blob as a descriptor names it: "sha256:<64 hex>", its size in bytes.
struct Descriptor {
    std::string media_type;
    std::string digest;
    uint64_t size = 0;
    std::map<std::string, std::string> annotations;  // written sorted by key
};

struct Layer {
    Descriptor blob;      // the compressed bytes as stored and pushed
    std::string diff_id;  // "sha256:..." of the uncompressed tar (the config's rootfs.diff_ids)
    std::string comment;  // history entry: "rootlock: the Debian base", "rootlock: torch 2.8.0"
};

// What the config says about running the image (image-spec config.md).
struct RunConfig {
    std::string architecture = "amd64";  // GOARCH names: amd64, arm64
    std::string os = "linux";
    std::string variant;                  // "v8" for arm64, "" for none
    std::vector<std::string> env;         // "NAME=value", PATH first
    std::string working_dir;              // "" for none
    std::vector<std::string> entrypoint;  // empty: not written
    std::vector<std::string> cmd;         // empty: not written
    std::map<std::string, std::string> labels;
    // RFC 3339 UTC, from the lock (its SOURCE_DATE_EPOCH), never the clock: "" leaves it out.
    std::string created;
};

// The config blob. Keys in the order the spec lists them; history has one entry per layer.
std::string config_json(const RunConfig& run, const std::vector<Layer>& layers);

// The manifest: schemaVersion 2, its mediaType, the config, the layers in order, annotations.
std::string manifest_json(const Descriptor& config, const std::vector<Layer>& layers,
                          const std::map<std::string, std::string>& annotations);

// index.json of a layout: the one manifest, with "org.opencontainers.image.ref.name" = ref_name
// when ref_name is not empty (skopeo's oci:DIR:REF and Proxmox's import read it).
std::string index_json(const Descriptor& manifest, const std::string& ref_name);

// The layout's marker file.
std::string oci_layout_json();

// "sha256:" + the hex digest of `bytes`, and a descriptor of them.
std::string digest_of(const std::string& bytes);
Descriptor describe(const std::string& media_type, const std::string& bytes);

// "1970-01-01T00:00:00Z" for a SOURCE_DATE_EPOCH value (seconds since the epoch, UTC).
std::string rfc3339_utc(int64_t seconds);

}  // namespace rootlock::oci
