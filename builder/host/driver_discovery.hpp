// The driver's user-space files as `nvidia-ctk cdi generate` finds them (gpu-containers.md 1.3):
// libcuda of the driver's version through fixed directories and the host's ld.so.cache, then
// every `*.so.<version>` beside it, the driver's programs, its GSP firmware and its sockets.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "host/host_facts.hpp"
#include "host/host_reader.hpp"

namespace rootlock::host {

struct DriverFiles {
    // The version the files carry ("535.261.03"): the one asked for, or, when none was, the one
    // in the name of the libcuda (else libnvidia-ml) found.
    std::string version;
    std::string libcuda;  // the libcuda.so.<version> found (canonical host path), or empty
    std::vector<InjectedFile> files;
    std::vector<InjectedLink> links;
    std::vector<std::string> library_dirs;
    std::vector<std::string> notes;
};

// The directories nvidia-ctk searches before the ld.so.cache (pkg/lookup/library.go), Debian's
// nvidia/current among them.
const std::vector<std::string>& driver_search_directories();

// Finds the driver's files on the host. `version` empty: take it from the libcuda found. Nothing
// found is not an error (a host without a driver): `version` and `files` stay empty.
DriverFiles discover_driver_files(const HostReader& host, std::string_view version);

// True for "535.261.03", "470.256.02", "999.88.77": a driver release as file names carry it.
bool looks_like_driver_version(std::string_view text);

}  // namespace rootlock::host
