// Whether this host can run a Debian architecture's programs, as mmdebstrap needs for every
// variant but extract (maintainer scripts run inside the new root): natively, or through
// qemu-user registered with binfmt_misc. When it cannot, one line says what to install and enable.
#pragma once

#include <string>

#include "util/result.hpp"

namespace rootlock::fetch {

// qemu's name for a Debian architecture's CPU ("arm64" -> "aarch64", "ppc64el" -> "ppc64le").
std::string qemu_cpu(const std::string& debian_architecture);

// ok when `variant` is extract, when `architecture` runs natively on `host_machine` (uname's:
// x86_64 runs amd64 and i386), or when `binfmt_dir`/qemu-CPU is registered and enabled. Else
// "base.debian.arch ARCH: ..." naming the packages and the commands.
util::Status check_emulation(const std::string& architecture, const std::string& variant,
                             const std::string& host_machine,
                             const std::string& binfmt_dir = "/proc/sys/fs/binfmt_misc");

// This host's machine, as uname(2) reports it.
std::string host_machine();

}  // namespace rootlock::fetch
