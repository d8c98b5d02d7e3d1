// find_cuda_runtimes and driver_gate_problems: the runtime's major.minor from what the tree says
// of it, judged by gpu/cuda_driver_table, one problem per runtime version.
#include "check/driver_gate.hpp"

#include <algorithm>

#include "fs/path_resolve.hpp"

namespace rootlock::check {

namespace {

// "libcudart.so.12.8.90" -> 12.8.
std::optional<gpu::CudaVersion> version_in_name(std::string_view name) {
    constexpr std::string_view prefix = "libcudart.so.";
    if (!name.starts_with(prefix))
        return std::nullopt;
    std::string_view rest = name.substr(prefix.size());
    if (rest.find('.') == std::string_view::npos)
        return std::nullopt;
    auto version = gpu::parse_cuda_version(rest);
    if (!version)
        return std::nullopt;
    return *version;
}

// The nvidia-cuda-runtime(-cuNN) dist-info of the site-packages holding `library`
// (SITE/nvidia/cuda_runtime/lib/libcudart.so.12, SITE/nvidia/cu13/lib/libcudart.so.13) whose
// version is of the library's CUDA `major`.
std::optional<std::pair<gpu::CudaVersion, std::string>> version_of_wheel(const fs::FileTree& tree,
                                                                         const std::string& library,
                                                                         int major) {
    std::string dir = fs::dirname(library);
    for (int up = 0; up < 4 && dir != "/"; ++up, dir = fs::dirname(dir)) {
        if (fs::basename(dir) != "nvidia")
            continue;
        const std::string site = fs::dirname(dir);
        auto listing = tree.list(site);
        if (!listing)
            return std::nullopt;
        for (const auto& entry : *listing) {
            const std::string& name = entry.name;
            if (!name.ends_with(".dist-info"))
                continue;
            for (std::string_view stem : {"nvidia_cuda_runtime_cu12-", "nvidia_cuda_runtime_cu13-",
                                          "nvidia_cuda_runtime_cu11-", "nvidia_cuda_runtime-"}) {
                if (!name.starts_with(stem))
                    continue;
                std::string version = name.substr(stem.size(), name.size() - stem.size() - 10);
                // A cu12 and a cu13 runtime side by side: each library gets its own major's.
                auto parsed = gpu::parse_cuda_version(version);
                if (parsed && parsed->major == major)
                    return std::make_pair(*parsed, fs::join_path(site, name));
            }
        }
        return std::nullopt;
    }
    return std::nullopt;
}

}  // namespace

std::vector<CudaRuntimeFound> find_cuda_runtimes(const fs::FileTree& tree,
                                                 const CudaMajors& majors) {
    std::vector<CudaRuntimeFound> found;
    for (const auto& [major, libraries] : majors) {
        for (const auto& library : libraries) {
            if (!fs::basename(library).starts_with("libcudart.so"))
                continue;
            auto resolved = fs::resolve(tree, library);
            const std::string file = resolved ? resolved->path : library;
            if (auto version = version_in_name(fs::basename(file))) {
                found.push_back(CudaRuntimeFound{*version, library, "file name"});
            } else if (auto wheel = version_of_wheel(tree, file, major)) {
                found.push_back(CudaRuntimeFound{wheel->first, library, wheel->second});
            }
        }
    }
    std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) {
        return std::tie(a.version, a.library) < std::tie(b.version, b.library);
    });
    return found;
}

std::vector<Problem> driver_gate_problems(const std::vector<CudaRuntimeFound>& runtimes,
                                          const DriverVersion& driver,
                                          const std::vector<Problem>& already) {
    std::vector<Problem> out;
    if (!driver.full() || runtimes.empty())
        return out;
    const gpu::DriverRelease release{driver.text, driver.parts};
    const bool branch_refused =
        std::any_of(already.begin(), already.end(),
                    [](const Problem& problem) { return problem.kind == "driver-too-old"; });
    // The newest runtime of each verdict speaks for the others of the same verdict.
    const CudaRuntimeFound* too_old = nullptr;
    const CudaRuntimeFound* compat = nullptr;
    gpu::DriverVerdict too_old_verdict, compat_verdict;
    for (const auto& runtime : runtimes) {
        gpu::DriverVerdict verdict = gpu::judge_driver(runtime.version, release);
        auto kind = verdict.kind == gpu::DriverVerdictKind::unknown_cuda && verdict.assumed
                        ? *verdict.assumed
                        : verdict.kind;
        if (kind == gpu::DriverVerdictKind::too_old) {
            too_old = &runtime;
            too_old_verdict = verdict;
        } else if (kind == gpu::DriverVerdictKind::minor_version_compat) {
            compat = &runtime;
            compat_verdict = verdict;
        }
    }
    if (too_old != nullptr && !branch_refused) {
        Problem problem{"driver-too-old", Severity::error, {}};
        problem.fields["driver"] = driver.text;
        problem.fields["cuda_major"] = too_old->version.major;
        problem.fields["minimum_driver"] =
            too_old_verdict.floor ? too_old_verdict.floor->text : std::string();
        problem.fields["libraries"] = {too_old->library};
        problem.fields["cuda"] = too_old->version.text();
        problem.fields["problem"] = too_old_verdict.message;
        out.push_back(std::move(problem));
    }
    if (compat != nullptr) {
        Problem problem{"driver-minor-version-compat", Severity::warning, {}};
        problem.fields["driver"] = driver.text;
        problem.fields["cuda"] = compat->version.text();
        problem.fields["minimum_driver"] =
            compat_verdict.minimum ? compat_verdict.minimum->text : std::string();
        problem.fields["libraries"] = {compat->library};
        problem.fields["from"] = compat->from;
        problem.fields["problem"] = compat_verdict.message;
        out.push_back(std::move(problem));
    }
    return out;
}

}  // namespace rootlock::check
