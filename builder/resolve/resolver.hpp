// The dependency resolver: root requirements plus a PackageSource in, one version per project
// out, or a message that explains in words which requirements cannot all hold and why.
#pragma once

#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "python/pep440.hpp"
#include "python/pep508.hpp"
#include "resolve/package_source.hpp"
#include "util/result.hpp"

namespace rootlock::resolve {

struct ResolveOptions {
    python::MarkerEnvironment environment;               // the declared target
    std::map<std::string, python::Version> preferences;  // locked versions: tried first if allowed
    bool upgrade_all = false;                            // --upgrade: ignore preferences
    std::set<std::string> upgrade;  // --upgrade-package NAME (normalised): ignore its preference
    size_t max_steps = 200000;      // versions tried; beyond this the resolver gives up
};

struct ResolvedPackage {
    std::string name;  // normalised
    python::Version version;
    std::set<std::string> extras;  // extras that were requested of it
    std::vector<std::string>
        dependencies;                      // normalised names it depends on (after markers), sorted
    std::vector<std::string> required_by;  // normalised names (or "<recipe>"), sorted
    bool direct = false;                   // named by a root requirement
    bool yanked = false;                   // a yanked candidate, admitted by an exact pin
    // The exact pins that admitted it, when yanked: "the recipe requires y==1.1", "torch 2.8.0
    // requires nvidia-nccl-cu12==2.27.3"; sorted.
    std::vector<std::string> yanked_by;
};

// A direct requirement that did not get the newest version its own specifiers allow.
struct Downgrade {
    std::string name;  // normalised
    python::Version chosen;
    python::Version newest;
    // Why, in words: the conflict that proves name==newest impossible with the other
    // requirements, or what a resolution with it would give up.
    std::string why;
};

struct Resolution {
    std::vector<ResolvedPackage> packages;  // sorted by name
    std::vector<Downgrade> downgrades;      // in the order of the root requirements
    size_t steps = 0;       // versions tried (decided, or refused for their own dependencies)
    size_t backtracks = 0;  // conflicts that undid decisions
};

// PubGrub over finite version sets (see resolver.cpp). The rules:
// - A requirement whose marker is false for options.environment is ignored; extras are evaluated
//   as pip does (a dependency of foo[bar] applies when its marker holds with extra "" or "bar").
//   foo and foo[bar] share one version.
// - Pre-releases, per requirement (monotone, so learnt conflicts stay true): a pre-release V of P
//   satisfies requirement R when R.contains(V, false) (R names a pre-release), or when
//   R.contains(V, true) and no candidate of P satisfies R under packaging's default policy,
//   which is SpecifierSet.filter()'s fallback applied to R alone. Two requirements that each
//   admit final releases never make a pre-release acceptable, even when no final release
//   satisfies both.
// - Yanked versions (PEP 592's first approach, as pip applies it to every requirement, direct or
//   not): a requirement allows a yanked candidate only when it is an exact pin (a "===" clause,
//   or "==" without ".*") and every candidate it matches is yanked. pip judges the merged
//   specifier of every requirement on the project, so a range beside such a pin takes the
//   yanked version too. Sets judged per requirement cannot say that and stay monotone (learnt
//   conflicts must stay true), so the solve runs in passes: the first with the rule above; when
//   it met exact pins that select yanked versions, another in which every requirement on those
//   projects allows those versions, where a yanked version is tried only once a decided pin
//   selects it. That pass's answer is taken when it decides a yanked version and every yanked
//   version it decides is selected by a decided pin (pip's condition); passes repeat, with the
//   pins each one met, at most three times.
// - Versions are tried newest first, except that the preference (the locked version) comes
//   first when it is allowed and neither upgrade_all nor upgrade names the package. The next
//   package decided is the required one with the fewest allowed versions (ties by name).
// - Errors: a direct URL requirement ("NAME @ URL: direct URL requirements are not supported"),
//   a root requirement no candidate matches ("no version of X matches X>=3 (available: 1.0,
//   1.1)"), errors from the source as they are, more than max_steps versions tried, and a conflict,
//   explained from the derivation that proved it (the requirements it used, grouped around the
//   package they clash on, then outward along the requirers back to the recipe):
//   "no version of c satisfies every requirement:\n  b 2.0 requires c<1\n  the recipe requires
//   c>=1\n  a 1.0 requires b>=2\n  the recipe requires a".
// - Downgrades: for each root requirement whose project did not get the newest version that
//   the root requirements on it allow, the resolution is asked again with "name==newest" added
//   (same options); its conflict explanation, or what its answer gives up, is the why. A source
//   error of kind network in that second resolution is returned; any other becomes the why.
util::Result<Resolution> resolve(const std::vector<python::Requirement>& roots,
                                 PackageSource& source, const ResolveOptions& options);

}  // namespace rootlock::resolve
