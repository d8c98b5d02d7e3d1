// The closure check of a final tree: the recipe's LD_LIBRARY_PATH and host-provided sonames, the
// CUDA toolkit and driver, the base tarball's unsafe entries, and the cached torch builds named.
#include "assemble/final_check.hpp"

#include "assemble/cached_builds.hpp"
#include "check/problem.hpp"
#include "gpu/compute_capability.hpp"
#include "loader/dst.hpp"

namespace rootlock::assemble {

namespace {

// What a coverage problem names as the GPU's origin. (A function: GCC 12 warns falsely about a
// literal of this length copied into the aggregate, bug 105651.)
const std::string& recipe_gpus_source() {
    static const std::string source = "the recipe's [cuda] gpus";
    return source;
}

}  // namespace

util::Result<check::CheckReport> check_final_tree(const fs::FileTree& tree,
                                                  const fs::FileTree& base,
                                                  const FinalCheckOptions& final_options) {
    check::CheckOptions options;
    for (const auto& [name, value] : final_options.environment) {
        if (name == "LD_LIBRARY_PATH")
            options.model.ld_library_path = loader::split_path_list(value, true);
    }
    options.model.extra_host_provided = final_options.host_provides;
    options.cuda = final_options.cuda;
    options.driver = final_options.driver;
    for (const auto& text : final_options.gpus) {
        ROOTLOCK_TRY(capability, gpu::parse_compute_capability(text));
        options.gpus.push_back(check::GpuTarget{capability, recipe_gpus_source()});
    }
    options.known_device_code = final_options.base_device_code;
    for (const auto& [path, names] : final_options.device_code) {
        gpu::FatbinSummary summary;
        for (const auto& text : names) {
            ROOTLOCK_TRY(name, gpu::parse_sm_name(text));
            summary.architectures.insert(name);
            (name.ptx ? summary.ptx_sms : summary.cubin_sms).insert(name.capability.sm());
        }
        options.known_device_code.insert_or_assign(path, std::move(summary));
    }
    ROOTLOCK_TRY(report, check::run_check(tree, options));
    for (auto& problem : check::tree_problems(base)) {
        report.problems.push_back(std::move(problem));
        report.ok = false;
    }
    if (!final_options.cache_dir.empty())
        add_cached_builds(final_options.cache_dir, report.problems);
    check::sort_problems(report.problems);
    return std::move(report);
}

}  // namespace rootlock::assemble
