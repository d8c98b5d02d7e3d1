// Which OCI layer each entry of an image goes to: layers split by how often they change, in a
// fixed order, so that a new lock ships only what changed. The base (from the Debian or tarball
// base) changes least; then the nvidia-* wheels (largest and most stable), torch and triton, the
// rest of the venv, and last the recipe's own files. A file rootlock writes for a wheel (its
// bytecode, a rewritten RECORD) goes with that wheel: it changes when the wheel does.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace rootlock::image {

enum class LayerKind { base, nvidia, torch, venv, recipe };
inline constexpr size_t k_layer_kinds = 5;

const char* layer_comment(LayerKind kind);  // "rootlock: the base", ...

// One entry as the plan sees it. Entries come in component order.
struct LayerInput {
    std::string path;
    bool directory = false;
    bool from_base = false;  // a member of the base
    std::string wheel;       // the normalised distribution name of the wheel it comes from, or ""
};

struct LayerPlan {
    LayerKind kind;
    // Indices into the inputs, ascending (so in component order): the layer's own entries and
    // the directories above them (each also where it belongs), so that every layer is a valid
    // tree alone. Layers with no entry of their own are left out.
    std::vector<size_t> entries;
};

// `venv` is the venv's path in the image ("/opt/venv"): what is under it and comes from no
// wheel goes to the venv layer unless a wheel's files share its directory.
std::vector<LayerPlan> plan_layers(const std::vector<LayerInput>& inputs, const std::string& venv);

// nvidia-*: nvidia; torch, triton, pytorch-triton*: torch; any other wheel: venv.
LayerKind layer_of_wheel(const std::string& distribution);

}  // namespace rootlock::image
