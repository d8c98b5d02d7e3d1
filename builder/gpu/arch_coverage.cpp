// CUDA's cubin and PTX run rules applied to a fatbin summary for one compute capability; see
// arch_coverage.hpp. The names each verdict gives are nvcc's, so a report reads like a -gencode.
#include "gpu/arch_coverage.hpp"

#include <fmt/format.h>

namespace rootlock::gpu {

namespace {

// More specific variants first when the numbers tie: sm_90a before sm_90.
int coverage_specificity(SmVariant variant) {
    switch (variant) {
        case SmVariant::arch_specific:
            return 2;
        case SmVariant::family:
            return 1;
        case SmVariant::plain:
            break;
    }
    return 0;
}

bool coverage_better(const SmName& candidate, const std::optional<SmName>& best) {
    if (!best)
        return true;
    if (candidate.capability != best->capability)
        return candidate.capability > best->capability;
    return coverage_specificity(candidate.variant) > coverage_specificity(best->variant);
}

// "sm_75, sm_80, compute_90": what an object holds, for the message of a `none` verdict.
std::string coverage_listing(const FatbinSummary& summary) {
    std::string out;
    for (const SmName& name : summary.architectures) {
        if (!out.empty())
            out += ", ";
        out += name.text();
    }
    if (!out.empty())
        return out;
    if (summary.relocatable && summary.relocatable->entries > 0)
        return "only relocatable device code (__nv_relfatbin), which is not loaded as is";
    return "no PTX or cubin entries";
}

}  // namespace

bool runs_on(const SmName& name, ComputeCapability gpu) {
    const ComputeCapability built = name.capability;
    if (name.variant == SmVariant::arch_specific)
        return built == gpu;
    if (name.ptx && name.variant == SmVariant::plain)
        return built <= gpu;
    // A cubin of any variant, or family PTX: within the major, up from its minor.
    return built.major == gpu.major && built.minor <= gpu.minor;
}

CoverageVerdict cover(const FatbinSummary& summary, ComputeCapability gpu) {
    CoverageVerdict verdict;
    std::optional<SmName> cubin;
    std::optional<SmName> ptx;
    for (const SmName& name : summary.architectures) {
        if (!runs_on(name, gpu))
            continue;
        std::optional<SmName>& best = name.ptx ? ptx : cubin;
        if (coverage_better(name, best))
            best = name;
    }
    if (cubin) {
        verdict.coverage = Coverage::cubin;
        verdict.decided_by = cubin;
        verdict.message =
            fmt::format("{} runs on compute capability {}", cubin->text(), gpu.text());
    } else if (ptx) {
        verdict.coverage = Coverage::ptx_jit;
        verdict.decided_by = ptx;
        verdict.message = fmt::format(
            "no cubin for compute capability {}: the driver JIT-compiles {} at first use",
            gpu.text(), ptx->text());
    } else {
        verdict.message = fmt::format(
            "no kernel image is available for execution on the device (compute capability {}; "
            "the object holds {})",
            gpu.text(), coverage_listing(summary));
        return verdict;
    }
    for (size_t i = 0; i < summary.entries.size(); ++i) {
        const FatbinEntry& entry = summary.entries[i];
        if (entry.kind != FatbinKind::other && entry.name() == *verdict.decided_by) {
            verdict.entry = i;
            break;
        }
    }
    return verdict;
}

}  // namespace rootlock::gpu
