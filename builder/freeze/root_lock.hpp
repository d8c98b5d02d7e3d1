// A whole root (an image's flattened layers, a rootfs tarball or directory) read as a lock, for
// `diff` of two images: its virtual environment frozen and its dpkg database's package set.
#pragma once

#include <string>
#include <vector>

#include "fs/file_tree.hpp"
#include "pylock/pylock.hpp"
#include "util/result.hpp"

namespace rootlock::freeze {

struct RootLockOptions {
    // The venv's prefix as the image says it (its config's VIRTUAL_ENV); "" or a path the root
    // lacks: the root's one virtual environment (pyvenv.cfg) is searched for.
    std::string venv;
    int threads = 2;
};

struct RootLock {
    // Packages of the venv (name, version, sonames; no wheels: a root does not say where its
    // files came from) and, under [tool.rootlock.base], the installed .debs (no archive).
    pylock::Lock lock;
    std::vector<std::string> notes;  // "no virtual environment in ROOT", ...
};

// The files a TarTree must keep for this: default_retained_patterns() and dpkg's status.
std::vector<std::string> root_lock_patterns();

// Fails for a venv that does not freeze, a root with several virtual environments and no hint
// ("ROOT: 2 virtual environments (/a, /b)"), or a dpkg status that does not parse. RECORD
// digests are not checked here (a tarball keeps no file content): diff compares meaning.
util::Result<RootLock> lock_of_root(const fs::FileTree& tree, const RootLockOptions& options);

}  // namespace rootlock::freeze
