// The driver gate by release, not only by branch: the CUDA runtime versions in the closure (a
// libcudart's file name, else its wheel's version) against NVIDIA's minimum-driver table and
// minor-version compatibility (gpu-containers.md 4.1).
#pragma once

#include <string>
#include <vector>

#include "check/cuda_rules.hpp"
#include "check/problem.hpp"
#include "fs/file_tree.hpp"
#include "gpu/cuda_driver_table.hpp"

namespace rootlock::check {

struct CudaRuntimeFound {
    gpu::CudaVersion version;
    std::string library;  // the libcudart that says so (canonical path)
    std::string from;     // "file name" or the dist-info directory
};

// The runtime version of each libcudart among the libraries of `majors`: "libcudart.so.12.8.90"
// says 12.8; a wheel's "libcudart.so.12" says it through the nvidia-cuda-runtime dist-info of
// its site-packages. Libraries neither says are left out.
std::vector<CudaRuntimeFound> find_cuda_runtimes(const fs::FileTree& tree,
                                                 const CudaMajors& majors);

// For a full driver release: `driver-too-old` for a runtime below its major's floor that the
// branch rule let through (13.0 on 580.10), naming "CUDA 13.0 needs 580.65.06 or newer", and
// `driver-minor-version-compat` (warning) for one that runs only through minor-version
// compatibility. A branch alone ("580") says nothing here.
std::vector<Problem> driver_gate_problems(const std::vector<CudaRuntimeFound>& runtimes,
                                          const DriverVersion& driver,
                                          const std::vector<Problem>& already);

}  // namespace rootlock::check
