// Cache entries found damaged during a run. The cache is a shortcut, never a source of truth:
// an entry whose bytes no longer match the digest it was stored with is discarded and made
// again, and the user is told once, in one warning line naming it. Any layer may find one
// (the blob store, the page cache, the frame cache, a base), on any thread, so they are
// collected here and the command prints them when it ends.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "util/result.hpp"

namespace rootlock::util {

// Records "PATH: what was wrong; what was done" for the command to print.
void report_cache_damage(std::string line);

// Every line recorded since the last call, in the order recorded; the log is then empty.
std::vector<std::string> take_cache_damage();

// What every cache does with an entry at `path` found damaged (`what`: "damaged: ..."): offline,
// the ErrorKind::integrity error "PATH: WHAT (--offline: remove it, or run without --offline to
// AGAIN)", the entry left for the user to see; otherwise `path` and `also` (what goes with it)
// are removed, "PATH: WHAT; removed, to AGAIN" is reported, and nullopt returned for the caller
// to make or fetch it again. `again`: "fetch it again", "scan the wheel again", ...
std::optional<Error> discard_damaged(const std::string& path, const std::string& what, bool offline,
                                     const std::string& again,
                                     const std::vector<std::string>& also = {});

}  // namespace rootlock::util
