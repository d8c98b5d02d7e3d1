// Unit tests for the driver gate by CUDA release and for GPU coverage problems: the runtime's
// version from a file name or a wheel's dist-info, the verdicts folded into problems.
#include <doctest/doctest.h>

#include <string>

#include "check/driver_gate.hpp"
#include "check/gpu_coverage.hpp"
#include "fs/memory_tree.hpp"

namespace ROOTLOCK_UNIT_ID {

using rootlock::check::CudaMajors;
using rootlock::check::CudaRuntimeFound;
using rootlock::check::DeviceCode;
using rootlock::check::DeviceCodeScan;
using rootlock::check::driver_gate_problems;
using rootlock::check::find_cuda_runtimes;
using rootlock::check::GpuTarget;
using rootlock::check::parse_driver_version;
using rootlock::check::Problem;

namespace {

const std::string k_site = "/opt/venv/lib/python3.11/site-packages";

rootlock::gpu::FatbinEntry entry(rootlock::gpu::FatbinKind kind, int sm) {
    rootlock::gpu::FatbinEntry out;
    out.kind = kind;
    out.sm = sm;
    return out;
}

// A summary as gpu::read_fatbin makes it: cubins sm_75 and sm_86, PTX compute_86.
rootlock::gpu::FatbinSummary mixed() {
    rootlock::gpu::FatbinSummary summary;
    summary.entries = {entry(rootlock::gpu::FatbinKind::cubin, 75),
                       entry(rootlock::gpu::FatbinKind::cubin, 86),
                       entry(rootlock::gpu::FatbinKind::ptx, 86)};
    summary.cubin_sms = {75, 86};
    summary.ptx_sms = {86};
    for (const auto& e : summary.entries)
        summary.architectures.insert(e.name());
    return summary;
}

}  // namespace

TEST_SUITE("rootlock::check") {
    TEST_CASE("the runtime's release comes from its file name or its wheel's dist-info") {
        rootlock::fs::MemoryTree tree;
        tree.add_file("/usr/local/cuda/lib64/libcudart.so.12.4.127", "x");
        tree.add_symlink("/usr/local/cuda/lib64/libcudart.so.12", "libcudart.so.12.4.127");
        tree.add_file(k_site + "/nvidia/cuda_runtime/lib/libcudart.so.12", "x");
        tree.add_dir(k_site + "/nvidia_cuda_runtime_cu12-12.8.90.dist-info");
        tree.add_file(k_site + "/nvidia/cu13/lib/libcudart.so.13", "x");  // no dist-info: unknown
        CudaMajors majors;
        majors[12] = {"/usr/local/cuda/lib64/libcudart.so.12",
                      k_site + "/nvidia/cuda_runtime/lib/libcudart.so.12",
                      k_site + "/nvidia/cublas/lib/libcublas.so.12"};
        majors[13] = {k_site + "/nvidia/cu13/lib/libcudart.so.13"};
        auto found = find_cuda_runtimes(tree, majors);
        REQUIRE(found.size() == 2);
        CHECK(found[0].version.text() == "12.4");
        CHECK(found[0].from == "file name");
        CHECK(found[1].version.text() == "12.8");
        CHECK(found[1].from == k_site + "/nvidia_cuda_runtime_cu12-12.8.90.dist-info");
    }

    TEST_CASE("a release below its major's floor is too old, one within it a warning") {
        std::vector<CudaRuntimeFound> runtimes = {{{12, 8}, "/a/libcudart.so.12", "file name"},
                                                  {{13, 0}, "/b/libcudart.so.13", "file name"}};
        auto driver = parse_driver_version("580.10.01");
        REQUIRE(driver.ok());
        auto problems = driver_gate_problems(runtimes, *driver, {});
        REQUIRE(problems.size() == 1);
        CHECK(problems[0].kind == "driver-too-old");
        CHECK(problems[0].fields["cuda"] == "13.0");
        CHECK(problems[0].fields["minimum_driver"] == "580.65.06");

        driver = parse_driver_version("535.261.03");
        REQUIRE(driver.ok());
        problems = driver_gate_problems({runtimes[0]}, *driver, {});
        REQUIRE(problems.size() == 1);
        CHECK(problems[0].kind == "driver-minor-version-compat");
        CHECK(problems[0].fields["minimum_driver"] == "570.26");
        CHECK(problems[0].fields["problem"].get<std::string>().find("535.261.03") !=
              std::string::npos);
    }

    TEST_CASE("a branch alone or a refusal by branch adds nothing") {
        std::vector<CudaRuntimeFound> runtimes = {{{13, 0}, "/b/libcudart.so.13", "file name"}};
        auto branch = parse_driver_version("580");
        REQUIRE(branch.ok());
        CHECK(driver_gate_problems(runtimes, *branch, {}).empty());
        auto old = parse_driver_version("570.133.07");
        REQUIRE(old.ok());
        std::vector<Problem> already = {Problem{"driver-too-old", {}, {}}};
        CHECK(driver_gate_problems(runtimes, *old, already).empty());
        auto fine = parse_driver_version("580.65.06");
        REQUIRE(fine.ok());
        CHECK(driver_gate_problems(runtimes, *fine, {}).empty());
    }

    TEST_CASE("coverage folds objects into one problem per GPU and verdict") {
        DeviceCodeScan scan;
        scan.summaries.emplace("/opt/libmixed.so", mixed());
        scan.objects.emplace("/opt/libmixed.so", DeviceCode{{"sm_75", "sm_86"}, {"compute_86"}});
        std::vector<GpuTarget> gpus = {{{8, 9}, "--gpu 8.9"},
                                       {{9, 0}, "--gpu 9.0"},
                                       {{6, 1}, "host GPU 0 (NVIDIA GeForce GTX 1080)"}};
        auto problems = rootlock::check::coverage_problems(scan, gpus);
        REQUIRE(problems.size() == 2);
        CHECK(problems[0].kind == "gpu-arch-ptx-only");
        CHECK(problems[0].fields["gpu"] == "9.0");
        CHECK(problems[0].fields["objects"][0]["ptx"] == "compute_86");
        CHECK(problems[1].kind == "gpu-arch-missing");
        CHECK(problems[1].fields["sm"] == "sm_61");
        CHECK(problems[1].fields["source"] == "host GPU 0 (NVIDIA GeForce GTX 1080)");
        CHECK(problems[1].fields["problem"] ==
              "no kernel image is available for execution on the device");
        CHECK(rootlock::check::device_code_text(scan.objects.at("/opt/libmixed.so")) ==
              "sm_75 sm_86 compute_86");
    }
}

}  // namespace ROOTLOCK_UNIT_ID
