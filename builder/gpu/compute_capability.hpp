// A GPU's compute capability ("8.6", sm_86) and the nvcc architecture names built on it: the one
// number the driver tables, the fatbin reader and the SM coverage check all speak in.
#pragma once

#include <compare>
#include <string>
#include <string_view>

#include "util/result.hpp"

namespace rootlock::gpu {

// MAJOR.MINOR; the minor is one digit, so that sm() is the number nvcc's names carry
// (gpu-containers.md 5.2: the fatbin entry's SM arch is 75, 86, 100, 120).
struct ComputeCapability {
    int major = 0;
    int minor = 0;

    auto operator<=>(const ComputeCapability&) const = default;
    std::string text() const;  // "8.6"
    int sm() const;            // 86
};

// "8.6", "12.0": a major of one or two digits without a leading zero (1 to 99), a dot and a
// one-digit minor; nothing else (no blanks, no "sm_86", no "86").
util::Result<ComputeCapability> parse_compute_capability(std::string_view text);

// 86 -> 8.6, 100 -> 10.0, 120 -> 12.0, 121 -> 12.1: the last digit is the minor. `sm` >= 0.
ComputeCapability from_sm(int sm);

// What follows the number in an nvcc architecture name (CUDA 12.0+ `a`, 12.9+ `f`): an `a`
// target runs only on that exact capability, an `f` one on the family (same major, minor at
// least this one) (gpu-containers.md 5.2, run rule).
enum class SmVariant { plain, arch_specific, family };

// An nvcc architecture name: "sm_86" (SASS for 8.6), "compute_90a" (PTX for 9.0, arch-specific),
// "sm_100f" (SASS for the 10.x family).
struct SmName {
    ComputeCapability capability;
    SmVariant variant = SmVariant::plain;
    bool ptx = false;  // compute_XY (a virtual architecture) rather than sm_XY

    auto operator<=>(const SmName&) const = default;
    std::string text() const;  // written back: "sm_90a"
};

// "sm_86", "sm_90a", "sm_100f", "sm_120", "compute_75": the prefix in lowercase, a number of two
// or three digits (10 to 999, no leading zero) and at most one suffix letter, `a` or `f`.
util::Result<SmName> parse_sm_name(std::string_view text);

}  // namespace rootlock::gpu
