// Symbol-version needs checked against the provider the loader actually bound: for every
// DT_VERNEED entry of every object in a namespace, each non-weak version must be among the
// DT_VERDEF names of the object that entry's file name matches (glibc's _dl_check_map_versions).
#pragma once

#include <string>
#include <vector>

#include "loader/session.hpp"

namespace rootlock::loader {

struct VersionGap {
    int object = -1;   // who needs it
    std::string file;  // the verneed file name (a soname)
    std::string version;
    int provider = -1;             // the object bound to `file`
    bool no_version_info = false;  // the provider defines no versions at all
};

std::vector<VersionGap> version_gaps(const LoadSession& session);

}  // namespace rootlock::loader
