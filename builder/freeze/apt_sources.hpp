// The archives a live root's apt reads, as apt finds them: /etc/apt/sources.list, then every
// /etc/apt/sources.list.d/*.list and *.sources in file name order (debian/apt_sources parses
// each), symlinks followed, each (url, suite) once.
#pragma once

#include <string>
#include <vector>

#include "debian/apt_sources.hpp"
#include "fs/file_tree.hpp"
#include "util/result.hpp"

namespace rootlock::freeze {

// A flat repository ("deb URL ./") has no dists/ to read: it is returned in `flat` (as
// "FILE:LINE URL SUITE") so that an error can name it. A .sources file that does not parse is
// an error ("FILE:LINE: problem"); a missing sources.list or sources.list.d is not.
struct AptSources {
    std::vector<debian::SourceLine> archives;
    std::vector<std::string> flat;
};
util::Result<AptSources> read_apt_sources(const fs::FileTree& tree);

}  // namespace rootlock::freeze
