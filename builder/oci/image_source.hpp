// An OCI image as it lies on disk, for reading without unpacking: a layout directory
// (oci-layout, index.json, blobs/sha256/) or an OCI archive (the same files in one uncompressed
// tar). Every blob is located as a byte range of a host file, so a multi-gigabyte layer is read
// in place (pushed, hashed, streamed) and never copied out of the archive.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "oci/oci_documents.hpp"
#include "util/result.hpp"

namespace rootlock::oci {

struct BlobLocation {
    std::string file;  // the host file holding the blob
    uint64_t offset = 0;
    uint64_t size = 0;
};

// One entry of index.json's "manifests".
struct IndexEntry {
    Descriptor descriptor;
    std::string ref_name;       // its org.opencontainers.image.ref.name annotation, or ""
    std::string artifact_type;  // "" for an image
};

// What a manifest points at (image-spec manifest.md), in the order a push must send it.
struct ManifestBlobs {
    std::string media_type;     // the manifest's own
    std::string artifact_type;  // "" for an image
    Descriptor config;
    std::vector<Descriptor> layers;
    std::optional<Descriptor> subject;
};

// index.json's manifests. Errors (located at `where`): not JSON, not schemaVersion 2, a
// descriptor without a mediaType, a "sha256:<64 hex>" digest or a size.
util::Result<std::vector<IndexEntry>> parse_index(const std::string& text,
                                                  const std::string& where);
// A manifest's config, layers and subject; the same errors; an image index is refused here
// (the caller picks one of its manifests first).
util::Result<ManifestBlobs> parse_manifest(const std::string& text, const std::string& where);

class ImageSource {
  public:
    // A directory is a layout (it must hold oci-layout and index.json); a file is an archive,
    // listed once (names, sizes and offsets; no blob is read). Errors: "PATH: not an OCI
    // layout (no oci-layout)", a member that is not a regular file where a blob should be,
    // libarchive's message for a damaged archive.
    static util::Result<ImageSource> open(const std::string& path);

    const std::string& path() const { return m_path; }
    bool is_archive() const { return m_archive; }
    const std::vector<IndexEntry>& manifests() const { return m_manifests; }

    // Where the blob with `digest` lies; "PATH: no blob sha256:..." when it is not there.
    util::Result<BlobLocation> locate(const std::string& digest) const;
    // A small blob (a manifest, a config) read whole and checked against its digest.
    util::Result<std::string> read_blob(const Descriptor& descriptor,
                                        uint64_t max_size = 16ull << 20) const;

    // The manifest to use for `ref` ("" for the only image in index.json; else its ref.name,
    // or "sha256:..." for a digest). Errors name the refs there are.
    util::Result<IndexEntry> select(const std::string& ref) const;

  private:
    std::string m_path;
    bool m_archive = false;
    std::map<std::string, BlobLocation> m_members;  // archive: member name -> range
    std::vector<IndexEntry> m_manifests;
};

// Reads `location`'s bytes whole (small blobs only).
util::Result<std::string> read_location(const BlobLocation& location);

}  // namespace rootlock::oci
