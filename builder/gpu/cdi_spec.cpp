// CDI spec text to a checked spec (cdi_yaml.cpp reads the YAML, cdi_validate.cpp the fields),
// and what a runtime does with specs: devices picked by name, edits merged, directories ranked.
#include "gpu/cdi_spec.hpp"

#include <algorithm>
#include <cstddef>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpu/cdi_validate.hpp"
#include "gpu/cdi_yaml.hpp"
#include "util/quote.hpp"

// The module is compiled as one unit: these helpers live in a namespace no other file uses.
namespace rootlock::gpu::cdi_load {
namespace {

// The reference's ContainerEdits.Append: lists concatenated, a later intelRdt replacing.
void append_edits(ContainerEdits& into, const ContainerEdits& from) {
    into.env.insert(into.env.end(), from.env.begin(), from.env.end());
    into.device_nodes.insert(into.device_nodes.end(), from.device_nodes.begin(),
                             from.device_nodes.end());
    into.net_devices.insert(into.net_devices.end(), from.net_devices.begin(),
                            from.net_devices.end());
    into.hooks.insert(into.hooks.end(), from.hooks.begin(), from.hooks.end());
    into.mounts.insert(into.mounts.end(), from.mounts.begin(), from.mounts.end());
    if (from.intel_rdt)
        into.intel_rdt = from.intel_rdt;
    into.additional_gids.insert(into.additional_gids.end(), from.additional_gids.begin(),
                                from.additional_gids.end());
}

}  // namespace
}  // namespace rootlock::gpu::cdi_load

namespace rootlock::gpu {

util::Result<CdiSpec> parse_cdi_spec(std::string_view text, std::string_view name) {
    ROOTLOCK_TRY(tree, cdi::load_yaml_tree(text, name));
    return cdi::read_spec_tree(tree, name);
}

std::string qualified_name(const CdiSpec& spec, const CdiDevice& device) {
    return spec.vendor + "/" + spec.cls + "=" + device.name;
}

std::vector<const CdiDevice*> select_devices(const CdiSpec& spec, std::string_view device) {
    std::string_view name = device;
    if (const size_t equals = device.find('='); equals != std::string_view::npos) {
        if (device.substr(0, equals) != spec.kind)
            return {};
        name = device.substr(equals + 1);
    }
    for (const CdiDevice& candidate : spec.devices)
        if (candidate.name == name)
            return {&candidate};
    return {};
}

ContainerEdits edits_for(const CdiSpec& spec, const std::vector<std::string>& device_names) {
    ContainerEdits out;
    bool spec_added = false;
    for (const std::string& name : device_names) {
        for (const CdiDevice* device : select_devices(spec, name)) {
            if (!spec_added) {
                cdi_load::append_edits(out, spec.edits);
                spec_added = true;
            }
            cdi_load::append_edits(out, device->edits);
        }
    }
    return out;
}

const CdiDevice* CdiRegistry::find(std::string_view qualified) const {
    auto found = devices.find(std::string(qualified));
    if (found == devices.end())
        return nullptr;
    return &specs[found->second.spec].spec.devices[found->second.device];
}

CdiRegistry resolve_cdi_specs(std::vector<LoadedSpec> specs) {
    CdiRegistry registry;
    registry.specs = std::move(specs);
    std::stable_sort(
        registry.specs.begin(), registry.specs.end(),
        [](const LoadedSpec& a, const LoadedSpec& b) { return a.priority < b.priority; });
    std::set<std::string> conflicted;
    for (size_t s = 0; s < registry.specs.size(); ++s) {
        const LoadedSpec& loaded = registry.specs[s];
        for (size_t d = 0; d < loaded.spec.devices.size(); ++d) {
            std::string name = qualified_name(loaded.spec, loaded.spec.devices[d]);
            auto [slot, inserted] = registry.devices.try_emplace(name, CdiRegistry::Entry{s, d});
            if (inserted)
                continue;
            const LoadedSpec& other = registry.specs[slot->second.spec];
            if (loaded.priority > other.priority) {
                slot->second = CdiRegistry::Entry{s, d};
            } else if (loaded.priority == other.priority) {
                registry.conflicts.push_back("conflicting device " + util::quote(name) +
                                             " (specs " + util::quote(loaded.path) + ", " +
                                             util::quote(other.path) + ")");
                conflicted.insert(std::move(name));
            }
        }
    }
    for (const std::string& name : conflicted)
        registry.devices.erase(name);
    return registry;
}

util::Result<ContainerEdits> edits_for(const CdiRegistry& registry,
                                       const std::vector<std::string>& qualified_names) {
    ContainerEdits out;
    std::set<size_t> specs_added;
    std::string unresolved;
    for (const std::string& name : qualified_names) {
        auto found = registry.devices.find(name);
        if (found == registry.devices.end()) {
            unresolved += (unresolved.empty() ? "" : ", ") + util::quote(name);
            continue;
        }
        const CdiSpec& spec = registry.specs[found->second.spec].spec;
        if (specs_added.insert(found->second.spec).second)
            cdi_load::append_edits(out, spec.edits);
        cdi_load::append_edits(out, spec.devices[found->second.device].edits);
    }
    if (!unresolved.empty())
        return util::make_error("", "unresolvable CDI devices " + unresolved);
    return out;
}

}  // namespace rootlock::gpu
