// Cache entries found damaged during a run. The cache is a shortcut, never a source of truth:
// an entry whose bytes no longer match the digest it was stored with is discarded and made
// again, and the user is told once, in one warning line naming it. Any layer may find one
// (the blob store, the page cache, the frame cache, a base), on any thread, so they are
// collected here and the command prints them when it ends.
#pragma once

#include <string>
#include <vector>

namespace rootlock::util {

// Records "PATH: what was wrong; what was done" for the command to print.
void report_cache_damage(std::string line);

// Every line recorded since the last call, in the order recorded; the log is then empty.
std::vector<std::string> take_cache_damage();

}  // namespace rootlock::util
