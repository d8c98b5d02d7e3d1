// Nothing of the build machine in an image: the files a base tarball may carry from the host
// that made it (mmdebstrap copies /etc/hostname and /etc/resolv.conf) are written with fixed
// content, the same on every machine. pct rewrites hostname, hosts and resolv.conf at every
// start (shared/domain/pct-and-lxc.md); an empty /etc/machine-id is what machine-id(5) asks of
// an image, so that each container gets its own at first boot.
#pragma once

#include "fs/overlay_tree.hpp"
#include "util/result.hpp"

namespace rootlock::assemble {

// /etc/hostname "localhost", /etc/hosts with Debian's loopback entries, an empty
// /etc/resolv.conf and an empty /etc/machine-id, each 0644 and owned by root. Lock and build
// both call it, so the check sees the tree that is shipped.
util::Status add_fixed_machine_files(fs::OverlayTree& tree);

}  // namespace rootlock::assemble
