// The checker's view of the Python environments under the checked paths: finding them, the
// RECORD problems they carry (metadata-only installs, paths two distributions claim), and the
// files `pip uninstall` would delete, for `check --without`.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "check/problem.hpp"
#include "fs/file_tree.hpp"
#include "python/environment.hpp"
#include "util/result.hpp"

namespace rootlock::check {

struct EnvironmentSet {
    std::vector<python::PythonEnvironment> environments;
    std::vector<std::string> site_dirs;  // canonical, one per environment
};

util::Result<EnvironmentSet> load_environments(const fs::FileTree& tree,
                                               const std::vector<std::string>& paths);

void add_environment_problems(const fs::FileTree& tree, const EnvironmentSet& environments,
                              std::vector<Problem>& problems);

// What the environments' RECORDs say about the files problems name. A `missing-soname` (or a
// `missing-dlopen` nothing answers) whose file name an installed distribution's RECORD lists,
// the file itself gone (the metadata-only twin an uninstall of its cu13 partner leaves), gets
// "owner" (dist, version, path, environment) and "remedy": pip's reinstall line with the
// environment's own pip, or, for files rootlock installed (INSTALLER says so), "rebuild the image
// from its lock". A `cuda-unloaded-major` gets the distributions its libraries belong to.
void add_owners(const fs::FileTree& tree, const EnvironmentSet& environments,
                std::vector<Problem>& problems);

// Every path `pip uninstall DIST` would delete, for each named distribution; an error names a
// distribution found in no environment.
util::Result<std::set<std::string>> uninstall_set(const fs::FileTree& tree,
                                                  const EnvironmentSet& environments,
                                                  const std::vector<std::string>& dists);

}  // namespace rootlock::check
