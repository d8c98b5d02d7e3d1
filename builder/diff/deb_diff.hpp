// The Debian part of diff_locks: a base's archives (as base field changes) and its .debs (the
// debian group). Internal to diff/; lock_diff.cpp calls it, the renderers never do.
#pragma once

#include <vector>

#include "diff/lock_diff.hpp"
#include "pylock/pylock.hpp"

namespace rootlock::diff {

// Appends to `out`, archives in A's order first (removed or changed), then those only in B (in
// B's order): "archive NAME" for one added or removed (the value "URL SUITE COMPONENTS"), else
// "archive NAME url", "... suite", "... components", "... snapshot", "... keyring",
// "... keyring-sha256". The Release date is not compared: it changes with every relock.
void diff_archives(const pylock::LockBase& before, const pylock::LockBase& after,
                   std::vector<FieldChange>& out);

// The .debs of both bases by (name, architecture). Entries of one key pair equal versions (by
// dpkg) first; a single leftover on each side is an upgrade or a downgrade, anything else is
// removed or added. Between bases of two architectures, a .deb of A's own architecture is keyed
// as B's: the same version on both is then no change (neither rebuilt nor moved), and a change
// names B's architecture.
std::vector<DebChange> diff_debs(const pylock::LockBase& before, const pylock::LockBase& after);

}  // namespace rootlock::diff
