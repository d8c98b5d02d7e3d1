// GPU model names, compute capabilities, nvcc architecture names, nvidia-smi's CSV and CUDA
// versions against the driver table (builder/gpu). The first byte picks ('0' + N, modulo 5).
#include "fuzz_common.hpp"
#include "gpu/compute_capability.hpp"
#include "gpu/cuda_driver_table.hpp"
#include "gpu/gpu_table.hpp"
#include "gpu/nvidia_smi.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace rootlock;
    if (size == 0)
        return 0;
    const std::string_view text = fuzz::as_text(data + 1, size - 1);
    switch (static_cast<uint8_t>(data[0] - '0') % 5) {
        case 0: {
            auto match = gpu::lookup_gpu_model(text);
            if (match && (match->architecture.empty() || match->pattern.empty()))
                fuzz::fail("a match without architecture or pattern:", util::printable(text));
            break;
        }
        case 1: {
            auto capability = gpu::parse_compute_capability(text);
            if (fuzz::check(capability)) {
                if (capability->text() != text)
                    fuzz::fail("a capability that writes back otherwise:", util::printable(text));
                if (gpu::from_sm(capability->sm()) != *capability)
                    fuzz::fail("a capability whose SM number does not read back:", text);
            }
            break;
        }
        case 2: {
            auto name = gpu::parse_sm_name(text);
            if (fuzz::check(name) && name->text() != text)
                fuzz::fail("an architecture name that writes back otherwise:",
                           util::printable(text));
            break;
        }
        case 3: {
            auto gpus = gpu::parse_nvidia_smi(text, "nvidia-smi");
            if (fuzz::check(gpus)) {
                for (const auto& row : *gpus) {
                    if (!gpu::same_pci_bus(row.bus_text, row.bus.text()))
                        fuzz::fail("a bus id unlike its own address:",
                                   util::printable(row.bus_text));
                    if (!util::is_one_line(row.name) || !gpu::is_gpu_uuid(row.uuid))
                        fuzz::fail("a row with an unprintable name or a bad UUID");
                    (void)gpu::lookup_gpu_model(row.name);
                }
            }
            break;
        }
        default: {
            // A CUDA version, then a driver release on the next line: the verdict's one line.
            auto [first, second] = fuzz::split_first_line(text);
            auto cuda = gpu::parse_cuda_version(first);
            auto driver = gpu::parse_driver_release(second);
            if (fuzz::check(cuda) && fuzz::check(driver)) {
                const auto verdict = gpu::judge_driver(*cuda, *driver);
                if (verdict.message.empty() || !util::is_one_line(verdict.message))
                    fuzz::fail("a verdict that is not one printable line:", verdict.message);
                (void)gpu::max_cuda_for_driver(*driver);
            }
            break;
        }
    }
    return 0;
}
