// What a GPU host gives a container, as one plain model: the driver, its GPUs, its device nodes
// and the user-space files injected at their container paths, read from files or from CDI specs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpu/compute_capability.hpp"

namespace rootlock::host {

// Where the facts came from: the host's own files, as `nvidia-ctk cdi generate` finds them, or
// the CDI specs the host already publishes (which win where present: gpu-containers.md 1.1).
enum class FactsSource { files, cdi };

enum class ModuleFlavor { unknown, proprietary, open };

struct DriverFacts {
    std::string version;  // "535.261.03"; empty when no driver was found
    ModuleFlavor flavor = ModuleFlavor::unknown;
    // The file the version was read from: "/sys/module/nvidia/version",
    // "/proc/driver/nvidia/version", or the libcuda whose name carries it (no module loaded).
    std::string version_from;
};

struct GpuFacts {
    std::string model;  // "NVIDIA GeForce RTX 3090"
    std::string uuid;   // "GPU-6cf00fa7-..."
    std::string bus;    // "0000:01:00.0"
    int minor = -1;     // /dev/nvidia<minor>
    std::optional<gpu::ComputeCapability> compute_capability;
    // "nvidia-smi", "gpu table" or empty when unknown, so a report can say so plainly.
    std::string compute_capability_from;
};

struct DeviceNode {
    std::string path;       // inside the container ("/dev/nvidia0")
    std::string host_path;  // on the host, as the host sees it (without --host-root)
    char type = 'c';        // 'c' or 'b'
    int64_t major = -1;     // -1: not known (a CDI node to be stat'ed at start, and absent)
    int64_t minor = -1;
    uint32_t mode = 0;  // permission bits
    uint32_t uid = 0;
    uint32_t gid = 0;
    bool present = false;  // the node exists on the host now
    // Which GPU minor the node belongs to, -1 for the control nodes every GPU needs.
    int gpu_minor = -1;
};

enum class InjectedKind { library, binary, firmware, socket, other };

struct InjectedFile {
    std::string host_path;       // as the host sees it
    std::string container_path;  // where the container sees it (the same path, as nvidia-ctk)
    InjectedKind kind = InjectedKind::other;
};

// A link the container gets beside the injected files (CDI's create-symlinks hook):
// `path` -> `target`, e.g. /usr/lib/x86_64-linux-gnu/libcuda.so -> libcuda.so.1.
struct InjectedLink {
    std::string path;
    std::string target;
};

struct HostFacts {
    FactsSource source = FactsSource::files;
    std::string host_root;               // "/" or the directory given
    std::vector<std::string> cdi_specs;  // the spec files read, for source == cdi
    DriverFacts driver;
    std::vector<GpuFacts> gpus;
    std::vector<DeviceNode> nodes;
    std::optional<int> uvm_major;  // /proc/devices' nvidia-uvm line
    std::vector<InjectedFile> files;
    std::vector<InjectedLink> links;
    // Directories of the injected libraries, in the order found: the container's loader must
    // search them (gpu-containers.md 1.3, update-ldcache).
    std::vector<std::string> library_dirs;
    std::vector<std::string> environment;  // "KEY=VALUE" the container gets (CDI env)
    std::vector<std::string> notes;        // what was assumed or could not be read
};

// The GPU minor a device node path names: "/dev/nvidia3" -> 3; -1 for any other path
// (nvidiactl, nvidia-uvm, caps).
int gpu_minor_of(std::string_view path);

const char* to_string(ModuleFlavor flavor);
const char* to_string(InjectedKind kind);

}  // namespace rootlock::host
