// CUDA's run rules for one GPU over fatbin summaries: which cubin loads, when PTX is JIT-compiled,
// when nothing runs, and the arch-specific (`a`) and family (`f`) variants of CUDA 12.9+.
#include <doctest/doctest.h>

#include <initializer_list>

#include "gpu/arch_coverage.hpp"

namespace rootlock::testing::ROOTLOCK_UNIT_ID {
namespace {

using gpu::ComputeCapability;
using gpu::Coverage;

// A summary of entries named as nvcc names them ("sm_86", "compute_90", "sm_100f").
gpu::FatbinSummary summary_of(std::initializer_list<std::string_view> names) {
    gpu::FatbinSummary summary;
    for (std::string_view text : names) {
        auto name = gpu::parse_sm_name(text);
        REQUIRE(name.ok());
        gpu::FatbinEntry entry;
        entry.kind = name->ptx ? gpu::FatbinKind::ptx : gpu::FatbinKind::cubin;
        entry.raw_kind = name->ptx ? 1 : 2;
        entry.sm = name->capability.sm();
        entry.variant = name->variant;
        entry.offset = 0x1000 + summary.entries.size() * 0x100;
        summary.entries.push_back(entry);
        (name->ptx ? summary.ptx_sms : summary.cubin_sms).insert(entry.sm);
        summary.architectures.insert(*name);
    }
    return summary;
}

ComputeCapability cc(std::string_view text) {
    auto parsed = gpu::parse_compute_capability(text);
    REQUIRE(parsed.ok());
    return *parsed;
}

// "cubin sm_86", "ptx_jit compute_90" or "none".
std::string verdict(const gpu::FatbinSummary& summary, std::string_view gpu_cc) {
    const gpu::CoverageVerdict v = gpu::cover(summary, cc(gpu_cc));
    switch (v.coverage) {
        case Coverage::cubin:
            return "cubin " + v.decided_by->text();
        case Coverage::ptx_jit:
            return "ptx_jit " + v.decided_by->text();
        case Coverage::none:
            CHECK_FALSE(v.decided_by);
            return "none";
    }
    return "?";
}

}  // namespace

TEST_SUITE("rootlock::gpu") {
    TEST_CASE("takes the best cubin of the GPU's major, else PTX at or below it, else nothing") {
        const auto mixed = summary_of({"sm_75", "sm_80", "sm_86", "sm_90", "compute_90"});
        CHECK(verdict(mixed, "8.9") == "cubin sm_86");
        CHECK(verdict(mixed, "8.6") == "cubin sm_86");
        CHECK(verdict(mixed, "8.0") == "cubin sm_80");
        CHECK(verdict(mixed, "7.5") == "cubin sm_75");
        CHECK(verdict(mixed, "9.0") == "cubin sm_90");
        CHECK(verdict(mixed, "12.0") == "ptx_jit compute_90");
        CHECK(verdict(mixed, "10.3") == "ptx_jit compute_90");
        CHECK(verdict(mixed, "6.1") == "none");
        CHECK(verdict(mixed, "7.0") == "none");

        const auto ampere = summary_of({"sm_80"});
        CHECK(verdict(ampere, "8.6") == "cubin sm_80");
        CHECK(verdict(ampere, "8.7") == "cubin sm_80");
        CHECK(verdict(ampere, "9.0") == "none");
        CHECK(verdict(ampere, "7.5") == "none");
    }

    TEST_CASE("prefers a cubin over PTX of a higher capability, and the highest PTX that fits") {
        const auto both = summary_of({"sm_80", "compute_86", "compute_75", "compute_120"});
        CHECK(verdict(both, "8.6") == "cubin sm_80");
        CHECK(verdict(both, "9.0") == "ptx_jit compute_86");
        CHECK(verdict(both, "12.1") == "ptx_jit compute_120");
        CHECK(verdict(both, "7.5") == "ptx_jit compute_75");
        CHECK(verdict(summary_of({"compute_90"}), "8.9") == "none");
    }

    TEST_CASE("runs arch-specific code only on its exact capability") {
        const auto hopper = summary_of({"sm_90a", "compute_90a"});
        CHECK(verdict(hopper, "9.0") == "cubin sm_90a");
        CHECK(verdict(hopper, "10.0") == "none");
        CHECK(verdict(hopper, "12.0") == "none");
        CHECK(verdict(summary_of({"compute_90a"}), "9.0") == "ptx_jit compute_90a");
        CHECK(verdict(summary_of({"sm_100a"}), "10.3") == "none");
        // Both of one number: the arch-specific build is the one made for this GPU.
        CHECK(verdict(summary_of({"sm_90", "sm_90a"}), "9.0") == "cubin sm_90a");
    }

    TEST_CASE("runs family code within its major, from its own minor up") {
        const auto blackwell = summary_of({"sm_100f", "compute_100f", "sm_120f"});
        CHECK(verdict(blackwell, "10.0") == "cubin sm_100f");
        CHECK(verdict(blackwell, "10.3") == "cubin sm_100f");
        CHECK(verdict(blackwell, "12.0") == "cubin sm_120f");
        CHECK(verdict(blackwell, "12.1") == "cubin sm_120f");
        CHECK(verdict(blackwell, "11.0") == "none");
        CHECK(verdict(blackwell, "9.0") == "none");
        const auto ptx = summary_of({"compute_100f"});
        CHECK(verdict(ptx, "10.3") == "ptx_jit compute_100f");
        CHECK(verdict(ptx, "12.0") == "none");
        CHECK(verdict(summary_of({"sm_103f"}), "10.0") == "none");
    }

    TEST_CASE("applies runs_on per name") {
        struct Row {
            std::string_view name;
            std::string_view gpu;
            bool runs;
        };
        const Row rows[] = {
            {"sm_86", "8.6", true},          {"sm_86", "8.9", true},
            {"sm_86", "8.0", false},         {"sm_86", "9.0", false},
            {"sm_120", "12.1", true},        {"sm_100", "10.3", true},
            {"sm_100", "11.0", false},       {"compute_86", "8.6", true},
            {"compute_86", "13.0", true},    {"compute_86", "8.0", false},
            {"sm_90a", "9.0", true},         {"sm_90a", "9.1", false},
            {"compute_100a", "10.0", true},  {"compute_100a", "10.3", false},
            {"sm_100f", "10.3", true},       {"compute_100f", "10.3", true},
            {"compute_100f", "11.0", false}, {"compute_120f", "12.0", true},
        };
        for (const Row& row : rows) {
            INFO(row.name, " on ", row.gpu);
            auto name = gpu::parse_sm_name(row.name);
            REQUIRE(name.ok());
            CHECK(gpu::runs_on(*name, cc(row.gpu)) == row.runs);
        }
    }

    TEST_CASE("names the deciding entry and says why in one line") {
        const auto summary = summary_of({"sm_75", "sm_86", "sm_86", "compute_86"});
        const auto jit = gpu::cover(summary, cc("9.0"));
        REQUIRE(jit.entry);
        CHECK(*jit.entry == 3);
        CHECK(
            jit.message ==
            "no cubin for compute capability 9.0: the driver JIT-compiles compute_86 at first use");
        const auto cubin = gpu::cover(summary, cc("8.9"));
        CHECK(*cubin.entry == 1);
        CHECK(cubin.message == "sm_86 runs on compute capability 8.9");
        const auto none = gpu::cover(summary, cc("6.1"));
        CHECK_FALSE(none.entry);
        CHECK(none.message ==
              "no kernel image is available for execution on the device (compute capability 6.1; "
              "the object holds sm_75, sm_86, compute_86)");
    }

    TEST_CASE("finds nothing to run in relocatable code alone or in unknown entries") {
        gpu::FatbinSummary summary;
        summary.relocatable = gpu::RelocatableCode{1, 2, {75, 90}, {90}, 4096};
        gpu::FatbinEntry other;
        other.kind = gpu::FatbinKind::other;
        other.sm = 90;
        summary.entries.push_back(other);
        const auto none = gpu::cover(summary, cc("9.0"));
        CHECK(none.coverage == Coverage::none);
        CHECK(none.message ==
              "no kernel image is available for execution on the device (compute capability 9.0; "
              "the object holds only relocatable device code (__nv_relfatbin), which is not "
              "loaded as is)");
        summary.relocatable.reset();
        CHECK(gpu::cover(summary, cc("9.0")).message ==
              "no kernel image is available for execution on the device (compute capability 9.0; "
              "the object holds no PTX or cubin entries)");
    }
}

}  // namespace rootlock::testing::ROOTLOCK_UNIT_ID
