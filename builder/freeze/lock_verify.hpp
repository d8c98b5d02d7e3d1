// `rootlock check --lock`: a live environment (frozen with every RECORD verified) against the lock
// it should match: distributions missing, extra or at another version, and files that differ from
// their RECORD.
#pragma once

#include <string>
#include <vector>

#include "freeze/freeze.hpp"
#include "pylock/pylock.hpp"

namespace rootlock::freeze {

struct LockMismatch {
    std::string distribution;  // normalised name
    std::string kind;          // "missing", "extra", "version", "damaged"
    std::string detail;        // "locked 2.2.6, not installed", "installed 2.1.0, locked 2.2.6",
                               // "2.1.0 installed, not in the lock", "PATH: modified (...)"

    auto operator<=>(const LockMismatch&) const = default;
};

// Sorted by (distribution, kind, detail); empty when the environment is what the lock says.
std::vector<LockMismatch> compare_with_lock(const FreezeResult& live, const pylock::Lock& lock);

}  // namespace rootlock::freeze
