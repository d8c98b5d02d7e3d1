// An OCI image on disk from layer blobs already written: a layout directory (oci-layout,
// index.json, blobs/sha256/) or the same files as one uncompressed tar (an OCI archive, the
// shape `skopeo copy oci:DIR oci-archive:X.tar` writes and Proxmox VE 9.1 imports). The config
// and manifest come from oci/oci_documents, so one set of layers and settings gives one
// manifest digest. The SBOM goes beside the image as an artifact manifest whose subject is the
// image manifest (image-spec 1.1), its blobs in the layout; index.json lists the image alone
// (every client takes it without a name) and names the artifact in an annotation.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "oci/oci_documents.hpp"
#include "util/result.hpp"

namespace rootlock::image {

// A layer written by a TarWriter with in_process compression.
struct LayerBlob {
    std::string host_path;  // the compressed file
    oci::Layer layer;       // its descriptor (digest, size, media type), diff_id, comment
};

struct OciImageSpec {
    oci::RunConfig run;
    std::map<std::string, std::string> annotations;  // the manifest's
    std::string ref_name;                            // index.json's ref.name: the tag
    // The SBOM (CycloneDX JSON) of the image whose manifest digest ("sha256:...") it is given:
    // attached as an artifact when set. The artifact manifest carries the image manifest's
    // org.opencontainers.image.created annotation.
    std::function<std::string(const std::string& manifest_digest)> sbom;
};

struct OciImageWritten {
    oci::Descriptor manifest;
    oci::Descriptor config;
    oci::Descriptor sbom_manifest;  // the artifact manifest; empty digest when spec.sbom is unset
    std::string sbom;               // the SBOM's bytes as the artifact holds them
    std::string archive_sha256;     // write_oci_archive: the file's, hashed as it was written
};

// Writes the layout at `dir`, which must not exist (it is made under a temporary name beside it
// and renamed when complete); each layer's file is moved into blobs/sha256/ (after a failure
// it may be left in DIR.partial). Errors: "DIR: exists", a layer whose file is missing or whose
// size differs from its descriptor, I/O.
util::Result<OciImageWritten> write_oci_layout(const std::string& dir,
                                               const std::vector<LayerBlob>& layers,
                                               const OciImageSpec& spec);

// Writes the archive at `path` (a temporary beside it, renamed when complete): oci-layout,
// index.json, blobs/ in component order, members without "./", mode 0644/0755, owner 0, every
// mtime `mtime` (the lock's epoch). The layer files are copied, not moved. `before_rename`,
// when given, sees what was written once the archive is complete and before it is renamed; its
// error removes the temporary and ends the call.
util::Result<OciImageWritten> write_oci_archive(
    const std::string& path, const std::vector<LayerBlob>& layers, const OciImageSpec& spec,
    int64_t mtime, const std::function<util::Status(const OciImageWritten&)>& before_rename = {});

}  // namespace rootlock::image
