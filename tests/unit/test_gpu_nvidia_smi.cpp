// Unit tests for nvidia-smi's CSV rows (the one query rootlock runs), its PCI bus ids against
// /proc's, and every malformed row's error.
#include <doctest/doctest.h>

#include <string>

#include "gpu/nvidia_smi.hpp"

namespace ROOTLOCK_UNIT_ID {

using rootlock::gpu::ComputeCapability;
using rootlock::gpu::k_nvidia_smi_arguments;
using rootlock::gpu::k_nvidia_smi_query_fields;
using rootlock::gpu::parse_nvidia_smi;
using rootlock::gpu::same_pci_bus;

namespace {

const std::string k_two_gpus =
    "0, GPU-6cf00fa7-1a3b-4b2c-9d8e-0123456789ab, NVIDIA GeForce RTX 3090, 00000000:01:00.0, "
    "8.6, 570.124.06\n"
    "1, GPU-e1924eea-b9bb-d537-39f2-b345087fa145, NVIDIA H100 80GB HBM3, 00000000:AF:00.0, 9.0, "
    "570.124.06\n";

// One row with `field` (0 to 5) replaced.
std::string row_with(size_t field, const std::string& value) {
    std::string fields[] = {"0",        "GPU-6cf00fa7-1a3b-4b2c-9d8e-0123456789ab",
                            "Tesla T4", "00000000:3B:00.0",
                            "7.5",      "535.261.03"};
    fields[field] = value;
    return fields[0] + ", " + fields[1] + ", " + fields[2] + ", " + fields[3] + ", " + fields[4] +
           ", " + fields[5] + "\n";
}

}  // namespace

TEST_SUITE("rootlock::gpu") {
    TEST_CASE("the query is the one the parser reads, field for field") {
        CHECK(k_nvidia_smi_query_fields == "index,uuid,name,pci.bus_id,compute_cap,driver_version");
        CHECK(k_nvidia_smi_arguments[0] == "--query-gpu=" + std::string(k_nvidia_smi_query_fields));
        CHECK(k_nvidia_smi_arguments[1] == "--format=csv,noheader");
    }

    TEST_CASE("nvidia-smi's rows give each GPU's index, UUID, name, bus, capability and driver") {
        auto parsed = parse_nvidia_smi(k_two_gpus, "nvidia-smi");
        REQUIRE(parsed.ok());
        REQUIRE(parsed->size() == 2);
        const auto& first = parsed->at(0);
        CHECK(first.index == 0);
        CHECK(first.uuid == "GPU-6cf00fa7-1a3b-4b2c-9d8e-0123456789ab");
        CHECK(first.name == "NVIDIA GeForce RTX 3090");
        CHECK(first.bus_text == "00000000:01:00.0");
        CHECK(first.bus.text() == "0000:01:00.0");
        CHECK(first.compute_cap == ComputeCapability{8, 6});
        CHECK(first.driver.text == "570.124.06");
        const auto& second = parsed->at(1);
        CHECK(second.index == 1);
        CHECK(second.name == "NVIDIA H100 80GB HBM3");
        CHECK(second.bus.text() == "0000:af:00.0");
        CHECK(second.compute_cap == ComputeCapability{9, 0});
    }

    TEST_CASE("bracketed non-answers, CRLF, blank lines and tight commas are accepted") {
        auto parsed = parse_nvidia_smi(
            "\r\n0,GPU-6cf00fa7-1a3b-4b2c-9d8e-0123456789ab,Tesla T4,00000000:3B:00.0,[N/A],"
            "535.261.03\r\n\n"
            "1, GPU-e1924eea-b9bb-d537-39f2-b345087fa145, Tesla T4, 00000000:3C:00.0, [Not "
            "Supported], 535.261.03   ",
            "smi");
        REQUIRE(parsed.ok());
        REQUIRE(parsed->size() == 2);
        CHECK(parsed->at(0).name == "Tesla T4");
        CHECK_FALSE(parsed->at(0).compute_cap.has_value());
        CHECK_FALSE(parsed->at(1).compute_cap.has_value());
        CHECK(parsed->at(1).driver.text == "535.261.03");
    }

    TEST_CASE("malformed nvidia-smi output is refused at its line") {
        struct Case {
            std::string text, error;
        };
        const std::string k_expected =
            " fields; 6 were expected (index,uuid,name,pci.bus_id,compute_cap,driver_version)";
        const Case cases[] = {
            {"", "smi: the output is empty; one line per GPU was expected"},
            {"\n \n", "smi: the output is empty; one line per GPU was expected"},
            {"No devices were found\n",
             "smi:1: nvidia-smi found no GPU (\"No devices were found\")"},
            {"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n",
             "smi:1: \"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA "
             "driver.\" has 1" +
                 k_expected},
            {"0, GPU-6cf00fa7-1a3b-4b2c-9d8e-0123456789ab, Tesla T4, 00000000:3B:00.0, 7.5\n",
             "smi:1: \"0, GPU-6cf00fa7-1a3b-4b2c-9d8e-0123456789ab, Tesla T4, 00000000:3B:00.0, "
             "7.5\" has 5" +
                 k_expected},
            {row_with(5, "535.261.03, extra"),
             "smi:1: \"0, GPU-6cf00fa7-1a3b-4b2c-9d8e-0123456789ab, Tesla T4, 00000000:3B:00.0, "
             "7.5, 53...\" has 7" +
                 k_expected},
            {row_with(0, "x"), "smi:1: index \"x\" is not a number from 0 to 65535"},
            {row_with(0, "-1"), "smi:1: index \"-1\" is not a number from 0 to 65535"},
            {row_with(0, "65536"), "smi:1: index \"65536\" is not a number from 0 to 65535"},
            {row_with(0, "99999999999999999999"),
             "smi:1: index \"99999999999999999999\" is not a number from 0 to 65535"},
            {row_with(0, ""), "smi:1: index \"\" is not a number from 0 to 65535"},
            {row_with(1, "GPU-6cf00fa7"),
             "smi:1: uuid \"GPU-6cf00fa7\" is not GPU- and 8-4-4-4-12 hex digits"},
            {row_with(1, "[N/A]"), "smi:1: uuid \"[N/A]\" is not GPU- and 8-4-4-4-12 hex digits"},
            {row_with(2, ""), "smi:1: name is empty"},
            {row_with(2, "Tesla\x07T4"), "smi:1: name \"Tesla\\x07T4\" holds a control byte"},
            {row_with(3, "01:00.0"),
             "smi:1: pci.bus_id \"01:00.0\" is not a PCI address such as 00000000:01:00.0"},
            {row_with(3, "00000000:01:00"),
             "smi:1: pci.bus_id \"00000000:01:00\" is not a PCI address such as "
             "00000000:01:00.0"},
            {row_with(4, "86"),
             "smi:1: compute_cap \"86\" is not a compute capability such as 8.6: it has no dot "
             "between major and minor"},
            {row_with(4, "8.x"),
             "smi:1: compute_cap \"8.x\" is not a compute capability such as 8.6: the minor is "
             "not one digit"},
            {row_with(4, "[N/A"),
             "smi:1: compute_cap \"[N/A\" is not a compute capability such as 8.6: it has no dot "
             "between major and minor"},
            {row_with(5, "535.x"),
             "smi:1: driver_version \"535.x\" is not a driver release such as 580.65.06: part 2 "
             "is not a decimal number"},
            {row_with(5, "535"),
             "smi:1: driver_version \"535\" is a branch only; nvidia-smi writes a full release"},
            {row_with(5, "[N/A]"),
             "smi:1: driver_version \"[N/A]\" is not a driver release such as 580.65.06: part 1 "
             "is not a decimal number"},
            {k_two_gpus + row_with(0, "y"), "smi:3: index \"y\" is not a number from 0 to 65535"},
        };
        for (const Case& c : cases) {
            CAPTURE(c.text);
            auto parsed = parse_nvidia_smi(c.text, "smi");
            REQUIRE_FALSE(parsed.ok());
            CHECK(parsed.error().text() == c.error);
        }
    }

    TEST_CASE("nvidia-smi's bus ids and /proc's name the same PCI function") {
        CHECK(same_pci_bus("00000000:01:00.0", "0000:01:00.0"));
        CHECK(same_pci_bus("00000000:AF:00.0", "0000:af:00.0"));
        CHECK(same_pci_bus("0000:af:00.0", "0000:af:00.0"));
        CHECK(same_pci_bus(" 00000000:01:00.0\r", "0000:01:00.0"));
        CHECK_FALSE(same_pci_bus("00000000:01:00.0", "0000:02:00.0"));
        CHECK_FALSE(same_pci_bus("00000001:01:00.0", "0000:01:00.0"));
        CHECK_FALSE(same_pci_bus("00000000:01:00.0", "0000:01:00.1"));
        CHECK_FALSE(same_pci_bus("01:00.0", "01:00.0"));  // no domain: no address
        CHECK_FALSE(same_pci_bus("", ""));
    }
}

}  // namespace ROOTLOCK_UNIT_ID
