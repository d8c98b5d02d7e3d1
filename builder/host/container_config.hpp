// `rootlock pct-config`'s engine: the container configuration that gives an image the host's
// GPUs and driver, for Proxmox (`/etc/pve/lxc/ID.conf`) or plain LXC and Incus, plus the host
// unit that makes the uvm nodes exist before containers start (gpu-containers.md 2.2, 3.1).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "host/host_facts.hpp"
#include "util/result.hpp"

namespace rootlock::host {

enum class ConfigFormat { pct, lxc };
enum class CgroupVersion { v2, v1 };

// What the configuration needs of the image; the caller reads it from the image.
struct ImageFacts {
    std::string arch;                        // pct's `arch`: "amd64", "arm64"
    std::string ostype;                      // pct's `ostype`: "debian", "ubuntu", ...
    std::map<std::string, uint32_t> groups;  // the image's /etc/group: name -> gid
};

struct ConfigOptions {
    ConfigFormat format = ConfigFormat::pct;
    CgroupVersion cgroup = CgroupVersion::v2;  // lxc only: which key family LXC runs with
    // "all", or GPU indices ("0", "1"), device minors' UUIDs ("GPU-..."), bus ids.
    std::vector<std::string> gpus = {"all"};
    std::string image;  // named in the header comment
};

struct ContainerConfig {
    std::string text;                   // the configuration lines
    std::vector<std::string> problems;  // refusals: each one line, all of them
    std::vector<std::string> notes;
};

// The selected GPUs (indices into facts.gpus), or problems naming each selector that matches
// no GPU of the host.
util::Result<std::vector<size_t>> select_gpus(const HostFacts& facts,
                                              const std::vector<std::string>& selectors);

// The configuration for the selected GPUs. Problems (the text is still written): a host
// without a driver, no GPU, a device node the start needs that is missing now (devN: stat()s it
// at every start), a dev path pve-container's schema refuses, more than 256 devices.
ContainerConfig make_container_config(const HostFacts& facts, const ImageFacts& image,
                                      const ConfigOptions& options);

// The lxc.hook.mount command: writes the driver's ld.so.conf.d file into the container's root,
// makes the links of CDI's create-symlinks hook, and runs the host's ldconfig there, as LXD's
// CDI hook does (gpu-containers.md 1.2).
std::string ldconfig_hook_command(const HostFacts& facts);

// A systemd oneshot unit for the host, ordered before pve-guests.service and lxc.service, that
// loads nvidia-uvm and makes /dev/nvidia-uvm and /dev/nvidia-uvm-tools with the major the
// kernel gives it now (the nodes appear only on first use otherwise: gpu-containers.md 3.3).
std::string host_unit_text();

}  // namespace rootlock::host
