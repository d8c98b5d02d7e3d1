// CUDA's rules for whether an object's device code runs on one GPU: a cubin it can load as is,
// PTX the driver JIT-compiles at first use, or nothing ("no kernel image is available").
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "gpu/compute_capability.hpp"
#include "gpu/fatbin.hpp"

namespace rootlock::gpu {

enum class Coverage {
    cubin,    // SASS for this GPU: loads as is
    ptx_jit,  // no such cubin, but PTX the driver compiles at first use (a delay, and a driver
              // that must know the PTX ISA version): a warning
    none,     // cudaErrorNoKernelImageForDevice (209) at the first kernel: an error
};

struct CoverageVerdict {
    Coverage coverage = Coverage::none;
    std::optional<SmName> decided_by;  // the cubin or PTX the driver would take
    std::optional<size_t> entry;       // its first entry in FatbinSummary::entries
    std::string message;               // one line, for a report
};

// Whether code built for `name` runs on a GPU of capability `gpu` (gpu-containers.md 5.2; NVIDIA's
// family-specific features: compute_100f is for 10.0 and 10.3, compute_120f for 12.0 and 12.1).
// A cubin: same major, its minor at most the GPU's; an `a` cubin only on that exact capability;
// an `f` cubin as a plain one (its family is the major). PTX: any GPU of at least its capability;
// `a` PTX only on that exact capability; `f` PTX only within its family (same major, minor at
// least its own).
bool runs_on(const SmName& name, ComputeCapability gpu);

// The verdict for one GPU: the highest usable cubin (an `a` or `f` cubin before a plain one of the
// same number: it was built for more of the GPU), else the highest usable PTX, else none.
// Relocatable code (__nv_relfatbin) is not loaded at run time and never counts.
CoverageVerdict cover(const FatbinSummary& summary, ComputeCapability gpu);

}  // namespace rootlock::gpu
