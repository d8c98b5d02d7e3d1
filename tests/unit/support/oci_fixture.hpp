// OCI images made while a test runs: tar layers in memory (libarchive's writer, plain, gzip or
// zstd), blobs under blobs/sha256/, a manifest and index.json, and the archive of a layout.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace rootlock::testing {

struct TarMember {
    TarMember(std::string name_, char type_ = 'f', std::string data_ = {}, uint32_t mode_ = 0644)
        : name(std::move(name_)), type(type_), data(std::move(data_)), mode(mode_) {}
    std::string name;
    char type = 'f';   // f file, d directory, l symlink, h hard link
    std::string data;  // content, or the link target
    uint32_t mode = 0644;
};

// A pax tar stream of `members` through `filter`: "none", "gzip" or "zstd".
std::string tar_bytes(const std::vector<TarMember>& members, const std::string& filter = "none");

// "sha256:" + hex of `bytes`.
std::string digest_of(const std::string& bytes);

struct FixtureLayer {
    std::string media_type;
    std::string bytes;
};

// A descriptor's JSON text: {"mediaType":...,"digest":...,"size":...}.
std::string descriptor_json(const std::string& media_type, const std::string& bytes);

// An image config with VIRTUAL_ENV=/opt/venv and a label, for linux/amd64.
std::string fixture_config();

// The manifest of `config` and `layers`.
std::string fixture_manifest(const std::string& config, const std::vector<FixtureLayer>& layers);

// Writes `bytes` as blobs/sha256/HEX under the layout `dir`; returns its digest.
std::string write_blob(const std::string& dir, const std::string& bytes);

// A layout at `dir` (created): config, layers and manifest as blobs, oci-layout, and index.json
// listing the manifest with ref.name `ref` ("" for none). Returns the manifest's bytes.
std::string write_layout(const std::string& dir, const std::vector<FixtureLayer>& layers,
                         const std::string& ref = "app");

// An OCI archive of the layout at `dir`, as skopeo writes one (ustar, blobs/ first).
void write_archive(const std::string& dir, const std::string& archive_path);

}  // namespace rootlock::testing
