// NVIDIA GPU model names (as nvidia-smi and /proc/driver/nvidia/gpus/*/information write them)
// to compute capabilities, from NVIDIA's CUDA GPUs list: the SM a host's GPU needs kernels for.
#pragma once

#include <optional>
#include <span>
#include <string_view>

#include "gpu/compute_capability.hpp"

namespace rootlock::gpu {

// One row of the table: a family pattern and its compute capability. A pattern is lowercase
// words separated by single spaces, '#' standing for any one digit ("rtx 30##", "a100").
struct GpuFamily {
    std::string_view pattern;
    ComputeCapability capability;
};

// The whole table, for tests and listings.
std::span<const GpuFamily> gpu_families();

struct GpuModelMatch {
    ComputeCapability capability;
    std::string_view pattern;       // the row that matched: "rtx 4090 d"
    std::string_view architecture;  // "Ada", see architecture_name
};

// The family row a model name belongs to. The name is lowercased and cut into words at every
// byte that is not a letter or digit ("NVIDIA A100-SXM4-80GB" -> nvidia a100 sxm4 80gb), and a
// pattern matches where its words appear in a row, whole, so "a10" never matches "a100" and
// memory or form-factor words ("80GB", "PCIe", "Laptop GPU") are simply not looked at. Where
// several rows match, the one with the most words wins, then the one with the most literal
// characters: "Quadro RTX 5000" is Turing (quadro rtx ####), not Blackwell (rtx 50##). An unknown
// model, or a name longer than 256 bytes, gives nullopt: the caller says "unknown" plainly.
std::optional<GpuModelMatch> lookup_gpu_model(std::string_view model);

// lookup_gpu_model's capability alone.
std::optional<ComputeCapability> compute_capability_of(std::string_view model);

// The architecture's marketing name: "Kepler" (3.x), "Maxwell" (5.x), "Pascal" (6.x), "Volta"
// (7.0, 7.2), "Turing" (7.5), "Ampere" (8.0, 8.6, 8.7), "Ada" (8.9), "Hopper" (9.0),
// "Blackwell" (10.x, 11.x, 12.x); "" for any other.
std::string_view architecture_name(ComputeCapability capability);

}  // namespace rootlock::gpu
