// Naming an image on disk: "PATH", "PATH:REF" or "PATH@sha256:..." for a layout directory or an
// OCI archive, told from a rootfs directory or tarball by its content, and the one image manifest
// chosen from its index.json (and from a nested multi-arch index, by platform).
#pragma once

#include <string>

#include "oci/image_config.hpp"
#include "oci/oci_tree.hpp"
#include "util/result.hpp"

namespace rootlock::oci {

struct ImageSpec {
    std::string path;
    std::string ref;  // "" for the only image; a ref.name, or "sha256:..." for a digest
};

// The path is `text` itself when it exists; else what precedes the last "@sha256:" or the last
// ":" after the last "/", when that exists.
ImageSpec split_image_spec(const std::string& text);

// A directory holding oci-layout, or an uncompressed tar whose first member (past "./" and
// pax headers) is oci-layout, index.json or under blobs/. Reads at most a few tar headers.
bool is_oci_image(const std::string& path);

// The manifest `spec.ref` names (see ImageSource::select; artifacts such as an SBOM are never
// the default), an image index resolved to its `platform` manifest, read and checked against
// its digest; `locate` then finds blobs in the same layout or archive. Errors: ImageSource's,
// "NAME: no linux/amd64 image (there are ...)", "NAME: an index inside an index".
util::Result<OciSource> open_oci_path(const ImageSpec& spec, const Platform& platform);

}  // namespace rootlock::oci
