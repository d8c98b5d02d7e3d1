// A binary Packages index (dists/SUITE/COMPONENT/binary-ARCH/Packages): one entry per .deb the
// archive offers, with where it lives in the pool and its size and SHA256.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.hpp"

namespace rootlock::debian {

struct BinaryPackage {
    std::string name;            // Package
    std::string version;         // Version (checked with parse_deb_version)
    std::string architecture;    // Architecture ("amd64", "all")
    std::string filename;        // Filename: relative to the mirror root ("pool/main/...")
    uint64_t size = 0;           // Size
    std::string sha256;          // SHA256, lowercase hex
    std::string source;          // Source without its "(version)", or the package name
    std::string source_version;  // the "(version)" of Source, or the package's version
    std::string priority, section, multi_arch;
    bool essential = false;                      // Essential: yes
    std::string depends, pre_depends, provides;  // as written, for reports only
};

// Parses every paragraph. Required per paragraph: Package, Version, Architecture, Filename, Size,
// SHA256; errors read "FILE:LINE: package \"NAME\": ..." (missing field, a size that is not a
// number, a SHA256 that is not 64 hex digits, a version that does not parse, a Filename with
// ".." or a leading '/').
util::Result<std::vector<BinaryPackage>> parse_packages(std::string_view text,
                                                        const std::string& file_name);

}  // namespace rootlock::debian
