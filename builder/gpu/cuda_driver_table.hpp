// The oldest NVIDIA driver each CUDA toolkit release runs on (Linux x86_64), the minor-version
// compatibility floors, and the verdict on a runtime against a host's driver
// (gpu-containers.md 4.1).
#pragma once

#include <compare>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "gpu/driver_files.hpp"
#include "util/result.hpp"

namespace rootlock::gpu {

// A CUDA release as major.minor: what cudaRuntimeGetVersion and cudaDriverGetVersion report as
// 1000 * major + 10 * minor (12080 is 12.8).
struct CudaVersion {
    int major = 0;
    int minor = 0;

    auto operator<=>(const CudaVersion&) const = default;
    std::string text() const;  // "12.8"
    int number() const;        // 12080
};

// "12.8" or "12.8.1" (the patch is dropped): decimal numbers of at most four digits each.
util::Result<CudaVersion> parse_cuda_version(std::string_view text);

// 12080 -> 12.8, 13000 -> 13.0 (the units digit, a patch level, is dropped). `number` >= 0.
CudaVersion cuda_version_from_number(int number);

// One row of NVIDIA's table: the toolkit's GA release and the driver it needs.
struct CudaDriverRow {
    CudaVersion cuda;
    std::string_view minimum;  // "570.26"
};

// Every row, oldest CUDA first (11.0 to 13.2; there is no 12.7).
std::span<const CudaDriverRow> cuda_driver_rows();

// The driver a CUDA release needs for full support, for releases in the table only.
std::optional<DriverRelease> minimum_driver(CudaVersion cuda);

// The oldest driver any release of a CUDA major runs on through minor-version compatibility:
// 11 -> 450.80.02, 12 -> 525.60.13, 13 -> 580.65.06; nullopt for other majors.
std::optional<DriverRelease> minor_version_floor(int cuda_major);

// The newest CUDA in the table that `driver` fully supports; nullopt when it is older than 11.0's.
std::optional<CudaVersion> max_cuda_for_driver(const DriverRelease& driver);

enum class DriverVerdictKind {
    ok,                    // driver >= the release's minimum
    minor_version_compat,  // below it, at or above the major's floor: a warning
    too_old,               // below the floor: CUDA cannot initialise (cudaErrorInsufficientDriver)
    unknown_cuda,          // the release is not in the table
};

struct DriverVerdict {
    DriverVerdictKind kind = DriverVerdictKind::unknown_cuda;
    CudaVersion runtime;
    DriverRelease driver;
    // The row judged by: the runtime's own, or for unknown_cuda of a known major the row assumed
    // (the next release of that major in the table, else its newest); nullopt when none applies.
    std::optional<CudaVersion> row;
    std::optional<DriverRelease> minimum;  // the row's minimum driver
    std::optional<DriverRelease> floor;    // the major's minor-version compatibility floor
    // For unknown_cuda judged by an assumed row: the verdict against it (ok, minor_version_compat
    // or too_old); nullopt otherwise.
    std::optional<DriverVerdictKind> assumed;
    std::string message;  // one line naming both numbers
};

// The runtime's release against the host's driver. Minor-version compatibility lets a driver
// below the release's minimum but at or above its major's floor run precompiled kernels; PTX
// newer than the driver cannot be JIT-compiled there, and newer APIs are missing (4.1).
DriverVerdict judge_driver(CudaVersion runtime, const DriverRelease& driver);

}  // namespace rootlock::gpu
