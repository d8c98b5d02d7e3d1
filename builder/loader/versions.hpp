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

// The gaps of objects from index `first_object` on (a session copied from a base has had the
// base's objects checked already; their providers do not change).
std::vector<VersionGap> version_gaps(const LoadSession& session, size_t first_object = 0);

}  // namespace rootlock::loader
