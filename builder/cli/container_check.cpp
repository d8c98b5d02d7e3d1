// open_container, apply_host_to_check and add_host_problems: the steps `check --host-root` and
// `pct-config` take in the same order, so both judge one container the same way.
#include "cli/container_check.hpp"

#include "check/cuda_rules.hpp"
#include "host/host_probe.hpp"
#include "host/host_reader.hpp"

namespace rootlock::cli {

util::Result<ContainerCheck> open_container(std::shared_ptr<const fs::FileTree> image,
                                            const ContainerInput& input) {
    host::ProbeOptions probe;
    probe.host_root = input.host_root;
    probe.cdi_files = input.cdi;
    probe.run_nvidia_smi = input.run_nvidia_smi;
    ROOTLOCK_TRY(facts, host::probe_host(probe));
    ROOTLOCK_TRY(reader, host::HostReader::open(input.host_root));
    ROOTLOCK_TRY(view, host::container_view(std::move(image), facts, reader));
    return ContainerCheck{std::move(facts), std::move(view)};
}

void apply_host_to_check(const host::HostFacts& facts, check::CheckOptions& options) {
    options.model.no_default_host_provided = true;
    if (options.driver.empty())
        options.driver = facts.driver.version;
    for (size_t i = 0; i < facts.gpus.size(); ++i) {
        const host::GpuFacts& gpu = facts.gpus[i];
        if (!gpu.compute_capability)
            continue;
        check::GpuTarget target;
        target.capability = *gpu.compute_capability;
        target.source = "host GPU " + std::to_string(i) +
                        (gpu.model.empty() ? std::string() : " (" + gpu.model + ")");
        options.gpus.push_back(std::move(target));
    }
}

void add_host_problems(const host::HostFacts& facts, check::CheckReport& report) {
    if (facts.driver.version.empty()) {
        check::Problem problem{"host-without-driver", check::Severity::error, {}};
        problem.fields["host_root"] = facts.host_root;
        problem.fields["problem"] =
            "no NVIDIA kernel module and no libcuda.so.*: the container gets no GPU";
        report.problems.push_back(std::move(problem));
    }
    for (auto& problem : report.problems) {
        if (problem.kind != "missing-soname" || !problem.fields.contains("soname"))
            continue;
        const std::string soname = problem.fields["soname"].get<std::string>();
        if (check::is_driver_library_name(soname)) {
            problem.fields["host"] =
                facts.driver.version.empty()
                    ? "the host has no driver to give it"
                    : "the host's driver " + facts.driver.version + " does not give it";
        }
    }
    for (size_t i = 0; i < facts.gpus.size(); ++i) {
        if (facts.gpus[i].compute_capability)
            continue;
        report.notes.push_back("host GPU " + std::to_string(i) + " (" + facts.gpus[i].model +
                               "): compute capability unknown, so its architecture coverage "
                               "was not checked; pass --gpu X.Y");
    }
    check::sort_problems(report.problems);
    report.ok =
        std::none_of(report.problems.begin(), report.problems.end(),
                     [](const check::Problem& p) { return p.severity == check::Severity::error; });
}

}  // namespace rootlock::cli
