// The CUDA major a library belongs to, read from its soname: libcudart.so.12 is CUDA 12, but
// libcufft.so.11 is CUDA 12 and libcufft.so.12 is CUDA 13 (cuda-wheels.md section 3). Sonames
// whose major is the same under two CUDA majors (libcusparse.so.12, libcurand.so.10) say nothing.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace rootlock::check {

struct CudaMembership {
    std::string family;  // "cudart", "cublas", "nvrtc", ...
    int cuda_major = 0;
};

std::optional<CudaMembership> cuda_membership(std::string_view soname);

}  // namespace rootlock::check
