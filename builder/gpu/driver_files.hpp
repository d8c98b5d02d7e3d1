// The NVIDIA kernel driver's own files as text: /sys/module/nvidia/version, /proc/driver/nvidia/
// version, /proc/devices and each GPU's information file (gpu-containers.md 4.3), and releases.
#pragma once

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/result.hpp"

namespace rootlock::gpu {

// A driver release: a branch ("580") or a full release ("580.65.06", "570.26"). Compared part by
// part as numbers, so "470.256.02" and "470.256.2" are equal; a shorter release that is a prefix
// of a longer one is older ("580" < "580.65.06"), which makes a bare branch older than every
// release of it.
struct DriverRelease {
    std::string text;        // as written, leading zeros kept ("535.54.03")
    std::vector<int> parts;  // one to three numbers; parts[0] is the branch

    int branch() const { return parts.empty() ? 0 : parts.front(); }
    bool full() const { return parts.size() > 1; }

    friend std::strong_ordering operator<=>(const DriverRelease& a, const DriverRelease& b) {
        return a.parts <=> b.parts;
    }
    friend bool operator==(const DriverRelease& a, const DriverRelease& b) {
        return a.parts == b.parts;
    }
};

// One to three dot-separated decimal numbers of at most nine digits each, the first not 0:
// "580", "580.65", "580.65.06". Errors have no location (the caller's text is the context).
util::Result<DriverRelease> parse_driver_release(std::string_view text);

// /sys/module/nvidia/version: the release alone on one line ("570.124.06\n"); two or three parts.
util::Result<DriverRelease> parse_sys_module_version(std::string_view text, std::string_view name);

// Which kernel module the host runs: NVIDIA's proprietary one or the open one. Their /proc version
// lines differ, and a parser keyed on one misses the other (gpu-containers.md 4.3).
enum class KernelModuleFlavor { proprietary, open };

// /proc/driver/nvidia/version.
struct ProcDriverVersion {
    DriverRelease release;
    KernelModuleFlavor flavor = KernelModuleFlavor::proprietary;
    std::string architecture;  // "x86_64", "aarch64", as the module names it
    // The rest of the NVRM line after the release, blanks collapsed, and the GCC line's text
    // ("gcc version 12.2.0 (Debian 12.2.0-14)"); control bytes written \xNN (util::printable).
    std::string build;
    std::string gcc;
};

// Its first line is one of
//   NVRM version: NVIDIA UNIX x86_64 Kernel Module  570.86.15  Wed Jan 22 ...
//   NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  575.57.08  Release Build  (...) ...
// (aarch64 likewise); a second "GCC version:" line is kept as text, other lines are ignored.
util::Result<ProcDriverVersion> parse_proc_driver_version(std::string_view text,
                                                          std::string_view name);

// One line of /proc/devices' "Character devices:" section: "195 nvidia-frontend".
struct CharDevice {
    int major = 0;
    std::string name;

    auto operator<=>(const CharDevice&) const = default;
};

// Every character device of /proc/devices, in file order (a major may appear twice: "4 tty" and
// "4 /dev/vc/0"); the block devices are not read.
util::Result<std::vector<CharDevice>> parse_proc_devices(std::string_view text,
                                                         std::string_view name);

// The major of the first device named exactly `name` ("nvidia-uvm", "nvidia-caps", ...).
std::optional<int> find_major(const std::vector<CharDevice>& devices, std::string_view name);

// The major of /dev/nvidia0.. and /dev/nvidiactl: "nvidia-frontend", else (older drivers)
// "nvidia"; 195 in practice, but read, not assumed.
std::optional<int> nvidia_frontend_major(const std::vector<CharDevice>& devices);

// A PCI address, domain:bus:device.function. /proc writes the domain with four hex digits
// ("0000:01:00.0"), nvidia-smi with eight ("00000000:01:00.0"); either case.
struct PciAddress {
    uint32_t domain = 0;
    uint8_t bus = 0;
    uint8_t device = 0;    // 0 to 0x1f
    uint8_t function = 0;  // 0 to 7

    auto operator<=>(const PciAddress&) const = default;
    std::string text() const;  // "0000:01:00.0", lowercase, as /proc and sysfs write it
};

// A domain of 1 to 8 hex digits, then exactly 2, 2 and 1; nullopt for anything else.
std::optional<PciAddress> parse_pci_address(std::string_view text);

// /proc/driver/nvidia/gpus/<bus>/information.
struct GpuInformation {
    std::string model;     // "NVIDIA GeForce RTX 3090"
    std::string uuid;      // "GPU-6cf00fa7-...", or "GPU-????????-..." before the GPU initialised
    PciAddress bus;        // Bus Location
    int device_minor = 0;  // /dev/nvidia<minor>: 0 to 254 (255 is nvidiactl)
    std::optional<int> irq;
    std::optional<bool> excluded;  // GPU Excluded: Yes/No, absent on older drivers
    std::string video_bios, bus_type, dma_size, dma_mask;
    // Every "Key: value" line, in order, with its blanks trimmed (the above come from here).
    std::vector<std::pair<std::string, std::string>> fields;

    bool uuid_known() const;  // false while the driver writes question marks
};

// "Key: \t value" lines; Model, GPU UUID, Bus Location and Device Minor are required, the other
// known keys checked when present, unknown keys kept in `fields`.
util::Result<GpuInformation> parse_gpu_information(std::string_view text, std::string_view name);

// "GPU-" and 8-4-4-4-12 hex digits, or the same shape of question marks.
bool is_gpu_uuid(std::string_view text);

}  // namespace rootlock::gpu
