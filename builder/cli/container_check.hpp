// What `check --host-root` and `pct-config` share: the host probed, the container view built
// over the image, and the check's options set for a container that has the host's driver.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "check/closure_check.hpp"
#include "fs/file_tree.hpp"
#include "host/container_view.hpp"
#include "host/host_facts.hpp"
#include "util/result.hpp"

namespace rootlock::cli {

struct ContainerInput {
    std::string host_root;
    std::vector<std::string> cdi;
    bool run_nvidia_smi = true;
};

struct ContainerCheck {
    host::HostFacts facts;
    host::ContainerView view;
};

// Probes the host and lays its injected files over `image`.
util::Result<ContainerCheck> open_container(std::shared_ptr<const fs::FileTree> image,
                                            const ContainerInput& input);

// The check of a container: the driver's libraries are really there now, so none is assumed
// host-provided; the host's driver is the declared one (unless the user gave --driver); the
// host's GPUs are the coverage targets, beside any --gpu.
void apply_host_to_check(const host::HostFacts& facts, check::CheckOptions& options);

// What only a host can say, added to the report: a host without a driver, and each missing
// soname of the driver's named as one the host does not give.
void add_host_problems(const host::HostFacts& facts, check::CheckReport& report);

}  // namespace rootlock::cli
