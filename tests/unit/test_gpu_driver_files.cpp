// Unit tests for the NVIDIA driver's /proc and /sys files: both NVRM line formats, /proc/devices,
// a GPU's information file, driver releases and PCI addresses, and every malformed form's error.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "gpu/driver_files.hpp"

namespace ROOTLOCK_UNIT_ID {

using rootlock::gpu::CharDevice;
using rootlock::gpu::DriverRelease;
using rootlock::gpu::find_major;
using rootlock::gpu::GpuInformation;
using rootlock::gpu::is_gpu_uuid;
using rootlock::gpu::KernelModuleFlavor;
using rootlock::gpu::nvidia_frontend_major;
using rootlock::gpu::parse_driver_release;
using rootlock::gpu::parse_gpu_information;
using rootlock::gpu::parse_pci_address;
using rootlock::gpu::parse_proc_devices;
using rootlock::gpu::parse_proc_driver_version;
using rootlock::gpu::parse_sys_module_version;

namespace {

// As the driver writes them (gpu-containers.md 4.3).
const std::string k_open_version =
    "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.133.20  Release Build  "
    "(dvs-builder@U16-I3-B03-4-3)  Tue Mar 11 19:18:36 UTC 2025\n"
    "GCC version:  gcc version 12.2.0 (Debian 12.2.0-14) \n";
const std::string k_proprietary_version =
    "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.261.03  Wed Jul 30 06:55:26 UTC 2025\n"
    "GCC version:  gcc version 12.2.0 (Debian 12.2.0-14+deb12u1) \n";

const std::string k_information =
    "Model: \t\t NVIDIA GeForce RTX 3090\n"
    "IRQ:   \t\t 156\n"
    "GPU UUID: \t GPU-6cf00fa7-1a3b-4b2c-9d8e-0123456789ab\n"
    "Video BIOS: \t 94.02.42.00.a9\n"
    "Bus Type: \t PCIe\n"
    "DMA Size: \t 47 bits\n"
    "DMA Mask: \t 0x7fffffffffff\n"
    "Bus Location: \t 0000:01:00.0\n"
    "Device Minor: \t 0\n"
    "GPU Excluded:\t No\n";

// A Debian 12 host with the driver and nvidia-uvm loaded (majors as the kernel assigned them).
const std::string k_devices =
    "Character devices:\n"
    "  1 mem\n"
    "  4 /dev/vc/0\n"
    "  4 tty\n"
    "  5 /dev/tty\n"
    "  5 /dev/console\n"
    " 10 misc\n"
    "195 nvidia-frontend\n"
    "226 drm\n"
    "235 nvidia-nvswitch\n"
    "236 nvidia-caps\n"
    "237 nvidia-uvm\n"
    "254 gpiochip\n"
    "\n"
    "Block devices:\n"
    "  7 loop\n"
    "  8 sd\n"
    "259 blkext\n";

// The UUID the driver writes before the GPU initialised (spelled out: "??-" is a trigraph).
const std::string k_unknown_uuid = "GPU-" + std::string(8, '?') + "-" + std::string(4, '?') + "-" +
                                   std::string(4, '?') + "-" + std::string(4, '?') + "-" +
                                   std::string(12, '?');

std::string release_error(const std::string& text) {
    auto parsed = parse_driver_release(text);
    REQUIRE_FALSE(parsed.ok());
    return parsed.error().text();
}

}  // namespace

TEST_SUITE("rootlock::gpu") {
    TEST_CASE("driver releases keep their text and compare part by part as numbers") {
        auto full = parse_driver_release("470.256.02");
        REQUIRE(full.ok());
        CHECK(full->text == "470.256.02");
        CHECK(full->parts == std::vector<int>{470, 256, 2});
        CHECK(full->branch() == 470);
        CHECK(full->full());
        auto branch = parse_driver_release("580");
        REQUIRE(branch.ok());
        CHECK(branch->branch() == 580);
        CHECK_FALSE(branch->full());
        auto two = parse_driver_release("580.65");
        REQUIRE(two.ok());
        CHECK(two->parts.size() == 2);

        auto r = [](const char* text) { return parse_driver_release(text).value(); };
        CHECK(r("535.54.03") < r("535.54.10"));   // 3 < 10, not "03" > "10"
        CHECK(r("535.104.05") > r("535.54.03"));  // 104 > 54 as numbers
        CHECK(r("570.26") < r("570.124.06"));
        CHECK(r("570.26") < r("570.26.01"));  // a prefix is older
        CHECK(r("580") < r("580.65.06"));
        CHECK(r("470.256.02") == r("470.256.2"));
        CHECK(r("590.44.01") > r("580.95.05"));
    }

    TEST_CASE("malformed driver releases are refused with the reason") {
        struct Case {
            std::string text, error;
        };
        const std::string k_not = " is not a driver release such as 580.65.06: ";
        const Case cases[] = {
            {"", "\"\"" + k_not + "it is empty"},
            {"580.65.06.1", "\"580.65.06.1\"" + k_not + "it has more than three parts"},
            {"580..06", "\"580..06\"" + k_not + "part 2 is empty"},
            {".65", "\".65\"" + k_not + "part 1 is empty"},
            {"580.", "\"580.\"" + k_not + "part 2 is empty"},
            {"580.6x", "\"580.6x\"" + k_not + "part 2 is not a decimal number"},
            {"+580", "\"+580\"" + k_not + "part 1 is not a decimal number"},
            {"-1", "\"-1\"" + k_not + "part 1 is not a decimal number"},
            {" 580", "\" 580\"" + k_not + "part 1 is not a decimal number"},
            {"5800000000", "\"5800000000\"" + k_not + "part 1 has more than 9 digits"},
            {"580.99999999999999999999",
             "\"580.99999999999999999999\"" + k_not + "part 2 has more than 9 digits"},
            {"0.1.2", "\"0.1.2\"" + k_not + "branch 0 does not exist"},
            {std::string("58\0", 3), "\"58\\x00\"" + k_not + "part 1 is not a decimal number"},
        };
        for (const Case& c : cases) {
            CAPTURE(c.text);
            CHECK(release_error(c.text) == c.error);
        }
    }

    TEST_CASE("/sys/module/nvidia/version gives the bare release") {
        auto parsed = parse_sys_module_version("570.124.06\n", "/sys/module/nvidia/version");
        REQUIRE(parsed.ok());
        CHECK(parsed->text == "570.124.06");
        CHECK(parsed->branch() == 570);
        auto no_newline = parse_sys_module_version("575.57.08", "v");
        REQUIRE(no_newline.ok());
        CHECK(no_newline->text == "575.57.08");
        auto blanks = parse_sys_module_version(" 580.65.06 \n\n", "v");
        REQUIRE(blanks.ok());
        CHECK(blanks->text == "580.65.06");
    }

    TEST_CASE("a malformed /sys/module/nvidia/version is refused at its line") {
        struct Case {
            std::string text, error;
        };
        const std::string k_not = " is not a driver release such as 580.65.06: ";
        const Case cases[] = {
            {"", "v: the file is empty; a driver release such as 570.124.06 was expected"},
            {"\n \n", "v: the file is empty; a driver release such as 570.124.06 was expected"},
            {"570\n", "v:1: \"570\"" + k_not + "a kernel module's release has two or three parts"},
            {"570.x\n", "v:1: \"570.x\"" + k_not + "part 2 is not a decimal number"},
            {"\n570.124.06\n", "v:1: \"\"" + k_not + "it is empty"},
            {"570.124.06\nextra\n", "v:2: \"extra\" follows the release; the file holds one line"},
            {"570.124.06\r\n",
             "v:1: \"570.124.06\\x0d\"" + k_not + "part 3 is not a decimal number"},
            {"570.124.06 beta\n",
             "v:1: \"570.124.06 beta\"" + k_not + "part 3 is not a decimal number"},
        };
        for (const Case& c : cases) {
            CAPTURE(c.text);
            auto parsed = parse_sys_module_version(c.text, "v");
            REQUIRE_FALSE(parsed.ok());
            CHECK(parsed.error().text() == c.error);
        }
    }

    TEST_CASE("the open module's NVRM line gives release, flavour, architecture and GCC") {
        auto parsed = parse_proc_driver_version(k_open_version, "/proc/driver/nvidia/version");
        REQUIRE(parsed.ok());
        CHECK(parsed->release.text == "570.133.20");
        CHECK(parsed->flavor == KernelModuleFlavor::open);
        CHECK(parsed->architecture == "x86_64");
        CHECK(parsed->build ==
              "Release Build (dvs-builder@U16-I3-B03-4-3) Tue Mar 11 19:18:36 UTC 2025");
        CHECK(parsed->gcc == "gcc version 12.2.0 (Debian 12.2.0-14)");
    }

    TEST_CASE("the proprietary module's NVRM line gives release and flavour") {
        auto parsed = parse_proc_driver_version(k_proprietary_version, "version");
        REQUIRE(parsed.ok());
        CHECK(parsed->release.text == "535.261.03");
        CHECK(parsed->flavor == KernelModuleFlavor::proprietary);
        CHECK(parsed->architecture == "x86_64");
        CHECK(parsed->build == "Wed Jul 30 06:55:26 UTC 2025");
        CHECK(parsed->gcc == "gcc version 12.2.0 (Debian 12.2.0-14+deb12u1)");
    }

    TEST_CASE("aarch64 NVRM lines of both modules are read, the GCC line optional") {
        auto open = parse_proc_driver_version(
            "NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  575.57.08  Release Build  "
            "(dvs-builder@U22-I3-AE18-23-3)  Wed May 21 03:36:53 UTC 2025\n",
            "version");
        REQUIRE(open.ok());
        CHECK(open->flavor == KernelModuleFlavor::open);
        CHECK(open->architecture == "aarch64");
        CHECK(open->release.text == "575.57.08");
        CHECK(open->gcc.empty());
        auto proprietary = parse_proc_driver_version(
            "NVRM version: NVIDIA UNIX aarch64 Kernel Module  550.163.01  Tue Apr  8 12:42:25 UTC "
            "2025\nGCC version:  gcc version 12.2.0\nextra line\n",
            "version");
        REQUIRE(proprietary.ok());
        CHECK(proprietary->flavor == KernelModuleFlavor::proprietary);
        CHECK(proprietary->architecture == "aarch64");
        CHECK(proprietary->release.text == "550.163.01");
        CHECK(proprietary->build == "Tue Apr 8 12:42:25 UTC 2025");
        CHECK(proprietary->gcc == "gcc version 12.2.0");
        auto bare = parse_proc_driver_version(
            "NVRM version: NVIDIA UNIX x86_64 Kernel Module  470.256.02", "version");
        REQUIRE(bare.ok());
        CHECK(bare->release.text == "470.256.02");
        CHECK(bare->build.empty());
    }

    TEST_CASE("a malformed /proc/driver/nvidia/version is refused at its line") {
        struct Case {
            std::string text, error;
        };
        const std::string k_not = " is not a driver release such as 580.65.06: ";
        const Case cases[] = {
            {"", "version: the file is empty; an \"NVRM version:\" line was expected"},
            {"GCC version:  gcc version 12.2.0\n",
             "version:1: \"GCC version:  gcc version 12.2.0\" does not start with \"NVRM "
             "version:\""},
            {"NVRM version: NVIDIA Linux x86_64 Kernel Module  570.86.15\n",
             "version:1: the NVRM line does not go on with \"NVIDIA UNIX\""},
            {"NVRM version:\n", "version:1: the NVRM line does not go on with \"NVIDIA UNIX\""},
            {"NVRM version: NVIDIA UNIX x86_64 Driver  570.86.15\n",
             "version:1: the NVRM line has no \"Kernel Module\""},
            {"NVRM version: NVIDIA UNIX Kernel Module  570.86.15\n",
             "version:1: the NVRM line has not one word (an architecture, or \"Open\") between "
             "\"NVIDIA UNIX\" and \"Kernel Module\""},
            {"NVRM version: NVIDIA UNIX Open x86_64 Kernel Module  570.86.15\n",
             "version:1: the NVRM line has not one word (an architecture, or \"Open\") between "
             "\"NVIDIA UNIX\" and \"Kernel Module\""},
            {"NVRM version: NVIDIA UNIX Open Kernel Module  575.57.08  Release Build\n",
             "version:1: the open module's NVRM line has no \"for ARCHITECTURE\" after \"Kernel "
             "Module\""},
            {"NVRM version: NVIDIA UNIX Open Kernel Module for\n",
             "version:1: the open module's NVRM line has no \"for ARCHITECTURE\" after \"Kernel "
             "Module\""},
            {"NVRM version: NVIDIA UNIX x86_64 Kernel Module\n",
             "version:1: the NVRM line has no release after the module's name"},
            {"NVRM version: NVIDIA UNIX Open Kernel Module for x86_64\n",
             "version:1: the NVRM line has no release after the module's name"},
            {"NVRM version: NVIDIA UNIX x86/64 Kernel Module  570.86.15\n",
             "version:1: architecture \"x86/64\" is not a word such as x86_64"},
            {std::string("NVRM version: NVIDIA UNIX x\0 Kernel Module  570.86.15\n", 53),
             "version:1: architecture \"x\\x00\" is not a word such as x86_64"},
            {"NVRM version: NVIDIA UNIX x86_64 Kernel Module  Wed Jan 22\n",
             "version:1: \"Wed\"" + k_not + "part 1 is not a decimal number"},
            {"NVRM version: NVIDIA UNIX x86_64 Kernel Module  570\n",
             "version:1: \"570\"" + k_not + "a kernel module's release has two or three parts"},
            {"NVRM version: NVIDIA UNIX x86_64 Kernel Module  570.86.15.2  Wed\n",
             "version:1: \"570.86.15.2\"" + k_not + "it has more than three parts"},
        };
        for (const Case& c : cases) {
            CAPTURE(c.text);
            auto parsed = parse_proc_driver_version(c.text, "version");
            REQUIRE_FALSE(parsed.ok());
            CHECK(parsed.error().text() == c.error);
        }
    }

    TEST_CASE("/proc/devices gives every character device and the NVIDIA majors") {
        auto parsed = parse_proc_devices(k_devices, "/proc/devices");
        REQUIRE(parsed.ok());
        const auto& devices = parsed.value();
        REQUIRE(devices.size() == 12);
        CHECK(devices[0] == CharDevice{1, "mem"});
        CHECK(devices[1] == CharDevice{4, "/dev/vc/0"});
        CHECK(devices[2] == CharDevice{4, "tty"});
        CHECK(devices.back() == CharDevice{254, "gpiochip"});
        CHECK(find_major(devices, "nvidia-uvm") == 237);
        CHECK(find_major(devices, "nvidia-caps") == 236);
        CHECK(find_major(devices, "nvidia-nvswitch") == 235);
        CHECK(find_major(devices, "tty") == 4);
        CHECK(find_major(devices, "loop") == std::nullopt);  // a block device
        CHECK(find_major(devices, "nvidia") == std::nullopt);
        CHECK(find_major(devices, "nvidia-uvm-tools") == std::nullopt);
        CHECK(nvidia_frontend_major(devices) == 195);
    }

    TEST_CASE("an older driver's nvidia line stands in for nvidia-frontend") {
        auto parsed =
            parse_proc_devices("Character devices:\n195 nvidia\n511 nvidia-uvm\n", "devices");
        REQUIRE(parsed.ok());
        CHECK(nvidia_frontend_major(parsed.value()) == 195);
        CHECK(find_major(parsed.value(), "nvidia-uvm") == 511);
        auto none = parse_proc_devices("Character devices:\n  1 mem\n", "devices");
        REQUIRE(none.ok());
        CHECK(nvidia_frontend_major(none.value()) == std::nullopt);
        auto empty = parse_proc_devices("Character devices:\n\nBlock devices:\n", "devices");
        REQUIRE(empty.ok());
        CHECK(empty->empty());
    }

    TEST_CASE("a malformed /proc/devices is refused at its line") {
        struct Case {
            std::string text, error;
        };
        const std::string k_major =
            " is not \"MAJOR NAME\": the major is not a number from 0 to 4095";
        const Case cases[] = {
            {"", "devices: no \"Character devices:\" section"},
            {"Block devices:\n  7 loop\n", "devices: no \"Character devices:\" section"},
            {"Character devices:\nmem 1\n", "devices:2: \"mem 1\"" + k_major},
            {"Character devices:\n  1 mem\n-1 x\n", "devices:3: \"-1 x\"" + k_major},
            {"Character devices:\n4096 big\n", "devices:2: \"4096 big\"" + k_major},
            {"Character devices:\n99999999999999999999999 big\n",
             "devices:2: \"99999999999999999999999 big\"" + k_major},
            {"Character devices:\n195\n", "devices:2: \"195\" is not \"MAJOR NAME\": no name"},
            {"Character devices:\n195 nv\x01idia\n",
             "devices:2: \"195 nv\\x01idia\" is not \"MAJOR NAME\": the name holds a control byte"},
            {"Character devices:\n195 nvidia\r\n",
             "devices:2: \"195 nvidia\\x0d\" is not \"MAJOR NAME\": the name holds a control byte"},
        };
        for (const Case& c : cases) {
            CAPTURE(c.text);
            auto parsed = parse_proc_devices(c.text, "devices");
            REQUIRE_FALSE(parsed.ok());
            CHECK(parsed.error().text() == c.error);
        }
    }

    TEST_CASE("a GPU's information file gives model, UUID, bus and device minor") {
        auto parsed = parse_gpu_information(k_information,
                                            "/proc/driver/nvidia/gpus/0000:01:00.0/information");
        REQUIRE(parsed.ok());
        const GpuInformation& gpu = parsed.value();
        CHECK(gpu.model == "NVIDIA GeForce RTX 3090");
        CHECK(gpu.uuid == "GPU-6cf00fa7-1a3b-4b2c-9d8e-0123456789ab");
        CHECK(gpu.uuid_known());
        CHECK(gpu.bus.text() == "0000:01:00.0");
        CHECK(gpu.device_minor == 0);
        CHECK(gpu.irq == 156);
        CHECK(gpu.excluded == false);
        CHECK(gpu.video_bios == "94.02.42.00.a9");
        CHECK(gpu.bus_type == "PCIe");
        CHECK(gpu.dma_size == "47 bits");
        CHECK(gpu.dma_mask == "0x7fffffffffff");
        REQUIRE(gpu.fields.size() == 10);
        CHECK(gpu.fields[3].first == "Video BIOS");
        CHECK(gpu.fields[9].second == "No");
    }

    TEST_CASE("an uninitialised GPU's question marks and unknown keys are accepted") {
        auto parsed = parse_gpu_information(
            "Model: \t\t Tesla T4\n"
            "IRQ:   \t\t 35\n"
            "GPU UUID: \t " +
                k_unknown_uuid +
                "\n"
                "Video BIOS: \t ??.??.??.??.??\n"
                "Bus Type: \t PCIe\n"
                "Bus Location: \t 0000:AF:00.0\n"
                "Device Minor: \t 3\n"
                "Firmware: \t 570.124.06\n"
                "Firmware: \t again\n"
                "GPU Excluded:\t Yes\n",
            "information");
        REQUIRE(parsed.ok());
        CHECK(parsed->model == "Tesla T4");
        CHECK_FALSE(parsed->uuid_known());
        CHECK(parsed->bus.text() == "0000:af:00.0");
        CHECK(parsed->bus.bus == 0xaf);
        CHECK(parsed->device_minor == 3);
        CHECK(parsed->excluded == true);
        CHECK(parsed->video_bios == "??.??.??.??.??");
        CHECK(parsed->fields.size() == 10);
        auto minimal = parse_gpu_information(
            "Model: A\nGPU UUID: GPU-00000000-0000-0000-0000-000000000000\nBus Location: "
            "00000001:02:1f.7\nDevice Minor: 254\n",
            "information");
        REQUIRE(minimal.ok());
        CHECK(minimal->irq == std::nullopt);
        CHECK(minimal->excluded == std::nullopt);
        CHECK(minimal->device_minor == 254);
        CHECK(minimal->bus.text() == "0001:02:1f.7");
    }

    TEST_CASE("a malformed information file is refused at its line") {
        struct Case {
            std::string text, error;
        };
        const std::string k_uuid = "GPU UUID: GPU-6cf00fa7-1a3b-4b2c-9d8e-0123456789ab\n";
        const std::string k_rest = k_uuid + "Bus Location: 0000:01:00.0\nDevice Minor: 0\n";
        const Case cases[] = {
            {"", "info: no \"Model\" line"},
            {"Model: A\n", "info: no \"GPU UUID\" line"},
            {"Model: A\n" + k_uuid, "info: no \"Bus Location\" line"},
            {"Model: A\n" + k_uuid + "Bus Location: 0000:01:00.0\n",
             "info: no \"Device Minor\" line"},
            {"Model A\n" + k_rest, "info:1: \"Model A\" is not \"Key: value\""},
            {": A\n" + k_rest, "info:1: \": A\" is not \"Key: value\""},
            {"Model:\t\n" + k_rest, "info:1: Model is empty"},
            {"Model: A\nModel: B\n" + k_rest, "info:2: Model is given twice"},
            {"Model: A\x1b[31m\n" + k_rest, "info:1: \"Model: A\\x1b[31m\" holds a control byte"},
            {"Model: A\n" + k_rest + "GPU UUID: GPU-6cf00fa7-1a3b-4b2c-9d8e-0123456789ab\n",
             "info:5: GPU UUID is given twice"},
            {"Model: A\nGPU UUID: 6cf00fa7-1a3b-4b2c-9d8e-0123456789ab\n",
             "info:2: GPU UUID \"6cf00fa7-1a3b-4b2c-9d8e-0123456789ab\" is not GPU- and "
             "8-4-4-4-12 hex digits"},
            {"Model: A\nGPU UUID: GPU-6cf00fa7-1a3b-4b2c-9d8e-0123456789a\n",
             "info:2: GPU UUID \"GPU-6cf00fa7-1a3b-4b2c-9d8e-0123456789a\" is not GPU- and "
             "8-4-4-4-12 hex digits"},
            {"Model: A\nGPU UUID: GPU-6cf00fa7x1a3b-4b2c-9d8e-0123456789ab\n",
             "info:2: GPU UUID \"GPU-6cf00fa7x1a3b-4b2c-9d8e-0123456789ab\" is not GPU- and "
             "8-4-4-4-12 hex digits"},
            {"Model: A\nGPU UUID: GPU-6cf00fa7-1a3b-4b2c-9d8e-0123456789ag\n",
             "info:2: GPU UUID \"GPU-6cf00fa7-1a3b-4b2c-9d8e-0123456789ag\" is not GPU- and "
             "8-4-4-4-12 hex digits"},
            {"Model: A\n" + k_uuid + "Bus Location: 01:00.0\n",
             "info:3: Bus Location \"01:00.0\" is not a PCI address such as 0000:01:00.0"},
            {"Model: A\n" + k_uuid + "Bus Location: 0000:01:20.0\n",
             "info:3: Bus Location \"0000:01:20.0\" is not a PCI address such as 0000:01:00.0"},
            {"Model: A\n" + k_uuid + "Bus Location: 0000:01:00.8\n",
             "info:3: Bus Location \"0000:01:00.8\" is not a PCI address such as 0000:01:00.0"},
            {"Model: A\n" + k_uuid + "Bus Location: 000000000:01:00.0\n",
             "info:3: Bus Location \"000000000:01:00.0\" is not a PCI address such as "
             "0000:01:00.0"},
            {"Model: A\n" + k_uuid + "Bus Location: 0000:01:00.0\nDevice Minor: 255\n",
             "info:4: Device Minor \"255\" is not a number from 0 to 254"},
            {"Model: A\n" + k_uuid + "Bus Location: 0000:01:00.0\nDevice Minor: -1\n",
             "info:4: Device Minor \"-1\" is not a number from 0 to 254"},
            {"Model: A\n" + k_uuid +
                 "Bus Location: 0000:01:00.0\nDevice Minor: 18446744073709551616\n",
             "info:4: Device Minor \"18446744073709551616\" is not a number from 0 to 254"},
            {"Model: A\n" + k_rest + "IRQ: 0x20\n", "info:5: IRQ \"0x20\" is not a decimal number"},
            {"Model: A\n" + k_rest + "IRQ: 2147483648\n",
             "info:5: IRQ \"2147483648\" is not a decimal number"},
            {"Model: A\n" + k_rest + "GPU Excluded: yes\n",
             "info:5: GPU Excluded \"yes\" is not Yes or No"},
        };
        for (const Case& c : cases) {
            CAPTURE(c.text);
            auto parsed = parse_gpu_information(c.text, "info");
            REQUIRE_FALSE(parsed.ok());
            CHECK(parsed.error().text() == c.error);
        }
    }

    TEST_CASE("PCI addresses read in either domain width and case") {
        auto proc = parse_pci_address("0000:01:00.0");
        auto smi = parse_pci_address("00000000:01:00.0");
        REQUIRE(proc);
        REQUIRE(smi);
        CHECK(*proc == *smi);
        auto upper = parse_pci_address("0000:AF:1F.7");
        REQUIRE(upper);
        CHECK(upper->bus == 0xaf);
        CHECK(upper->device == 0x1f);
        CHECK(upper->function == 7);
        CHECK(upper->text() == "0000:af:1f.7");
        CHECK(parse_pci_address("10000:01:00.0")->text() == "10000:01:00.0");
        CHECK(parse_pci_address("ffffffff:ff:1f.7")->domain == 0xffffffffU);
        for (const char* bad : {"", "0000:01:00", "0000:1:00.0", "0000:01:00.00", "0000-01-00.0",
                                ":01:00.0", "000g:01:00.0", "0000:01:00.0 ", "0000:01:00:0"}) {
            CAPTURE(bad);
            CHECK_FALSE(parse_pci_address(bad).has_value());
        }
    }

    TEST_CASE("GPU UUIDs are GPU- and the 8-4-4-4-12 shape") {
        CHECK(is_gpu_uuid("GPU-6cf00fa7-1a3b-4b2c-9d8e-0123456789ab"));
        CHECK(is_gpu_uuid("GPU-6CF00FA7-1A3B-4B2C-9D8E-0123456789AB"));
        CHECK(is_gpu_uuid(k_unknown_uuid));
        CHECK_FALSE(is_gpu_uuid("MIG-6cf00fa7-1a3b-4b2c-9d8e-0123456789ab"));
        CHECK_FALSE(is_gpu_uuid("GPU-6cf00fa71a3b4b2c9d8e0123456789ab"));
        CHECK_FALSE(is_gpu_uuid(""));
    }
}

}  // namespace ROOTLOCK_UNIT_ID
