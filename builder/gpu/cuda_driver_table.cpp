// NVIDIA's CUDA-to-driver table and the driver verdict; see cuda_driver_table.hpp. The rows are
// the release notes' "CUDA Toolkit and Corresponding Driver Versions", GA of each major.minor.
#include "gpu/cuda_driver_table.hpp"

#include <fmt/format.h>
#include <array>
#include <charconv>

namespace rootlock::gpu {

namespace {

constexpr size_t k_cuda_echo = 40;

// Linux x86_64, the GA release of each toolkit (later updates raised some minimums, e.g. 12.0
// U1 to 525.85.12, but a runtime of the GA's version runs on the GA's driver). 12.x and 13.x:
// gpu-containers.md 4.1; 11.x: the same release notes' table, Table 3.
constexpr auto k_cuda_rows = std::to_array<CudaDriverRow>({
    {{11, 0}, "450.51.05"}, {{11, 1}, "455.23"},    {{11, 2}, "460.27.03"}, {{11, 3}, "465.19.01"},
    {{11, 4}, "470.42.01"}, {{11, 5}, "495.29.05"}, {{11, 6}, "510.39.01"}, {{11, 7}, "515.43.04"},
    {{11, 8}, "520.61.05"}, {{12, 0}, "525.60.13"}, {{12, 1}, "530.30.02"}, {{12, 2}, "535.54.03"},
    {{12, 3}, "545.23.06"}, {{12, 4}, "550.54.14"}, {{12, 5}, "555.42.02"}, {{12, 6}, "560.28.03"},
    {{12, 8}, "570.26"},    {{12, 9}, "575.51.03"}, {{13, 0}, "580.65.06"}, {{13, 1}, "590.44.01"},
    {{13, 2}, "595.45.04"},
});

// Minor-version compatibility (docs.nvidia.com/deploy/cuda-compatibility, gpu-containers.md
// 4.1): every 11.x runs on >= 450.80.02, 12.x on >= 525.60.13, 13.x on >= 580.65.06.
struct MinorVersionFloor {
    int major;
    std::string_view driver;
};
constexpr auto k_cuda_floors = std::to_array<MinorVersionFloor>({
    {11, "450.80.02"},
    {12, "525.60.13"},
    {13, "580.65.06"},
});

// The table's literals are well formed (a unit test parses every one).
DriverRelease cuda_table_release(std::string_view text) {
    auto parsed = parse_driver_release(text);
    return parsed ? std::move(parsed.value()) : DriverRelease{};
}

std::optional<int> cuda_part(std::string_view text) {
    if (text.empty() || text.size() > 4)
        return std::nullopt;
    for (char c : text) {
        if (c < '0' || c > '9')
            return std::nullopt;
    }
    int value = 0;
    std::from_chars(text.data(), text.data() + text.size(), value);  // four digits fit
    return value;
}

// The row for `cuda` exactly, else for a known major the next row of that major (a release
// between two known ones) or its newest.
const CudaDriverRow* exact_cuda_row(CudaVersion cuda) {
    for (const CudaDriverRow& row : k_cuda_rows) {
        if (row.cuda == cuda)
            return &row;
    }
    return nullptr;
}

const CudaDriverRow* assumed_cuda_row(CudaVersion cuda) {
    const CudaDriverRow* newest = nullptr;
    for (const CudaDriverRow& row : k_cuda_rows) {
        if (row.cuda.major != cuda.major)
            continue;
        if (row.cuda > cuda)
            return &row;
        newest = &row;
    }
    return newest;
}

// The verdict against one row, with its message.
DriverVerdict cuda_verdict_against(CudaVersion cuda, const CudaDriverRow& row,
                                   const DriverRelease& driver) {
    DriverVerdict out;
    out.runtime = cuda;
    out.driver = driver;
    out.row = row.cuda;
    out.minimum = cuda_table_release(row.minimum);
    out.floor = minor_version_floor(row.cuda.major);
    const std::string version = row.cuda.text();
    if (driver >= *out.minimum) {
        out.kind = DriverVerdictKind::ok;
        out.message = fmt::format("CUDA {} runs on driver {} ({} needs {} or newer)", version,
                                  driver.text, version, out.minimum->text);
    } else if (out.floor && driver >= *out.floor) {
        out.kind = DriverVerdictKind::minor_version_compat;
        out.message = fmt::format(
            "CUDA {} runs on driver {} only through minor-version compatibility: precompiled "
            "kernels run, PTX newer than the driver cannot be JIT-compiled ({} needs {} for full "
            "support)",
            version, driver.text, version, out.minimum->text);
    } else {
        out.kind = DriverVerdictKind::too_old;
        std::string through;
        if (out.floor && *out.floor < *out.minimum) {
            through =
                fmt::format(" ({} at least, through minor-version compatibility)", out.floor->text);
        }
        out.message = fmt::format("CUDA {} needs {} or newer{}; the driver is {}", version,
                                  out.minimum->text, through, driver.text);
    }
    return out;
}

}  // namespace

std::string CudaVersion::text() const {
    return fmt::format("{}.{}", major, minor);
}

int CudaVersion::number() const {
    return major * 1000 + minor * 10;
}

util::Result<CudaVersion> parse_cuda_version(std::string_view text) {
    auto fail = [&](std::string_view why) {
        return util::make_error("", fmt::format("{} is not a CUDA version such as 12.8: {}",
                                                util::quote_prefix(text, k_cuda_echo), why));
    };
    if (text.empty())
        return fail("it is empty");
    const size_t dot = text.find('.');
    if (dot == std::string_view::npos)
        return fail("it has no minor");
    std::string_view minor_text = text.substr(dot + 1);
    const size_t patch_dot = minor_text.find('.');
    if (patch_dot != std::string_view::npos) {
        if (!cuda_part(minor_text.substr(patch_dot + 1)))
            return fail("the patch is not a number of one to four digits");
        minor_text = minor_text.substr(0, patch_dot);
    }
    const auto major = cuda_part(text.substr(0, dot));
    if (!major || *major == 0)
        return fail("the major is not a number from 1 to 9999");
    const auto minor = cuda_part(minor_text);
    if (!minor)
        return fail("the minor is not a number of one to four digits");
    return CudaVersion{*major, *minor};
}

CudaVersion cuda_version_from_number(int number) {
    if (number < 0)
        return {};
    return CudaVersion{number / 1000, number % 1000 / 10};
}

std::span<const CudaDriverRow> cuda_driver_rows() {
    return k_cuda_rows;
}

std::optional<DriverRelease> minimum_driver(CudaVersion cuda) {
    const CudaDriverRow* row = exact_cuda_row(cuda);
    if (row == nullptr)
        return std::nullopt;
    return cuda_table_release(row->minimum);
}

std::optional<DriverRelease> minor_version_floor(int cuda_major) {
    for (const MinorVersionFloor& floor : k_cuda_floors) {
        if (floor.major == cuda_major)
            return cuda_table_release(floor.driver);
    }
    return std::nullopt;
}

std::optional<CudaVersion> max_cuda_for_driver(const DriverRelease& driver) {
    std::optional<CudaVersion> newest;
    for (const CudaDriverRow& row : k_cuda_rows) {
        if (driver >= cuda_table_release(row.minimum))
            newest = row.cuda;
    }
    return newest;
}

DriverVerdict judge_driver(CudaVersion runtime, const DriverRelease& driver) {
    if (const CudaDriverRow* row = exact_cuda_row(runtime))
        return cuda_verdict_against(runtime, *row, driver);
    const CudaDriverRow* row = assumed_cuda_row(runtime);
    if (row == nullptr) {
        DriverVerdict out;
        out.runtime = runtime;
        out.driver = driver;
        out.message = fmt::format(
            "CUDA {} is not in the table ({} to {}): the driver it needs is unknown; the driver "
            "is {}",
            runtime.text(), k_cuda_rows.front().cuda.text(), k_cuda_rows.back().cuda.text(),
            driver.text);
        return out;
    }
    DriverVerdict out = cuda_verdict_against(runtime, *row, driver);
    out.assumed = out.kind;
    out.kind = DriverVerdictKind::unknown_cuda;
    const std::string_view which = row->cuda > runtime ? "the next" : "the newest";
    out.message =
        fmt::format("CUDA {} is not in the table; judged as {}, {} CUDA {} release in it: {}",
                    runtime.text(), row->cuda.text(), which, runtime.major, out.message);
    return out;
}

}  // namespace rootlock::gpu
