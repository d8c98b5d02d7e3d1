// `rootlock build`: a lock's base and wheels assembled into one rootfs tarball for pct, written
// in component order in one pass (members read straight from the base tar and the wheels, never
// extracted), after the closure check and pct's rules have passed on the final tree.
#pragma once

#include <string>
#include <vector>

#include "check/closure_check.hpp"
#include "image/pct_rules.hpp"
#include "index/http_client.hpp"
#include "pylock/pylock.hpp"
#include "util/result.hpp"

namespace rootlock::image {

struct BuildOptions {
    std::string lock_path;  // relative paths in the lock (a local base) start from its folder
    std::string output;     // the image; its suffix picks the compression
    std::string cache_dir;
    bool offline = false;
    bool allow_broken = false;
    int threads = 2;
    bool oci_zstd = false;  // an OCI output's layers in zstd, not gzip
    index::HttpOptions http;
};

struct BuildOutcome {
    bool built = false;           // false: the closure check failed (see report); no image
    check::CheckReport report;    // the final tree's closure check
    std::vector<PctFinding> pct;  // non-fatal findings (fatal ones are errors)
    std::string image_path;
    std::string architecture;         // /bin/sh's, as Debian, pct and OCI name it: "arm64"
    std::string sha256;               // the file's; an OCI layout's manifest's
    std::string manifest_digest;      // OCI outputs: "sha256:..."
    std::string sbom_digest;          // OCI outputs: the SBOM's artifact manifest, "sha256:..."
    std::vector<std::string> layers;  // OCI outputs: each layer's comment, digest and size
    uint64_t layers_reused = 0;       // OCI outputs: layers copied from the layer cache
    uint64_t size = 0;
    uint64_t entries = 0;
    uint64_t compiled = 0;  // .pyc files written (python.compile-bytecode)
    // zstd and gzip tarballs: the frames written, how many were copied from the frame cache, and
    // how many of those share their blocks with it (a filesystem with reflinks: XFS, btrfs).
    uint64_t frames = 0;
    uint64_t frames_reused = 0;
    uint64_t frames_cloned = 0;
    // The image already there was built from the same frames and is untouched since: kept as it
    // is, not written again (its bytes are the ones a build would write).
    bool unchanged = false;
    std::string sha256_path;  // IMAGE.sha256
    std::string sbom_path;    // IMAGE.cdx.json
    std::string report_path;  // IMAGE.check.json
};

util::Result<BuildOutcome> build_image(const pylock::Lock& lock, const BuildOptions& options);

// The temporary file an interrupted build may leave beside the image (never the image itself);
// the CLI deletes it on SIGINT/SIGTERM. Empty when no build is writing.
const char* build_temporary_path();

}  // namespace rootlock::image
