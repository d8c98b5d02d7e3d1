// What an OCI image built from a lock says about itself: the config's run settings (Env led by
// the venv, the recipe's entrypoint and cmd, labels), the manifest's annotations, its tag, the
// SBOM attached to it, and the date of each wheel. From the lock alone, so one lock gives one
// manifest digest on every machine.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "image/oci_image.hpp"
#include "pylock/pylock.hpp"

namespace rootlock::image {

// GOARCH's name for a `uname -m` machine: x86_64 amd64, aarch64 arm64.
std::string oci_architecture(const std::string& machine);

// The spec of the image of `lock` (which must have [tool.rootlock] and outlive the spec: its
// SBOM function reads it), for a root whose /bin/sh is `machine`; `lock_sha256` is the lock
// file's digest (a label), `epoch` its source date.
OciImageSpec oci_spec_of(const pylock::Lock& lock, const std::string& machine,
                         const std::string& lock_sha256, int64_t epoch);

// Each locked wheel's upload time in seconds, clamped to `epoch`; wheels without one are left
// out.
std::map<std::string, int64_t> wheel_dates(const pylock::Lock& lock, int64_t epoch);

}  // namespace rootlock::image
