// The container as it will run: the image with the host's injected files at their container
// paths, the soname links and the ld.so.cache that the host's ldconfig gives it at start.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "fs/overlay_tree.hpp"
#include "host/host_facts.hpp"
#include "host/host_reader.hpp"
#include "util/result.hpp"

namespace rootlock::host {

// The file the start hook writes so the container's loader searches the driver's directories
// (gpu-containers.md 1.2: LXD writes 00-lxdcdi.conf; CDI's update-ldcache 00-nvcr-*.conf).
inline constexpr const char* k_driver_ld_conf = "/etc/ld.so.conf.d/00-rootlock-nvidia.conf";

// The text of k_driver_ld_conf for these facts: one library directory per line.
std::string driver_ld_conf_text(const HostFacts& facts);

// `path` as the image spells it without links: the longest prefix that exists in the image
// resolved there (/lib -> /usr/lib on a merged-/usr image), the rest kept. LXC refuses a mount
// target that crosses a symlink, so mount entries name this.
std::string image_path(const fs::FileTree& image, std::string_view path);

// Every injected file's container path made image_path's.
void canonical_container_paths(const fs::FileTree& image, HostFacts& facts);

struct ContainerView {
    std::shared_ptr<fs::OverlayTree> tree;
    std::vector<std::string> notes;
};

// `image` with every injected file added at its container path (ELF objects with their
// metadata and symbols, read from the host; nothing copied), CDI's links, the conf file, the
// soname links ldconfig makes (the newest file of a soname in a directory wins, as ldconfig
// picks it), and /etc/ld.so.cache regenerated as the host's ldconfig run on the root writes it.
// Errors: a host file that cannot be read, a path the image's tree refuses.
util::Result<ContainerView> container_view(std::shared_ptr<const fs::FileTree> image,
                                           const HostFacts& facts, const HostReader& host);

}  // namespace rootlock::host
