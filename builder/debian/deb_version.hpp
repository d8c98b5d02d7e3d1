// Debian package versions ([epoch:]upstream[-revision]) and dpkg's ordering of them, so that the
// OS layer is compared as dpkg and apt compare it (`~` sorts before everything, even the end).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "util/result.hpp"

namespace rootlock::debian {

struct DebVersion {
    uint64_t epoch = 0;
    std::string upstream;  // never empty; starts with a digit
    std::string revision;  // "" when the version has no '-'

    bool operator==(const DebVersion&) const = default;
};

// Parses as dpkg's parseversion does, strictly (what dpkg only warns about is refused): an
// epoch of digits before the first ':', a revision after the last '-', an upstream part that
// starts with a digit and holds only [A-Za-z0-9.+~:-] (':' only with an epoch, '-' only with a
// revision), a revision of [A-Za-z0-9.+~]. Errors name the version: "\"1:\": nothing after the
// epoch".
util::Result<DebVersion> parse_deb_version(std::string_view text);

// dpkg's verrevcmp over epoch, upstream, revision: <0, 0 or >0.
int compare_deb_versions(const DebVersion& a, const DebVersion& b);

// The same over texts; a text that does not parse sorts before every one that does, and two
// that do not parse compare as strings (so sorting never fails).
int compare_deb_versions(std::string_view a, std::string_view b);

// "[epoch:]upstream[-revision]", the epoch only when not 0.
std::string to_string(const DebVersion& version);

}  // namespace rootlock::debian
