// The environment checks the closure checker reports: RECORD files that are gone, paths that two
// distributions claim, and the exact set of paths `pip uninstall` would remove (for --without).
#pragma once

#include <set>
#include <string>
#include <vector>

#include "fs/file_tree.hpp"
#include "python/environment.hpp"

namespace rootlock::python {

// A distribution whose RECORD lists paths that do not exist: the "metadata-only" state an
// uninstall of a dist sharing its files leaves behind (cuda-wheels.md section 1).
struct MissingFiles {
    std::string dist;  // normalised name
    std::string version;
    std::vector<std::string> paths;  // root-absolute, sorted, each once
};

struct MissingFilesOptions {
    // Debian's /usr/lib/python3/dist-packages is dpkg's: its RECORDs name build-time paths
    // ("../scripts/pip") that were never installed, so it is skipped unless asked for.
    bool include_distro_managed = false;
};

// For every distribution with a RECORD, the listed paths that do not exist in `tree` (a
// dangling symlink exists: it is what was installed). Two kinds of entry may be absent without
// harm and are never reported: the dist-info's own RECORD entry (pip lists it without a hash,
// and a dist-info without RECORD is reported by find_environments already) and any .pyc in a
// __pycache__ directory (bytecode is optional and rebuilt on import; pip records the files it
// compiled, which a later --no-compile copy or a cleanup may lack). Sorted by dist name.
std::vector<MissingFiles> find_missing_files(const fs::FileTree& tree,
                                             const PythonEnvironment& environment,
                                             const MissingFilesOptions& options = {});

// A path two or more distributions' RECORDs list: whichever was installed last owns the bytes,
// and uninstalling any of them deletes it for all.
struct SharedPath {
    std::string path;                // root-absolute
    std::vector<std::string> dists;  // normalised names, sorted, each once
};

struct SharedPathOptions {
    // Older NVIDIA cu12 wheels all ship the same empty nvidia/__init__.py; losing an empty
    // __init__.py only turns a package into a namespace package, so such paths (every claimant
    // records size 0) are left out unless asked for.
    bool include_empty_files = false;
};

// Paths claimed by two or more distributions of `environment`, sorted by path. Not counted:
// directory entries (a RECORD path ending in '/'), a dist's own dist-info files, and .pyc files
// in __pycache__ (rebuilt on import, and shared only when their .py is, which is reported).
std::vector<SharedPath> find_shared_paths(const PythonEnvironment& environment,
                                          const SharedPathOptions& options = {});

// What `pip uninstall -y DIST` (pip 23.2's req_uninstall.py) removes, as canonical root-absolute
// paths; each directory in the set goes with everything below it. This is fed to
// fs::HidingTree to predict what an uninstall breaks, so it follows pip rule by rule, not the
// RECORD alone:
//   1. Each RECORD path, joined to site-packages with its parent directories resolved through
//      symlinks; for a .py, also the .pyc and .pyo beside it and __pycache__/NAME.cpython-XY.pyc
//      for the environment's Python. Only paths that exist (following symlinks, so a dangling
//      link stays) are taken, and in a venv only those under its real prefix (pip refuses the
//      rest as "outside of prefix").
//   2. <prefix>/bin/NAME for each console_scripts and gui_scripts entry point and each file in
//      the dist-info's scripts/ directory, by the same rules.
//   3. A directory holding one of those paths is removed whole (empty subdirectories and
//      directory symlinks included) when every file below it is in the set, shortest first;
//      this is how the dist-info directory itself goes. Nothing else: a package directory that
//      keeps one foreign file stays, and parent directories left empty are not removed.
// Empty when the dist has no usable RECORD: pip refuses to uninstall it at all.
std::set<std::string> uninstall_paths(const fs::FileTree& tree,
                                      const PythonEnvironment& environment,
                                      const Distribution& dist);

}  // namespace rootlock::python
