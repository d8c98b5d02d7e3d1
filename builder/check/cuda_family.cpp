// The soname table behind cuda_membership(); see cuda_family.hpp.
#include "check/cuda_family.hpp"

#include <array>
#include <charconv>

namespace rootlock::check {

namespace {
struct FamilyRule {
    std::string_view stem;  // soname up to ".so."
    std::string_view family;
    int offset;      // CUDA major = soname major + offset
    int only_major;  // when non-zero, only this soname major is known
};

// Sonames from cuda-wheels.md section 3 (CUDA 12 and 13 wheels).
constexpr std::array<FamilyRule, 12> k_rules{{
    {"libcudart", "cudart", 0, 0},
    {"libcublas", "cublas", 0, 0},
    {"libcublasLt", "cublas", 0, 0},
    {"libnvblas", "cublas", 0, 0},
    {"libnvrtc", "nvrtc", 0, 0},
    {"libnvrtc-builtins", "nvrtc", 0, 0},
    {"libnvrtc.alt", "nvrtc", 0, 0},
    {"libcupti", "cupti", 0, 0},
    {"libnvJitLink", "nvjitlink", 0, 0},
    {"libcufft", "cufft", 1, 0},
    {"libcufftw", "cufft", 1, 0},
    {"libcusolver", "cusolver", 1, 0},
}};
}  // namespace

std::optional<CudaMembership> cuda_membership(std::string_view soname) {
    size_t pos = soname.find(".so.");
    if (pos == std::string_view::npos)
        return std::nullopt;
    std::string_view stem = soname.substr(0, pos);
    std::string_view rest = soname.substr(pos + 4);
    int major = 0;
    auto [end, error] = std::from_chars(rest.data(), rest.data() + rest.size(), major);
    if (error != std::errc() || end == rest.data())
        return std::nullopt;
    for (const auto& rule : k_rules) {
        if (rule.stem != stem)
            continue;
        if (rule.only_major != 0 && rule.only_major != major)
            return std::nullopt;
        return CudaMembership{std::string(rule.family), major + rule.offset};
    }
    // libcusolverMg follows libcusolver.
    if (stem == "libcusolverMg")
        return CudaMembership{"cusolver", major + 1};
    return std::nullopt;
}

}  // namespace rootlock::check
