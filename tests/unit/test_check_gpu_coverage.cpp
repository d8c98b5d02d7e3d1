// GPU coverage over a tree that holds no bytes (wheels installed virtually, as `lock` checks
// them): the device code their scans read is judged like device code read from a file.
#include <doctest/doctest.h>

#include <memory>

#include "check/gpu_coverage.hpp"
#include "fs/memory_tree.hpp"
#include "fs/overlay_tree.hpp"

namespace rootlock::testing::ROOTLOCK_UNIT_ID {
namespace {

gpu::FatbinSummary summary_of(std::initializer_list<const char*> names) {
    gpu::FatbinSummary summary;
    for (const char* text : names) {
        auto name = gpu::parse_sm_name(text);
        REQUIRE(name.ok());
        summary.architectures.insert(*name);
    }
    return summary;
}

}  // namespace

TEST_SUITE("rootlock::check") {
    TEST_CASE("device code known from a wheel scan is judged where the tree holds no bytes") {
        fs::OverlayTree tree(std::make_shared<fs::MemoryTree>());
        REQUIRE(
            tree.add_sized_file("/opt/venv/lib/libk.so", fs::SizedFile{4096, 0755, nullptr, "", ""})
                .ok());
        REQUIRE(
            tree.add_sized_file("/opt/venv/lib/libj.so", fs::SizedFile{4096, 0755, nullptr, "", ""})
                .ok());
        const std::vector<std::string> paths{"/opt/venv/lib/libj.so", "/opt/venv/lib/libk.so"};
        const std::map<std::string, gpu::FatbinSummary> known{
            {"/opt/venv/lib/libk.so", summary_of({"sm_75", "compute_75"})},
            {"/opt/venv/lib/libj.so", summary_of({"sm_86", "sm_90"})}};
        const check::DeviceCodeScan scan = check::scan_device_code(tree, paths, true, known);
        CHECK(scan.notes.empty());
        REQUIRE(scan.objects.size() == 2);
        CHECK(check::device_code_text(scan.objects.at("/opt/venv/lib/libk.so")) ==
              "sm_75 compute_75");
        const std::vector<check::GpuTarget> gpus{{{8, 6}, "the recipe's [cuda] gpus"},
                                                 {{7, 5}, "the recipe's [cuda] gpus"}};
        const auto problems = check::coverage_problems(scan, gpus);
        REQUIRE(problems.size() == 2);
        CHECK(problems[0].kind == "gpu-arch-ptx-only");  // libk on 8.6: compute_75 JIT
        CHECK(problems[0].fields.at("gpu") == "8.6");
        CHECK(problems[1].kind == "gpu-arch-missing");  // libj on 7.5: nothing
        CHECK(problems[1].fields.at("objects")[0].at("path") == "/opt/venv/lib/libj.so");

        // Without what the scans read, the objects are unread, and a note says so.
        const check::DeviceCodeScan blind = check::scan_device_code(tree, paths, true);
        CHECK(blind.objects.empty());
        REQUIRE(blind.notes.size() == 1);
        CHECK(blind.notes[0].starts_with("the device code of 2 objects was not read"));
    }
}

}  // namespace rootlock::testing::ROOTLOCK_UNIT_ID
