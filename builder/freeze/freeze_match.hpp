// `freeze --index URL`: each frozen distribution matched to the exact wheel it was installed
// from, by comparing its installed RECORD digests with the RECORDs of the index's candidates.
#pragma once

#include <string>
#include <vector>

#include "freeze/freeze.hpp"
#include "index/http_client.hpp"
#include "python/environment.hpp"
#include "util/result.hpp"

namespace rootlock::freeze {

struct MatchOptions {
    std::vector<std::string> index_urls;  // in priority order: the first that has a project wins
    std::string cache_dir;                // the content store and page cache root
    bool offline = false;                 // pages and wheels from the cache only
    index::HttpOptions http;              // its `offline` is set from the field above
};

struct MatchReport {
    std::vector<std::string> matched;    // normalised names, in the lock's order
    std::vector<std::string> unmatched;  // normalised names, in the lock's order
    // Why a package is unmatched, ties, candidates that could not be read; in the lock's order,
    // each "NAME VERSION: ..." (one report-wide note about an unknown target comes first).
    std::vector<std::string> notes;
};

// Candidate wheels' RECORDs above this size are refused (a note), never read into memory.
inline constexpr size_t k_max_candidate_record_bytes = size_t{64} << 20;

// For each package of `frozen.lock` (same order) and its distribution in `env` (the environment
// freeze_environment read: find_environments(tree, {venv}).front()), looks up files of exactly
// that version on the first index that has the project, keeps the wheels whose tags the target
// supports (every wheel when the target's glibc or arch is unknown), downloads them into the
// content store (verified against the index's sha256 when given) and compares their RECORDs
// with the installed one. A wheel matches when every hashed installed row whose path its RECORD
// also lists has the same digest, and there is at least one such row; rows an installer
// writes or rewrites are ignored (the dist-info's RECORD, INSTALLER, REQUESTED and
// direct_url.json, paths outside site-packages such as ../../../bin/, __pycache__ .pyc files),
// as are the wheel's .data/ files other than purelib and platlib. The first match in the
// target's order gives the package one LockWheel {name, url, size, sha256, upload_time} and
// its index; packages without a match keep no wheel and are listed in `unmatched`.
// Note texts (NAME is the normalised name, VERSION the lock's):
//   "NAME VERSION: no installed RECORD to compare"
//   "NAME VERSION: no project of that name on any index"
//   "NAME VERSION: no wheel of this version for the target on INDEX"
//   "NAME VERSION: no candidate wheel matches the installed files (FILE: PATH differs; FILE: no
//    installed file in common; URL: download error; FILE: zip or RECORD error)": every
//    candidate in the target's order; a download that is not what the index promised, or a
//    wheel without a readable RECORD, is a reason like these, never an error.
//   "NAME VERSION: FILE, FILE2 all match the installed files; chose FILE, the target's first"
//   "the target's glibc or arch is unknown: every wheel of each version is a candidate"
// Errors: network failures (ErrorKind::network; offline, anything not cached reads "URL: not in
// the cache and --offline forbids the network"), and index pages that cannot be parsed.
util::Result<MatchReport> match_wheels(FreezeResult& frozen, const python::PythonEnvironment& env,
                                       const MatchOptions& options);

}  // namespace rootlock::freeze
