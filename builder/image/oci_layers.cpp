// The layer plan of an OCI image; see oci_layers.hpp.
#include "image/oci_layers.hpp"

#include <map>
#include <optional>
#include <set>

namespace rootlock::image {

namespace {

std::string parent_of(const std::string& path) {
    const size_t slash = path.rfind('/');
    if (slash == std::string::npos || slash == 0)
        return "/";
    return path.substr(0, slash);
}

bool is_under(const std::string& path, const std::string& directory) {
    return path.size() > directory.size() && path.compare(0, directory.size(), directory) == 0 &&
           path[directory.size()] == '/';
}

// The layers as slots in their final order: the base, one per big nvidia-* wheel (by name),
// then the shared nvidia, torch, venv and recipe layers.
struct Slots {
    std::vector<std::string> own;  // the big nvidia-* wheels, sorted

    size_t count() const { return own.size() + 5; }
    size_t of_kind(LayerKind kind) const {
        return kind == LayerKind::base ? 0 : own.size() + static_cast<size_t>(kind);
    }
    LayerKind kind_of(size_t slot) const {
        if (slot == 0)
            return LayerKind::base;
        return slot <= own.size() ? LayerKind::nvidia : static_cast<LayerKind>(slot - own.size());
    }
    size_t of_wheel(const std::string& wheel) const {
        for (size_t i = 0; i < own.size(); ++i)
            if (own[i] == wheel)
                return i + 1;
        return of_kind(layer_of_wheel(wheel));
    }
};

}  // namespace

const char* layer_comment(LayerKind kind) {
    switch (kind) {
        case LayerKind::base:
            return "rootlock: the base";
        case LayerKind::nvidia:
            return "rootlock: the nvidia-* wheels";
        case LayerKind::torch:
            return "rootlock: torch and triton";
        case LayerKind::venv:
            return "rootlock: the rest of the venv";
        case LayerKind::recipe:
            return "rootlock: the recipe's files";
    }
    return "rootlock";
}

std::string layer_comment(const LayerPlan& plan) {
    if (!plan.wheel.empty())
        return "rootlock: the wheel " + plan.wheel;
    return layer_comment(plan.kind);
}

LayerKind layer_of_wheel(const std::string& distribution) {
    if (distribution.rfind("nvidia-", 0) == 0)
        return LayerKind::nvidia;
    if (distribution == "torch" || distribution == "triton" ||
        distribution.rfind("pytorch-triton", 0) == 0)
        return LayerKind::torch;
    return LayerKind::venv;
}

std::vector<LayerPlan> plan_layers(const std::vector<LayerInput>& inputs,
                                   const LayerPlanOptions& options) {
    std::map<std::string, uint64_t> nvidia_bytes;
    for (const auto& input : inputs)
        if (!input.directory && layer_of_wheel(input.wheel) == LayerKind::nvidia)
            nvidia_bytes[input.wheel] += input.size;
    Slots slots;
    for (const auto& [wheel, bytes] : nvidia_bytes)
        if (bytes > options.own_layer_bytes)
            slots.own.push_back(wheel);  // the map's order: by name

    // The layer of each directory that holds wheel files: one layer; the shared layer of their
    // kind when wheels of one kind in several layers share it (site-packages/nvidia); none when
    // wheels of several kinds do (site-packages itself, bin/).
    std::map<std::string, std::optional<size_t>> directory_slot;
    for (const auto& input : inputs) {
        if (input.wheel.empty() || input.directory)
            continue;
        const size_t slot = slots.of_wheel(input.wheel);
        auto [found, inserted] = directory_slot.emplace(parent_of(input.path), slot);
        if (inserted || found->second == slot || !found->second)
            continue;
        const LayerKind kind = layer_of_wheel(input.wheel);
        found->second = slots.kind_of(*found->second) == kind
                            ? std::optional<size_t>(slots.of_kind(kind))
                            : std::nullopt;
    }
    auto slot_of = [&](const LayerInput& input) {
        if (input.from_base)
            return slots.of_kind(LayerKind::base);
        if (!input.wheel.empty())
            return slots.of_wheel(input.wheel);
        // A file rootlock made goes with the wheel files nearest above it.
        for (std::string at = input.directory ? input.path : parent_of(input.path);;
             at = parent_of(at)) {
            auto found = directory_slot.find(at);
            if (found != directory_slot.end()) {
                if (found->second)
                    return *found->second;
                break;
            }
            if (at == "/")
                break;
        }
        return slots.of_kind(input.path == options.venv || is_under(input.path, options.venv)
                                 ? LayerKind::venv
                                 : LayerKind::recipe);
    };

    std::map<std::string, size_t> index_of;  // directories only
    for (size_t i = 0; i < inputs.size(); ++i)
        if (inputs[i].directory)
            index_of.emplace(inputs[i].path, i);
    std::vector<std::set<size_t>> members(slots.count());
    std::vector<std::set<std::string>> wheels(slots.count());
    for (size_t i = 0; i < inputs.size(); ++i) {
        const size_t slot = slot_of(inputs[i]);
        members[slot].insert(i);
        if (!inputs[i].wheel.empty())
            wheels[slot].insert(inputs[i].wheel);
        for (std::string at = inputs[i].path; at != "/";) {
            at = parent_of(at);
            auto found = index_of.find(at);
            if (found != index_of.end())
                members[slot].insert(found->second);
        }
    }
    std::vector<LayerPlan> plans;
    for (size_t slot = 0; slot < slots.count(); ++slot) {
        if (members[slot].empty())
            continue;
        const bool own = slot >= 1 && slot <= slots.own.size();
        plans.push_back(LayerPlan{slots.kind_of(slot),
                                  own ? slots.own[slot - 1] : std::string(),
                                  {wheels[slot].begin(), wheels[slot].end()},
                                  {members[slot].begin(), members[slot].end()}});
    }
    return plans;
}

}  // namespace rootlock::image
