// The NVIDIA driver's /proc and /sys files (builder/gpu/driver_files). The first byte picks the
// parser ('0' + N, any byte taken modulo 5), the rest is the file; seeds.py writes them so.
#include "fuzz_common.hpp"
#include "gpu/driver_files.hpp"

namespace {

using namespace rootlock;

void check_release(const gpu::DriverRelease& release) {
    if (release.parts.empty() || release.parts.size() > 3 || release.branch() <= 0)
        fuzz::fail("a release without one to three parts:", util::printable(release.text));
    auto again = gpu::parse_driver_release(release.text);
    if (!again.ok() || !(again.value() == release))
        fuzz::fail("a release that does not read back:", util::printable(release.text));
}

void check_bus(const gpu::PciAddress& bus) {
    auto again = gpu::parse_pci_address(bus.text());
    if (!again || !(*again == bus))
        fuzz::fail("a PCI address that does not read back:", bus.text());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0)
        return 0;
    const std::string_view text = fuzz::as_text(data + 1, size - 1);
    switch (static_cast<uint8_t>(data[0] - '0') % 5) {
        case 0: {
            auto release = gpu::parse_sys_module_version(text, "/sys/module/nvidia/version");
            if (fuzz::check(release)) {
                if (!release->full())
                    fuzz::fail("a module release that is a bare branch:", release->text);
                check_release(*release);
            }
            break;
        }
        case 1: {
            auto version = gpu::parse_proc_driver_version(text, "/proc/driver/nvidia/version");
            if (fuzz::check(version)) {
                check_release(version->release);
                if (!util::is_one_line(version->build) || !util::is_one_line(version->gcc) ||
                    !util::is_one_line(version->architecture) || version->architecture.empty())
                    fuzz::fail("NVRM text that is not one printable line");
            }
            break;
        }
        case 2: {
            auto devices = gpu::parse_proc_devices(text, "/proc/devices");
            if (fuzz::check(devices)) {
                for (const auto& device : *devices) {
                    if (device.major < 0 || device.major > 4095 || device.name.empty() ||
                        !util::is_one_line(device.name))
                        fuzz::fail("a character device out of range:",
                                   util::printable(device.name));
                    if (!gpu::find_major(*devices, device.name))
                        fuzz::fail("a device find_major does not find:", device.name);
                }
                (void)gpu::nvidia_frontend_major(*devices);
            }
            break;
        }
        case 3: {
            auto gpu_info = gpu::parse_gpu_information(text, "information");
            if (fuzz::check(gpu_info)) {
                if (gpu_info->model.empty() || !util::is_one_line(gpu_info->model))
                    fuzz::fail("a model that is not one printable line");
                if (!gpu::is_gpu_uuid(gpu_info->uuid))
                    fuzz::fail("a UUID of the wrong shape:", util::printable(gpu_info->uuid));
                if (gpu_info->device_minor < 0 || gpu_info->device_minor > 254)
                    fuzz::fail("a device minor out of range");
                check_bus(gpu_info->bus);
                (void)gpu_info->uuid_known();
            }
            break;
        }
        default: {
            // Two releases, one a line: each read back, and their order consistent.
            auto [first, second] = fuzz::split_first_line(text);
            auto a = gpu::parse_driver_release(first);
            auto b = gpu::parse_driver_release(second);
            if (fuzz::check(a))
                check_release(*a);
            if (fuzz::check(b))
                check_release(*b);
            if (a.ok() && b.ok() && ((*a < *b) == (*b < *a) && !(*a == *b)))
                fuzz::fail("releases that order both ways or neither:", first);
            if (auto bus = gpu::parse_pci_address(first))
                check_bus(*bus);
            break;
        }
    }
    return 0;
}
