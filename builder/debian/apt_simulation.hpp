// What apt would install, read from `apt-get --simulate` output ("Inst NAME (VERSION ORIGINS
// [ARCH])" lines, as mmdebstrap --simulate --verbose prints them): the package set a Debian
// base resolves to, before anything is downloaded.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "util/result.hpp"

namespace rootlock::debian {

struct SimulatedInstall {
    std::string name, version, architecture;

    auto operator<=>(const SimulatedInstall&) const = default;
};

// Every "Inst " line, unique, sorted by (name, architecture). Other lines are ignored. An Inst
// line without "(VERSION ... [ARCH])" is an error "apt: unexpected line \"...\"". "Inst x [old]
// (new ...)" (an upgrade) takes the new version. One package and architecture at two versions
// is an error "apt: \"x\" (amd64) is installed at both \"1\" and \"2\"".
util::Result<std::vector<SimulatedInstall>> parse_apt_simulation(std::string_view output);

}  // namespace rootlock::debian
