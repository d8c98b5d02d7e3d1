// dpkg's database of a root: /var/lib/dpkg/status (what is installed, at which version) and each
// package's /var/lib/dpkg/info/NAME[:ARCH].md5sums (the files it shipped), so that a live root
// can be frozen into its package set and its files verified as debsums does.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "util/result.hpp"

namespace rootlock::debian {

struct InstalledPackage {
    std::string name, version, architecture;
    std::string status;                  // "install ok installed", as written
    std::string source, source_version;  // as in BinaryPackage
    std::string multi_arch;              // "same" means its info files carry ":ARCH"
    std::vector<std::string> conffiles;  // absolute paths; their md5sums are not in .md5sums

    bool installed() const;  // the status's last word is "installed"
};

// Every paragraph with a Package; Version and Architecture are required for installed packages
// ("status:LINE: package \"NAME\": no Version"). Sorted by name, then architecture. Each needs a
// three-word Status ("... no Status"); one name and architecture twice is an error.
util::Result<std::vector<InstalledPackage>> parse_dpkg_status(std::string_view text,
                                                              const std::string& file_name);

struct Md5sumEntry {
    std::string md5;   // 32 lowercase hex digits
    std::string path;  // absolute ("/usr/bin/dpkg"); the file holds it relative, without '/'
};

// "HEX  PATH" lines (two spaces, as dpkg writes them; one space or a '*' are accepted).
// Errors: "FILE:LINE: ..." for a bad digest, a missing path, or a path with "..".
util::Result<std::vector<Md5sumEntry>> parse_md5sums(std::string_view text,
                                                     const std::string& file_name);

// The info file stem dpkg uses: "NAME:ARCH" for Multi-Arch: same packages, else "NAME".
std::string info_stem(const InstalledPackage& package);

}  // namespace rootlock::debian
