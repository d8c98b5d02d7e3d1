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
inline constexpr const char* k_media_empty = "application/vnd.oci.empty.v1+json";
inline constexpr const char* k_media_cyclonedx = "application/vnd.cyclonedx+json";

// A content-addressed blob as a descriptor names it: "sha256:<64 hex>", its size in bytes.
struct Descriptor {
    std::string media_type;
    std::string digest;
    uint64_t size = 0;
    std::map<std::string, std::string> annotations;  // written sorted by key
    std::string data;           // the blob itself in base64, embedded; "" for none
    std::string artifact_type;  // an artifact manifest's, where an index lists it; "" for none
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

// An artifact manifest (image-spec 1.1): `artifact_type`, the empty config, the blobs as its
// layers, `subject` the manifest it is about (what a registry's referrers API answers with).
std::string artifact_manifest_json(const std::string& artifact_type,
                                   const std::vector<Descriptor>& blobs, const Descriptor& subject,
                                   const std::map<std::string, std::string>& annotations);

// The empty descriptor: the blob "{}" (its digest, size 2 and base64 data "e30="), the config of
// an artifact manifest.
Descriptor empty_descriptor();
std::string empty_json();  // "{}"

// The annotation of index.json's image entry that names the SBOM's artifact manifest (its
// digest), rootlock's own: the artifact's blobs are in the layout, but index.json lists only the
// image, since skopeo 1.9, podman 4.3 (`podman load`) and others refuse an index.json of two
// manifests unless told the image's name. `push` reads it and attaches the artifact.
inline constexpr const char* k_annotation_sbom = "org.rootlock.sbom.manifest";

// index.json of a layout: the image manifest, with "org.opencontainers.image.ref.name" =
// ref_name when ref_name is not empty (skopeo's oci:DIR:REF and Proxmox's import read it), and
// k_annotation_sbom = sbom_manifest when that is not empty.
std::string index_json(const Descriptor& manifest, const std::string& ref_name,
                       const std::string& sbom_manifest = "");

// The layout's marker file.
std::string oci_layout_json();

// "sha256:" + the hex digest of `bytes`, and a descriptor of them.
std::string digest_of(const std::string& bytes);
Descriptor describe(const std::string& media_type, const std::string& bytes);

// "1970-01-01T00:00:00Z" for a SOURCE_DATE_EPOCH value (seconds since the epoch, UTC).
std::string rfc3339_utc(int64_t seconds);

}  // namespace rootlock::oci
