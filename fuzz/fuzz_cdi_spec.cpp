// A Container Device Interface spec (YAML or JSON), then what a runtime does with it: devices
// selected by name, their edits merged, the spec ranked against a copy of itself.
#include <string>
#include <vector>

#include "fuzz_common.hpp"
#include "gpu/cdi_spec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace rootlock;
    auto spec = gpu::parse_cdi_spec(fuzz::as_text(data, size), "nvidia.yaml");
    if (!fuzz::check(spec))
        return 0;

    std::vector<std::string> names;
    size_t env = spec->edits.env.size(), mounts = spec->edits.mounts.size();
    for (const gpu::CdiDevice& device : spec->devices) {
        const std::string qualified = gpu::qualified_name(*spec, device);
        auto selected = gpu::select_devices(*spec, qualified);
        if (selected.size() != 1 || selected[0] != &device)
            fuzz::fail("a device is not selected by its qualified name:", qualified);
        if (gpu::select_devices(*spec, device.name) != selected)
            fuzz::fail("a device's bare name selects another:", device.name);
        if (device.edits == gpu::ContainerEdits{})
            fuzz::fail("a device without edits was accepted:", device.name);
        names.push_back(qualified);
        env += device.edits.env.size();
        mounts += device.edits.mounts.size();
    }
    const gpu::ContainerEdits merged = gpu::edits_for(*spec, names);
    if (merged.env.size() != env || merged.mounts.size() != mounts)
        fuzz::fail("merged edits lost or gained entries");

    // The same spec in /etc/cdi and /var/run/cdi: the later wins, nothing conflicts. Twice in
    // one directory: every device conflicts and none is left.
    auto ranked =
        gpu::resolve_cdi_specs({{"/etc/cdi/a.yaml", 0, *spec}, {"/run/b.yaml", 1, *spec}});
    if (!ranked.conflicts.empty() || ranked.devices.size() != spec->devices.size())
        fuzz::fail("a higher directory's spec did not replace a lower one's");
    if (!fuzz::check(gpu::edits_for(ranked, names)))
        fuzz::fail("a registered device is unresolvable");
    auto clashing =
        gpu::resolve_cdi_specs({{"/etc/cdi/a.yaml", 0, *spec}, {"/etc/cdi/b.yaml", 0, *spec}});
    if (!clashing.devices.empty() || clashing.conflicts.size() != spec->devices.size())
        fuzz::fail("two equal definitions did not conflict");
    for (const std::string& conflict : clashing.conflicts)
        if (!util::is_one_line(conflict))
            fuzz::fail("a conflict is not one printable line:", util::printable(conflict));
    fuzz::check(gpu::edits_for(clashing, names));
    return 0;
}
