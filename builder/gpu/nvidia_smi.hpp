// nvidia-smi's CSV answer to the one query rootlock asks (gpu-containers.md 4.3): each GPU's
// index, UUID, name, PCI bus, compute capability and driver release, one line per GPU.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpu/compute_capability.hpp"
#include "gpu/driver_files.hpp"
#include "util/result.hpp"

namespace rootlock::gpu {

// The fields asked for, in the order parse_nvidia_smi expects them. An nvidia-smi too old to know
// compute_cap refuses the whole query (it is unsure from which driver on it knows it: about 510).
inline constexpr std::string_view k_nvidia_smi_query_fields =
    "index,uuid,name,pci.bus_id,compute_cap,driver_version";

// The arguments to run nvidia-smi with, exactly: the query above, CSV without a header line.
inline constexpr std::array<std::string_view, 2> k_nvidia_smi_arguments = {
    "--query-gpu=index,uuid,name,pci.bus_id,compute_cap,driver_version", "--format=csv,noheader"};

struct SmiGpu {
    int index = 0;
    std::string uuid;                              // "GPU-6cf00fa7-1a3b-4b2c-9d8e-0123456789ab"
    std::string name;                              // "NVIDIA GeForce RTX 3090"
    PciAddress bus;                                // from "00000000:01:00.0"
    std::string bus_text;                          // as nvidia-smi wrote it
    std::optional<ComputeCapability> compute_cap;  // nullopt for "[N/A]" and the like
    DriverRelease driver;
};

// One GPU a line, fields separated by ", ", trailing blanks and a '\r' allowed. The output
// nvidia-smi prints when it finds no GPU ("No devices were found") is an error naming that, as
// is an empty text: a caller that ran the query expects at least one GPU.
util::Result<std::vector<SmiGpu>> parse_nvidia_smi(std::string_view text, std::string_view name);

// True when both name the same PCI function, whatever the domain's width or the letters' case:
// "00000000:01:00.0" (nvidia-smi) and "0000:01:00.0" (/proc). False when either is no address.
bool same_pci_bus(std::string_view a, std::string_view b);

}  // namespace rootlock::gpu
