// Which builds of a project (torch) in rootlock's wheel-scan cache define the symbols an
// extension misses: "built against torch 2.8.0+cu128" turns a wall of mangled names into the
// one fact a user acts on. Read only when a check found undefined symbols.
#pragma once

#include <string>
#include <vector>

#include "check/problem.hpp"

namespace rootlock::assemble {

// The versions ("2.8.0+cu128") of cached `project` wheels holding a shared object named
// `library` (by SONAME or file name) that defines every name in `symbols`; sorted, unique.
std::vector<std::string> cached_builds_defining(const std::string& cache_dir,
                                                const std::string& project,
                                                const std::string& library,
                                                const std::vector<std::string>& symbols);

// Adds "cached_builds" to every undefined-symbol problem whose hint blames another torch.
void add_cached_builds(const std::string& cache_dir, std::vector<check::Problem>& problems);

}  // namespace rootlock::assemble
