// An OCI image as one read-only root: its manifest's layers streamed in order into a TarTree,
// whiteouts applied, nothing unpacked. The blobs may lie anywhere on this host (a layout, an
// archive, a content store of pulled blobs): OciSource says where, open_oci_tree reads them.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "fs/tar_tree.hpp"
#include "oci/image_config.hpp"
#include "oci/image_source.hpp"
#include "util/result.hpp"

namespace rootlock::oci {

struct OciSource {
    std::string name;             // the image in messages: "app.oci.tar", "host/app:1.0"
    std::string manifest;         // the image manifest's bytes, already checked against its digest
    std::string manifest_digest;  // "sha256:..."
    // Where a blob lies on this host: a layout's blobs/sha256/HEX, a member of an archive, a
    // content store's file. Its bytes need not be trusted: open_oci_tree hashes them.
    std::function<util::Result<fs::FileRange>(const Descriptor&)> locate;
};

struct OciImage {
    std::unique_ptr<fs::TarTree> tree;
    ManifestBlobs manifest;
    ImageConfig config;
    std::string manifest_digest;
};

// Reads the config (16 MiB at most, its digest checked) and streams every layer (tar, gzip or
// zstd by its magic; the mediaType must be a layer's) once. Errors, each one line: the manifest's
// (parse_manifest), "NAME: manifest sha256:...: an artifact (TYPE), not an image", "NAME: layer
// N (sha256:HEX12): unsupported media type \"...\"", "...: the blob is N bytes, its descriptor
// says M", TarTree::open_layers' errors, the config's (parse_image_config).
util::Result<OciImage> open_oci_tree(const OciSource& source, const fs::TarOptions& options);

// The host file range of `location` (image_source's form).
fs::FileRange to_range(const BlobLocation& location);

}  // namespace rootlock::oci
