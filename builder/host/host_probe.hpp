// `rootlock host`'s engine: what a host gives a GPU container, read from its files only (never
// NVML, the GPU or the kernel module: gpu-containers.md 4.3), or from the CDI specs it publishes.
#pragma once

#include <string>
#include <vector>

#include "host/host_facts.hpp"
#include "util/result.hpp"

namespace rootlock::host {

struct ProbeOptions {
    std::string host_root = "/";
    // CDI spec files given on the command line; when empty, /etc/cdi and /var/run/cdi of the
    // host are read, and their NVIDIA specs win over the files where present.
    std::vector<std::string> cdi_files;
    // Ask the host's nvidia-smi for compute capabilities (only for the live root: a host laid
    // out under a directory is not this machine).
    bool run_nvidia_smi = true;
};

// The host's facts. An error only for what makes the answer meaningless (the root is not a
// directory, a CDI spec that does not parse); a host without a driver gives empty facts with
// a note.
util::Result<HostFacts> probe_host(const ProbeOptions& options);

}  // namespace rootlock::host
