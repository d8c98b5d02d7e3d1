// Unit tests for GPU model names to compute capabilities (the names nvidia-smi and /proc write),
// and for compute capabilities and nvcc architecture names parsed and written back.
#include <doctest/doctest.h>

#include <set>
#include <string>
#include <vector>

#include "gpu/compute_capability.hpp"
#include "gpu/gpu_table.hpp"

namespace ROOTLOCK_UNIT_ID {

using rootlock::gpu::architecture_name;
using rootlock::gpu::compute_capability_of;
using rootlock::gpu::ComputeCapability;
using rootlock::gpu::from_sm;
using rootlock::gpu::gpu_families;
using rootlock::gpu::lookup_gpu_model;
using rootlock::gpu::parse_compute_capability;
using rootlock::gpu::parse_sm_name;
using rootlock::gpu::SmName;
using rootlock::gpu::SmVariant;

namespace {

// "8.6" for a known model, "unknown" otherwise.
std::string capability_text(const std::string& model) {
    auto capability = compute_capability_of(model);
    return capability ? capability->text() : "unknown";
}

}  // namespace

TEST_SUITE("rootlock::gpu") {
    TEST_CASE("model names as NVIDIA writes them map to their compute capability") {
        struct Case {
            std::string model, capability;
        };
        const Case cases[] = {
            {"NVIDIA GeForce RTX 3090", "8.6"},
            {"Tesla V100-SXM2-16GB", "7.0"},
            {"Tesla V100S-PCIE-32GB", "7.0"},
            {"NVIDIA H100 80GB HBM3", "9.0"},
            {"NVIDIA H100 PCIe", "9.0"},
            {"NVIDIA H100 NVL", "9.0"},
            {"NVIDIA H200", "9.0"},
            {"NVIDIA H200 NVL", "9.0"},
            {"NVIDIA H800", "9.0"},
            {"NVIDIA H20", "9.0"},
            {"NVIDIA GH200 480GB", "9.0"},
            {"NVIDIA A100-SXM4-80GB", "8.0"},
            {"NVIDIA A100-PCIE-40GB", "8.0"},
            {"NVIDIA A100 80GB PCIe", "8.0"},
            {"NVIDIA A800-SXM4-80GB", "8.0"},
            {"NVIDIA A30", "8.0"},
            {"NVIDIA A10", "8.6"},
            {"NVIDIA A10G", "8.6"},
            {"NVIDIA A16", "8.6"},
            {"NVIDIA A40", "8.6"},
            {"NVIDIA A2", "8.6"},
            {"Tesla T4", "7.5"},
            {"NVIDIA GeForce GTX 1080 Ti", "6.1"},
            {"NVIDIA GeForce GTX 1050", "6.1"},
            {"NVIDIA GeForce GT 1030", "6.1"},
            {"NVIDIA B200", "10.0"},
            {"NVIDIA GB200", "10.0"},
            {"NVIDIA B300 SXM6 AC", "10.3"},
            {"NVIDIA GB300", "10.3"},
            {"NVIDIA GB10", "12.1"},
            {"NVIDIA GeForce RTX 5090", "12.0"},
            {"NVIDIA GeForce RTX 5090 D", "12.0"},
            {"NVIDIA GeForce RTX 5060 Ti", "12.0"},
            {"NVIDIA RTX PRO 6000 Blackwell Workstation Edition", "12.0"},
            {"NVIDIA RTX PRO 6000 Blackwell Server Edition", "12.0"},
            {"NVIDIA RTX PRO 4000 Blackwell", "12.0"},
            {"NVIDIA L4", "8.9"},
            {"NVIDIA L40", "8.9"},
            {"NVIDIA L40S", "8.9"},
            {"NVIDIA L20", "8.9"},
            {"NVIDIA GeForce RTX 4090", "8.9"},
            {"NVIDIA GeForce RTX 4090 D", "8.9"},
            {"NVIDIA GeForce RTX 4060 Laptop GPU", "8.9"},
            {"Tesla P100-PCIE-16GB", "6.0"},
            {"Tesla P4", "6.1"},
            {"Tesla P40", "6.1"},
            {"NVIDIA RTX A6000", "8.6"},
            {"NVIDIA RTX A5000 Laptop GPU", "8.6"},
            {"NVIDIA RTX A500 Laptop GPU", "8.6"},
            {"NVIDIA RTX A2000 12GB", "8.6"},
            {"Quadro RTX 8000", "7.5"},
            {"Quadro RTX 6000", "7.5"},
            {"NVIDIA RTX 6000 Ada Generation", "8.9"},
            {"NVIDIA RTX 4000 SFF Ada Generation", "8.9"},
            {"NVIDIA RTX 2000 Ada Generation", "8.9"},
            {"NVIDIA RTX 3500 Ada Generation Laptop GPU", "8.9"},
            {"Orin (nvgpu)", "8.7"},
            {"NVIDIA Jetson AGX Orin", "8.7"},
            {"Xavier", "7.2"},
            {"NVIDIA Tegra X1", "5.3"},
            {"NVIDIA Thor", "11.0"},
            {"NVIDIA GeForce GTX 980 Ti", "5.2"},
            {"NVIDIA GeForce GTX 970", "5.2"},
            {"NVIDIA GeForce GTX 750 Ti", "5.0"},
            {"NVIDIA GeForce GTX TITAN X", "5.2"},
            {"NVIDIA TITAN X (Pascal)", "6.1"},
            {"NVIDIA TITAN Xp", "6.1"},
            {"NVIDIA TITAN V", "7.0"},
            {"NVIDIA TITAN RTX", "7.5"},
            {"NVIDIA GeForce GTX TITAN Black", "3.5"},
            {"NVIDIA GeForce GTX 1660 SUPER", "7.5"},
            {"NVIDIA GeForce GTX 1650", "7.5"},
            {"NVIDIA GeForce RTX 2080 Ti", "7.5"},
            {"NVIDIA GeForce RTX 2080 Super with Max-Q Design", "7.5"},
            {"NVIDIA GeForce RTX 3060 Laptop GPU", "8.6"},
            {"NVIDIA GeForce RTX 3050 Ti Laptop GPU", "8.6"},
            {"NVIDIA GeForce MX450", "7.5"},
            {"NVIDIA GeForce MX250", "6.1"},
            {"Quadro P4000", "6.1"},
            {"Quadro P620", "6.1"},
            {"Quadro M4000", "5.2"},
            {"Quadro GV100", "7.0"},
            {"Quadro GP100", "6.0"},
            {"NVIDIA T1000 8GB", "7.5"},
            {"Quadro T2000", "7.5"},
            {"Tesla M60", "5.2"},
            {"Tesla M10", "5.0"},
            {"Tesla K80", "3.7"},
            {"Tesla K40m", "3.5"},
            {"GRID T4-16Q", "7.5"},
            {"NVIDIA A40-24Q", "8.6"},
        };
        for (const Case& c : cases) {
            CAPTURE(c.model);
            CHECK(capability_text(c.model) == c.capability);
        }
    }

    TEST_CASE("the most specific family wins where several match") {
        struct Case {
            std::string model, capability, pattern;
        };
        const Case cases[] = {
            // whole words: A100 is not A10, GH200 is not H200, GB200 is not B200
            {"NVIDIA A100-SXM4-80GB", "8.0", "a100"},
            {"NVIDIA A10", "8.6", "a10"},
            {"NVIDIA GH200 480GB", "9.0", "gh200"},
            {"NVIDIA GB200", "10.0", "gb200"},
            // more words: Turing's Quadro RTX 5000/4000/3000, not RTX 50xx/40xx/30xx
            {"Quadro RTX 5000", "7.5", "quadro rtx ####"},
            {"Quadro RTX 4000", "7.5", "quadro rtx ####"},
            {"Quadro RTX 3000", "7.5", "quadro rtx ####"},
            {"NVIDIA RTX 5000 Ada Generation", "8.9", "rtx #### ada"},
            {"NVIDIA GeForce GTX TITAN X", "5.2", "gtx titan x"},
            {"NVIDIA GeForce GTX TITAN", "3.5", "gtx titan"},
            // more literal characters: the exceptions inside a family's number range
            {"NVIDIA GeForce RTX 2050", "8.6", "rtx 2050"},
            {"NVIDIA GeForce RTX 2060", "7.5", "rtx 20##"},
            {"Quadro M1200", "5.0", "quadro m1200"},
            {"Quadro M2000", "5.2", "quadro m####"},
        };
        for (const Case& c : cases) {
            CAPTURE(c.model);
            auto match = lookup_gpu_model(c.model);
            REQUIRE(match);
            CHECK(match->capability.text() == c.capability);
            CHECK(match->pattern == c.pattern);
        }
    }

    TEST_CASE("matching ignores case, the vendor prefix and punctuation") {
        CHECK(capability_text("nvidia geforce rtx 3090") == "8.6");
        CHECK(capability_text("GEFORCE RTX 3090") == "8.6");
        CHECK(capability_text("  RTX   3090  ") == "8.6");
        CHECK(capability_text("NVIDIA_A100_SXM4_80GB") == "8.0");
        CHECK(capability_text("A100") == "8.0");
        auto match = lookup_gpu_model("NVIDIA GeForce RTX 4090");
        REQUIRE(match);
        CHECK(match->architecture == "Ada");
    }

    TEST_CASE("unknown and partial model names give no capability") {
        const std::vector<std::string> models = {
            "",
            "NVIDIA",
            "NVIDIA GeForce",
            "NVIDIA GeForce RTX",
            "NVIDIA RTX 6000",  // Quadro RTX 6000 (7.5) or RTX 6000 Ada (8.9): not said
            "RTX3090",
            "NVIDIA A1000X",
            "NVIDIA GeForce GTX 960M",
            "AMD Radeon RX 7900 XTX",
            "NVIDIA GeForce RTX 309",
            "NVIDIA GeForce RTX 30901",
            std::string(300, 'a'),
            "NVIDIA GeForce RTX 3090" + std::string(240, ' '),  // longer than 256 bytes
        };
        for (const std::string& model : models) {
            CAPTURE(model);
            CHECK_FALSE(lookup_gpu_model(model).has_value());
        }
    }

    TEST_CASE("every table row is a well-formed pattern, and none is written twice") {
        std::set<std::string_view> seen;
        for (const auto& family : gpu_families()) {
            CAPTURE(family.pattern);
            CHECK(seen.insert(family.pattern).second);
            REQUIRE_FALSE(family.pattern.empty());
            CHECK(family.pattern.front() != ' ');
            CHECK(family.pattern.back() != ' ');
            CHECK(family.pattern.find("  ") == std::string_view::npos);
            for (char c : family.pattern) {
                const bool ok =
                    (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '#' || c == ' ';
                CHECK(ok);
            }
            CHECK_FALSE(architecture_name(family.capability).empty());
            // a row matches its own pattern once '#' is a digit
            std::string model(family.pattern);
            for (char& c : model)
                c = c == '#' ? '5' : c;
            CHECK(lookup_gpu_model(model).has_value());
        }
    }

    TEST_CASE("architectures are named by capability") {
        CHECK(architecture_name({3, 7}) == "Kepler");
        CHECK(architecture_name({5, 2}) == "Maxwell");
        CHECK(architecture_name({6, 1}) == "Pascal");
        CHECK(architecture_name({7, 0}) == "Volta");
        CHECK(architecture_name({7, 2}) == "Volta");
        CHECK(architecture_name({7, 5}) == "Turing");
        CHECK(architecture_name({8, 0}) == "Ampere");
        CHECK(architecture_name({8, 7}) == "Ampere");
        CHECK(architecture_name({8, 9}) == "Ada");
        CHECK(architecture_name({9, 0}) == "Hopper");
        CHECK(architecture_name({10, 3}) == "Blackwell");
        CHECK(architecture_name({12, 1}) == "Blackwell");
        CHECK(architecture_name({8, 8}).empty());
        CHECK(architecture_name({13, 0}).empty());
        CHECK(architecture_name({0, 0}).empty());
    }

    TEST_CASE("compute capabilities read as X.Y, order numerically and write back") {
        auto cc = parse_compute_capability("8.6");
        REQUIRE(cc.ok());
        CHECK(cc->major == 8);
        CHECK(cc->minor == 6);
        CHECK(cc->text() == "8.6");
        CHECK(cc->sm() == 86);
        auto twelve = parse_compute_capability("12.0");
        REQUIRE(twelve.ok());
        CHECK(twelve->sm() == 120);
        CHECK(*cc < *twelve);  // 8.6 < 12.0, not as text
        CHECK(ComputeCapability{9, 0} < ComputeCapability{10, 0});
        CHECK(ComputeCapability{10, 3} > ComputeCapability{10, 0});
        CHECK(ComputeCapability{8, 6} == ComputeCapability{8, 6});
        CHECK(parse_compute_capability("0.0").ok() == false);
        CHECK(parse_compute_capability("99.9")->sm() == 999);
    }

    TEST_CASE("malformed compute capabilities are refused with the reason") {
        struct Case {
            std::string text, why;
        };
        const Case cases[] = {
            {"", "it is empty"},
            {"86", "it has no dot between major and minor"},
            {"sm_86", "it has no dot between major and minor"},
            {".6", "the major is not a number from 1 to 99"},
            {"0.6", "the major is not a number from 1 to 99"},
            {"08.6", "the major is not a number from 1 to 99"},
            {"100.0", "the major is not a number from 1 to 99"},
            {"-8.6", "the major is not a number from 1 to 99"},
            {" 8.6", "the major is not a number from 1 to 99"},
            {"8.", "the minor is not one digit"},
            {"8.10", "the minor is not one digit"},
            {"8.6.0", "the minor is not one digit"},
            {"8.6 ", "the minor is not one digit"},
            {"8.x", "the minor is not one digit"},
            {std::string("8.\0", 3), "the minor is not one digit"},
        };
        for (const Case& c : cases) {
            CAPTURE(c.text);
            auto parsed = parse_compute_capability(c.text);
            REQUIRE_FALSE(parsed.ok());
            CHECK(parsed.error().where.empty());
            CHECK(parsed.error().text() ==
                  rootlock::util::quote(c.text) +
                      " is not a compute capability such as 8.6: " + c.why);
        }
        auto long_text = parse_compute_capability(std::string(100, '9'));
        REQUIRE_FALSE(long_text.ok());
        CHECK(long_text.error().text() ==
              "\"" + std::string(40, '9') +
                  "...\" is not a compute capability such as 8.6: it has no dot between major and "
                  "minor");
    }

    TEST_CASE("SM numbers split into major and a one-digit minor") {
        CHECK(from_sm(86) == ComputeCapability{8, 6});
        CHECK(from_sm(90) == ComputeCapability{9, 0});
        CHECK(from_sm(100) == ComputeCapability{10, 0});
        CHECK(from_sm(103) == ComputeCapability{10, 3});
        CHECK(from_sm(120) == ComputeCapability{12, 0});
        CHECK(from_sm(121) == ComputeCapability{12, 1});
        CHECK(from_sm(0) == ComputeCapability{0, 0});
        CHECK(from_sm(-5) == ComputeCapability{0, 0});
    }

    TEST_CASE("nvcc architecture names give capability, variant and PTX or SASS") {
        struct Case {
            std::string text;
            ComputeCapability capability;
            SmVariant variant;
            bool ptx;
        };
        const Case cases[] = {
            {"sm_86", {8, 6}, SmVariant::plain, false},
            {"sm_90a", {9, 0}, SmVariant::arch_specific, false},
            {"sm_100f", {10, 0}, SmVariant::family, false},
            {"sm_100a", {10, 0}, SmVariant::arch_specific, false},
            {"sm_120", {12, 0}, SmVariant::plain, false},
            {"sm_121", {12, 1}, SmVariant::plain, false},
            {"sm_50", {5, 0}, SmVariant::plain, false},
            {"compute_75", {7, 5}, SmVariant::plain, true},
            {"compute_90a", {9, 0}, SmVariant::arch_specific, true},
            {"compute_120f", {12, 0}, SmVariant::family, true},
        };
        for (const Case& c : cases) {
            CAPTURE(c.text);
            auto parsed = parse_sm_name(c.text);
            REQUIRE(parsed.ok());
            CHECK(parsed->capability == c.capability);
            CHECK(parsed->variant == c.variant);
            CHECK(parsed->ptx == c.ptx);
            CHECK(parsed->text() == c.text);
        }
    }

    TEST_CASE("malformed architecture names are refused with the reason") {
        struct Case {
            std::string text, why;
        };
        const std::string k_prefix = "it does not start with sm_ or compute_";
        const std::string k_number = "the number is not one from 10 to 999";
        const Case cases[] = {
            {"", k_prefix},        {"8.6", k_prefix},      {"SM_86", k_prefix},
            {"lto_90", k_prefix},  {"sm86", k_prefix},     {"sm_", k_number},
            {"sm_a", k_number},    {"sm_9", k_number},     {"sm_09", k_number},
            {"sm_086", k_number},  {"sm_1000", k_number},  {"sm_90b", k_number},
            {"sm_90aa", k_number}, {"sm_90af", k_number},  {"sm_+90", k_number},
            {"sm_ 90", k_number},  {"compute_", k_number}, {std::string("sm_9\0", 5), k_number},
        };
        for (const Case& c : cases) {
            CAPTURE(c.text);
            auto parsed = parse_sm_name(c.text);
            REQUIRE_FALSE(parsed.ok());
            CHECK(parsed.error().text() ==
                  rootlock::util::quote(c.text) +
                      " is not an architecture name such as sm_86: " + c.why);
        }
    }

    TEST_CASE("architecture names order by capability, then variant and kind") {
        const SmName sm_86 = parse_sm_name("sm_86").value();
        const SmName sm_90 = parse_sm_name("sm_90").value();
        const SmName sm_90a = parse_sm_name("sm_90a").value();
        CHECK(sm_86 < sm_90);
        CHECK(sm_90 < sm_90a);
        CHECK(sm_90 == parse_sm_name("sm_90").value());
        CHECK(sm_90 != parse_sm_name("compute_90").value());
    }
}

}  // namespace ROOTLOCK_UNIT_ID
