// The host's facts from the CDI specs it publishes (or that the user names): the device nodes,
// mounts, links and loader folders a CDI runtime would inject, replacing what the files gave.
#pragma once

#include <string>
#include <vector>

#include "host/host_facts.hpp"
#include "host/host_reader.hpp"
#include "util/result.hpp"

namespace rootlock::host {

// The kind NVIDIA's specs describe GPUs with (nvidia-ctk's default vendor and class).
inline constexpr const char* k_nvidia_gpu_kind = "nvidia.com/gpu";

// `spec_files` empty: the host's /etc/cdi then /var/run/cdi (*.yaml, *.json; the later
// directory wins, gpu-containers.md 1.1). When a spec of kind nvidia.com/gpu is found, its
// `all` device (else every device) replaces facts.nodes, files, links, library_dirs and
// environment, and facts.source becomes cdi. A spec that does not parse is an error naming it;
// a host without specs is left as it is.
util::Status apply_cdi_specs(const HostReader& host, const std::vector<std::string>& spec_files,
                             HostFacts& facts);

}  // namespace rootlock::host
