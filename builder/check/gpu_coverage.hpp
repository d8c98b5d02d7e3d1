// GPU architecture coverage: every object's device code read from its fatbin headers, judged for
// each target GPU by CUDA's run rules, so "no kernel image is available for execution on the
// device" is said before the first kernel (gpu-containers.md 5).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "check/problem.hpp"
#include "fs/file_tree.hpp"
#include "gpu/compute_capability.hpp"
#include "gpu/fatbin.hpp"
#include "util/byte_source.hpp"

namespace rootlock::check {

// A GPU the image must run on: one of the host's, a --gpu, or the recipe's [cuda] gpus.
struct GpuTarget {
    gpu::ComputeCapability capability;
    std::string source;  // "host GPU 0 (NVIDIA GeForce RTX 3090)", "--gpu", "recipe"
};

// One object's device code, as reports show it.
struct DeviceCode {
    std::vector<std::string> cubins;  // "sm_75", "sm_90a", sorted by architecture
    std::vector<std::string> ptx;     // "compute_90"
    bool compressed = false;
    size_t entries = 0;
};

struct DeviceCodeScan {
    std::map<std::string, DeviceCode> objects;  // canonical path -> its device code
    std::map<std::string, gpu::FatbinSummary> summaries;
    std::vector<std::string> notes;  // objects whose bytes the tree does not hold, bad fatbins
};

// Reads the fatbin headers of each of `paths` the tree can open (a directory or an overlay over
// one); for the others takes `known` (device code read before, by path), and a tarball read once
// has neither, which one note says when `say_unreadable` is set: coverage was asked for. Objects
// without device code are left out. A fatbin that does not parse is a note naming it (ld.so
// loads it all the same).
DeviceCodeScan scan_device_code(const fs::FileTree& tree, const std::vector<std::string>& paths,
                                bool say_unreadable = true,
                                const std::map<std::string, gpu::FatbinSummary>& known = {});

// Device code read while a tarball or an OCI image streams by: observers for
// fs::TarOptions::observe_elf, each running gpu::FatbinStreamScanner over one ELF member, that
// keep what they find by canonical path (a later layer's member replaces an earlier one's), for
// scan_device_code's `known`. Copies share what they collect.
class StreamedDeviceCode {
  public:
    StreamedDeviceCode();
    std::function<std::unique_ptr<util::StreamObserver>(const std::string& path, uint64_t size)>
    observer() const;
    // Every object read, by path; one without device code has an empty summary.
    std::map<std::string, gpu::FatbinSummary> found() const;
    // "device code not read: NAME@0xOFF: ..." for members whose device code could not be read.
    std::vector<std::string> notes() const;

    struct State;  // what the observers share; defined in gpu_coverage.cpp

  private:
    std::shared_ptr<State> m_state;
};

// `gpu-arch-missing` (error) for each GPU some object has no cubin or PTX for, and
// `gpu-arch-ptx-only` (warning) for each GPU some object reaches only through PTX, each listing
// the objects with what they hold.
std::vector<Problem> coverage_problems(const DeviceCodeScan& scan,
                                       const std::vector<GpuTarget>& gpus);

// The device code of one object as JSON: {"cubin": [...], "ptx": [...], "compressed": bool}.
nlohmann::ordered_json device_code_json(const DeviceCode& code);
// As text for `ldd` and `why`: "sm_75 sm_86 compute_86".
std::string device_code_text(const DeviceCode& code);
// One object's device code, or nullopt when it has none or the tree cannot read its bytes.
std::optional<DeviceCode> device_code_of(const fs::FileTree& tree, const std::string& path);

}  // namespace rootlock::check
