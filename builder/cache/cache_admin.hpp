// `rootlock cache`: the cache as a whole. What each kind of entry holds and how it is checked
// is ARCHITECTURE.md's "Trusting the cache"; this module walks them all: verify every entry
// against its digest, say where the bytes are, and prune what no kept lock needs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pylock/pylock.hpp"
#include "util/result.hpp"

namespace rootlock::cache {

// One kind of entry: "blobs", "frames", "bases", "pages", "scans", "layers", "other".
struct KindUsage {
    std::string kind;
    uint64_t entries = 0;
    uint64_t bytes = 0;
};

// Size by kind (apparent sizes), in the order above; kinds with nothing are listed too.
util::Result<std::vector<KindUsage>> cache_usage(const std::string& cache_dir);

struct VerifyReport {
    std::vector<KindUsage> checked;    // what was read and checked, by kind
    std::vector<std::string> damaged;  // "PATH: what was wrong", each removed
    uint64_t bytes_read = 0;
};

// Every entry against its digest (blobs by their name, frames by their checksum, bases by
// their record, pages and scans by their seal, layers by the digest recorded with them: a full
// SHA-256, stronger than a build's stamp); a damaged one is removed with what goes with it.
// Holds the cache exclusively (util/cache_lock): waits for running builds and locks to end.
util::Result<VerifyReport> verify_cache(const std::string& cache_dir);

struct PruneReport {
    uint64_t removed_entries = 0;
    uint64_t removed_bytes = 0;
};

// Removes what none of `keep` needs: blobs that are not a kept lock's wheel, tarball base or
// .deb; scans of wheels not kept; unpacked bases of tarballs not kept, and assembled Debian
// bases when no kept lock has a Debian base; frames and layers of images that no longer exist
// where they were built; dead runs' temporaries. Pages stay (small, and what an offline relock
// reads). Holds the cache exclusively, as verify_cache does.
util::Result<PruneReport> prune_cache(const std::string& cache_dir,
                                      const std::vector<pylock::Lock>& keep);

}  // namespace rootlock::cache
