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

LayerKind layer_of_wheel(const std::string& distribution) {
    if (distribution.rfind("nvidia-", 0) == 0)
        return LayerKind::nvidia;
    if (distribution == "torch" || distribution == "triton" ||
        distribution.rfind("pytorch-triton", 0) == 0)
        return LayerKind::torch;
    return LayerKind::venv;
}

std::vector<LayerPlan> plan_layers(const std::vector<LayerInput>& inputs, const std::string& venv) {
    // The layer of each directory that holds wheel files: one wheel kind, or none when wheels of
    // several kinds share it (site-packages itself, bin/).
    std::map<std::string, std::optional<LayerKind>> directory_kind;
    for (const auto& input : inputs) {
        if (input.wheel.empty() || input.directory)
            continue;
        const LayerKind kind = layer_of_wheel(input.wheel);
        auto [found, inserted] = directory_kind.emplace(parent_of(input.path), kind);
        if (!inserted && found->second != kind)
            found->second = std::nullopt;
    }
    auto kind_of = [&](const LayerInput& input) {
        if (input.from_base)
            return LayerKind::base;
        if (!input.wheel.empty())
            return layer_of_wheel(input.wheel);
        // A file rootlock made goes with the wheel files nearest above it.
        for (std::string at = input.directory ? input.path : parent_of(input.path);;
             at = parent_of(at)) {
            auto found = directory_kind.find(at);
            if (found != directory_kind.end()) {
                if (found->second)
                    return *found->second;
                break;
            }
            if (at == "/")
                break;
        }
        return input.path == venv || is_under(input.path, venv) ? LayerKind::venv
                                                                : LayerKind::recipe;
    };

    std::map<std::string, size_t> index_of;  // directories only
    for (size_t i = 0; i < inputs.size(); ++i)
        if (inputs[i].directory)
            index_of.emplace(inputs[i].path, i);
    std::vector<std::set<size_t>> members(k_layer_kinds);
    for (size_t i = 0; i < inputs.size(); ++i) {
        const auto layer = static_cast<size_t>(kind_of(inputs[i]));
        members[layer].insert(i);
        for (std::string at = inputs[i].path; at != "/";) {
            at = parent_of(at);
            auto found = index_of.find(at);
            if (found != index_of.end())
                members[layer].insert(found->second);
        }
    }
    std::vector<LayerPlan> plans;
    for (size_t layer = 0; layer < k_layer_kinds; ++layer) {
        if (members[layer].empty())
            continue;
        plans.push_back(LayerPlan{static_cast<LayerKind>(layer),
                                  {members[layer].begin(), members[layer].end()}});
    }
    return plans;
}

}  // namespace rootlock::image
