// The OCI form of a build: the planned entries split into layers (oci_layers), each written by
// an in-process TarWriter, then the layout or the archive (oci_image). image_build plans the
// entries and knows their sources; this file knows nothing of bases, wheels or locks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "image/frame_plan.hpp"
#include "image/layer_cache.hpp"
#include "image/oci_image.hpp"
#include "image/oci_layers.hpp"
#include "image/tar_writer.hpp"
#include "util/result.hpp"

namespace rootlock::image {

struct OciBuildInput {
    std::vector<LayerInput> entries;  // one per planned entry, in component order
    // Writes planned entry `index` into `writer` (an entry may go to several layers: the
    // directories above each layer's files), with `mtime` in place of its own unless negative.
    std::function<util::Status(TarWriter& writer, size_t index, int64_t mtime)> write_entry;
    // Each layer's mtime for the entries not from the base: what the layer holds decides it
    // (its wheels' newest date), never the whole lock's epoch, so that a package in another
    // layer leaves this layer's bytes alone. Base entries keep their own.
    std::map<std::string, int64_t> wheel_mtime;  // a wheel's date (its upload time), by name
    int64_t plain_mtime = 0;                     // a layer without a dated wheel's
    LayerPlanOptions plan;                       // the venv's path, the own-layer threshold
    OciImageSpec spec;
    int64_t mtime = 0;  // the archive's members: the lock's epoch
    bool zstd = false;  // zstd layers instead of gzip (umoci and older runtimes refuse them)
    int threads = 2;
    // With a cache: what each entry's bytes are (parallel to `entries`; frame_plan.hpp), and
    // everything else a layer's bytes depend on (codec, level, library versions). A layer whose
    // key the cache holds is copied from it, not written.
    const LayerCache* cache = nullptr;
    std::vector<FramedEntry> identities;
    std::string identity;
    // Called once the image is complete under its temporary name and before it takes its own
    // (with the digest and SBOM it will have): the files beside it go in place first, so the
    // image never stands without them. Its error ends the build with nothing renamed.
    std::function<util::Status(const std::string& sha256, const std::string& sbom)> before_publish;
};

struct OciBuilt {
    uint64_t entries = 0;             // entries written, counting repeated directories once
    std::string sha256;               // the archive file's, or the manifest's for a layout
    std::string manifest_digest;      // "sha256:..."
    std::string sbom_digest;          // the SBOM's artifact manifest, "sha256:..." (spec.sbom set)
    std::string sbom;                 // the SBOM's bytes, as the artifact holds them
    std::vector<std::string> layers;  // "rootlock: the base sha256:... (N bytes)", in order
    uint64_t layers_reused = 0;       // copied from the layer cache
};

// Writes the image at `output` (an archive when `layout` is false). Layer files are written as
// `scratch_prefix` + ".layer-N" and removed (or moved into the layout) before this returns.
util::Result<OciBuilt> build_oci(const OciBuildInput& input, const std::string& output, bool layout,
                                 const std::string& scratch_prefix);

}  // namespace rootlock::image
