// Loader model set-up for one root: target, cache (read, or simulated as ldconfig would build
// it), host-provided sonames; see root_model.hpp.
#include "loader/root_model.hpp"

#include <cstring>

#include <fmt/format.h>

#include "fs/path_resolve.hpp"
#include "loader/ld_so_cache.hpp"
#include "loader/ldconfig_scan.hpp"

namespace rootlock::loader {

const std::vector<std::string>& default_host_provided() {
    // cuda-stacks.toml [[host_driver_lib]] entries with a known soname.
    static const std::vector<std::string> k_sonames{
        "libcuda.so.1",        "libnvidia-ml.so.1",     "libnvidia-ptxjitcompiler.so.1",
        "libnvidia-nvvm.so.4", "libnvidia-opencl.so.1", "libcudadebugger.so.1",
    };
    return k_sonames;
}

namespace {
CacheLookupTarget lookup_target(const Target& target) {
    CacheLookupTarget lookup;
    lookup.required_flags = target.cache_flags;
    lookup.hwcaps_supported = target.hwcaps;
    return lookup;
}
}  // namespace

util::Result<RootModel> open_root_model(const fs::FileTree& tree, const ModelOptions& options) {
    auto target = detect_target(tree, options.overrides);
    if (!target)
        return target.error();

    RootModel model;
    std::optional<CacheIndex> cache;
    auto cache_file = fs::resolve(tree, "/etc/ld.so.cache");
    if (cache_file && cache_file->stat.kind == fs::NodeKind::regular) {
        auto bytes = tree.read_file(cache_file->path);
        if (!bytes)
            return bytes.error();
        std::span<const std::byte> view(reinterpret_cast<const std::byte*>(bytes->data()),
                                        bytes->size());
        auto parsed = parse_ld_so_cache(view, "/etc/ld.so.cache");
        if (!parsed)
            return parsed.error();
        cache.emplace(std::move(parsed.value()), lookup_target(*target));
    } else if (options.simulate_missing_cache) {
        ScanOptions scan;
        // ldconfig's built-in directories are the loader's trusted ones.
        scan.system_directories = target->default_dirs;
        scan.machine = target->machine;
        auto simulated = simulate_ldconfig(tree, scan);
        if (!simulated)
            return simulated.error();
        cache.emplace(std::move(simulated.value()), lookup_target(*target));
        model.notes.push_back(
            "no /etc/ld.so.cache in the root: modelled the cache ldconfig would build from "
            "/etc/ld.so.conf");
    } else {
        model.notes.push_back(
            "no /etc/ld.so.cache in the root: only the default directories "
            "are searched after RUNPATH");
    }

    LoaderEnvironment environment;
    environment.ld_library_path = options.ld_library_path;
    if (!options.no_default_host_provided) {
        environment.host_provided.insert(default_host_provided().begin(),
                                         default_host_provided().end());
    }
    environment.host_provided.insert(options.extra_host_provided.begin(),
                                     options.extra_host_provided.end());
    model.context = std::make_unique<SearchContext>(tree, std::move(target.value()),
                                                    std::move(environment), std::move(cache));
    return model;
}

}  // namespace rootlock::loader
