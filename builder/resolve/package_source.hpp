// The resolver's only view of the package world: the candidate versions of a project and the
// Requires-Dist of one version. The lead's index client implements it; tests use an in-memory one.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "python/pep440.hpp"
#include "python/pep508.hpp"
#include "util/result.hpp"

namespace rootlock::resolve {

struct CandidateVersion {
    python::Version version;
    // PEP 592: every file of this version for the target is yanked; chosen only for an exact pin
    // that nothing else satisfies (see resolver.hpp).
    bool yanked = false;
    // The source has already dropped versions with no wheel for the target and versions whose
    // requires-python excludes the target Python.
};

class PackageSource {
  public:
    virtual ~PackageSource() = default;
    // Every candidate of a normalised project name, any order. An unknown project is an error
    // ("no project named 'x' on any index"), so is a network failure (kind network): both stop
    // the resolution and are returned as they are.
    virtual util::Result<std::vector<CandidateVersion>> versions(const std::string& name) = 0;
    // The Requires-Dist of one version (unevaluated: the resolver evaluates markers with extras).
    virtual util::Result<std::vector<python::Requirement>> dependencies(
        const std::string& name, const python::Version& version) = 0;
    // Hint: these (name, version) pairs are likely to be asked next; a source may fetch them in
    // parallel. Default: nothing.
    virtual void prefetch(const std::vector<std::pair<std::string, python::Version>>&) {}
};

}  // namespace rootlock::resolve
