// What a base root tells about the target a lock is made for: the architecture (from the class and
// machine of its /bin/sh), the glibc release (from the version definitions of the libc its Python
// loads), and the Python interpreter the recipe names. Never the host running rootlock.
#pragma once

#include <string>

#include "fs/file_tree.hpp"
#include "util/result.hpp"

namespace rootlock::fetch {

struct BaseFacts {
    std::string arch;                // "x86_64", "aarch64"
    int glibc_major = 0;             // 2
    int glibc_minor = 0;             // 36
    std::string python_interpreter;  // "/usr/bin/python3.11"
    std::string python_full;         // "3.11.2" from the Debian package database, else ""

    std::string glibc() const {
        return std::to_string(glibc_major) + "." + std::to_string(glibc_minor);
    }
};

// Reads the facts for the recipe's Python "3.N". Errors name the base (`base` is its description
// for messages): no /usr/bin/python3.N, an interpreter whose libc the loader cannot find, a libc
// without GLIBC_2.N version definitions, an architecture rootlock has no wheel tags for.
util::Result<BaseFacts> read_base_facts(const fs::FileTree& tree, const std::string& python_version,
                                        const std::string& base);

// The highest "GLIBC_2.N" among version definition names, as {major, minor}; {0, 0} when none.
std::pair<int, int> highest_glibc(const std::vector<std::string>& version_names);

// The upstream version of package `package` in a dpkg status file ("3.11.2-6+deb12u6" gives
// "3.11.2"; an epoch is dropped); "" when the package is absent or not installed.
std::string dpkg_upstream_version(std::string_view status_text, std::string_view package);

}  // namespace rootlock::fetch
