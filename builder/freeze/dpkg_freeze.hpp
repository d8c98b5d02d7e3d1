// The OS half of `rootlock freeze`: a live root's dpkg database read into the Debian package
// set it holds, every file its packages shipped verified against their .md5sums as debsums
// does, and the set matched against the archives the root's apt sources name, so that the
// frozen lock rebuilds the same base.
#pragma once

#include <string>
#include <vector>

#include "debian/dpkg_status.hpp"
#include "freeze/freeze.hpp"
#include "fs/file_tree.hpp"
#include "index/http_client.hpp"
#include "pylock/pylock.hpp"
#include "util/result.hpp"

namespace rootlock::freeze {

struct DpkgFreeze {
    std::vector<debian::InstalledPackage> installed;  // installed ones only, sorted
    // Files that differ from their .md5sums ("missing", "modified (md5 differs from
    // .md5sums)", "not a regular file"), and packages without .md5sums ("no .md5sums: its files
    // cannot be verified"); distribution is "deb:NAME".
    std::vector<RecordProblem> problems;
    uint64_t files_checked = 0;
};

// Reads /var/lib/dpkg/status and the .md5sums of every installed package in `tree`. Fails when
// the root has no dpkg database ("ROOT: no /var/lib/dpkg/status") or it does not parse.
util::Result<DpkgFreeze> freeze_dpkg(const fs::FileTree& tree, int threads);

struct DebMatchOptions {
    std::string cache_dir;
    std::string architecture = "amd64";
    bool offline = false;
    index::HttpOptions http;
};

// The lock's Debian base for `frozen`: the archives the root's apt reads (apt_sources.hpp;
// keys copied out of the root, or out of a .sources entry, when it names one), loaded and
// verified, and each installed package found there by (name, version, architecture). Errors:
// "the root's apt sources (...) name no archive", an archive's load error; packages that no
// archive lists are one error naming them all ("17 installed packages are in no archive the
// root names: ..."), flat repositories the root names (not read) added to both.
util::Result<pylock::LockBase> match_debs(const fs::FileTree& tree, const DpkgFreeze& frozen,
                                          const DebMatchOptions& options);

}  // namespace rootlock::freeze
