// An image in a registry, fetched for reading: its manifest (an index resolved to one platform),
// then its config and layers into the content store, each by digest and verified, so a second
// `check` of the same reference downloads nothing. The result is an oci::OciSource, read like a
// layout or an archive on disk.
#pragma once

#include "index/content_store.hpp"
#include "index/http_client.hpp"
#include "oci/image_config.hpp"
#include "oci/oci_tree.hpp"
#include "registry/registry_client.hpp"
#include "util/result.hpp"

namespace rootlock::registry {

// GET of the reference's manifest (OCI or Docker schema 2; an index or manifest list resolved
// to `platform`), checked against its digest (the reference's, else the registry's
// Docker-Content-Digest), then every blob it needs downloaded into `store` unless there.
// Errors: the registry's (exit 3), "REF: no such image" (a 404), a manifest whose bytes are
// not its digest, "REF: no linux/amd64 image (there are ...)".
util::Result<oci::OciSource> pull_image(RegistryClient& client, index::HttpClient& http,
                                        index::ContentStore& store, const oci::Platform& platform);

}  // namespace rootlock::registry
