// Which OCI layer each entry of an image goes to: layers split by how often they change, in a
// fixed order, so that a new lock ships only what changed. The base (from the Debian or tarball
// base) changes least; then the nvidia-* wheels (largest and most stable: the biggest, cuDNN,
// cuBLAS, NCCL, each in a layer of its own), torch and triton, the rest of the venv, and last
// the recipe's own files. A file rootlock writes for a wheel (its bytecode, a rewritten RECORD)
// goes with that wheel: it changes when the wheel does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace rootlock::image {

enum class LayerKind { base, nvidia, torch, venv, recipe };

// An nvidia-* wheel whose installed files add up to more than this gets a layer of its own:
// cuDNN (about 1 GiB installed), cuBLAS, NCCL, cuSPARSE, cuFFT do; a new cuDNN then ships
// alone rather than with every other CUDA library, and a registry pulls the big layers in
// parallel.
inline constexpr uint64_t k_own_layer_bytes = uint64_t{256} << 20;

// One entry as the plan sees it. Entries come in component order.
struct LayerInput {
    std::string path;
    bool directory = false;
    bool from_base = false;  // a member of the base
    std::string wheel;       // the normalised distribution name of the wheel it comes from, or ""
    uint64_t size = 0;       // a regular file's bytes (what counts towards a wheel's size)
};

struct LayerPlanOptions {
    // The venv's path in the image ("/opt/venv"): what is under it and comes from no wheel goes
    // to the venv layer unless a wheel's files share its directory.
    std::string venv = "/opt/venv";
    uint64_t own_layer_bytes = k_own_layer_bytes;  // see k_own_layer_bytes
};

struct LayerPlan {
    LayerKind kind;
    std::string wheel;  // an nvidia-* wheel in a layer of its own; "" for a shared layer
    // The wheels whose files this layer holds, sorted (what dates the layer).
    std::vector<std::string> wheels;
    // Indices into the inputs, ascending (so in component order): the layer's own entries and
    // the directories above them (each also where it belongs), so that every layer is a valid
    // tree alone. Layers with no entry of their own are left out.
    std::vector<size_t> entries;
};

// The layers in order: the base, each big nvidia-* wheel by name, the other nvidia-* wheels,
// torch and triton, the rest of the venv, the recipe's files.
std::vector<LayerPlan> plan_layers(const std::vector<LayerInput>& inputs,
                                   const LayerPlanOptions& options);

// The history entry of a layer: "rootlock: the base", "rootlock: the wheel nvidia-cudnn-cu12".
std::string layer_comment(const LayerPlan& plan);
const char* layer_comment(LayerKind kind);  // a shared layer's: "rootlock: the base", ...

// nvidia-*: nvidia; torch, triton, pytorch-triton*: torch; any other wheel: venv.
LayerKind layer_of_wheel(const std::string& distribution);

}  // namespace rootlock::image
