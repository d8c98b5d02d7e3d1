// probe_host: the driver from /sys and /proc, the GPUs from /proc/driver/nvidia/gpus, the device
// nodes from /dev, the files from discover_driver_files; CDI specs, where present, replace the
// nodes and the files (cdi_facts.cpp).
#include "host/host_probe.hpp"

#include <algorithm>

#include "fs/path_resolve.hpp"
#include "gpu/driver_files.hpp"
#include "gpu/gpu_table.hpp"
#include "gpu/nvidia_smi.hpp"
#include "host/cdi_facts.hpp"
#include "host/driver_discovery.hpp"
#include "host/host_reader.hpp"
#include "util/subprocess.hpp"

namespace rootlock::host {

namespace {

constexpr const char* k_sys_version = "/sys/module/nvidia/version";
constexpr const char* k_proc_version = "/proc/driver/nvidia/version";
constexpr const char* k_proc_gpus = "/proc/driver/nvidia/gpus";

// The kernel module's release and flavour. /sys has the bare release; only /proc says open or
// proprietary, so both are read when present.
util::Status read_driver(const HostReader& host, HostFacts& facts) {
    if (auto text = host.read_text(k_proc_version)) {
        ROOTLOCK_TRY(parsed, gpu::parse_proc_driver_version(*text, k_proc_version));
        facts.driver.version = parsed.release.text;
        facts.driver.flavor = parsed.flavor == gpu::KernelModuleFlavor::open
                                  ? ModuleFlavor::open
                                  : ModuleFlavor::proprietary;
        facts.driver.version_from = k_proc_version;
    }
    if (auto text = host.read_text(k_sys_version)) {
        ROOTLOCK_TRY(parsed, gpu::parse_sys_module_version(*text, k_sys_version));
        if (!facts.driver.version.empty() && facts.driver.version != parsed.text)
            facts.notes.push_back(std::string(k_sys_version) + " says " + parsed.text + " but " +
                                  k_proc_version + " says " + facts.driver.version +
                                  "; taking /sys (the module loaded now)");
        facts.driver.version = parsed.text;
        facts.driver.version_from = k_sys_version;
    }
    return util::ok_status();
}

util::Status read_gpus(const HostReader& host, HostFacts& facts) {
    for (const auto& bus : host.list(k_proc_gpus)) {
        std::string path = std::string(k_proc_gpus) + "/" + bus + "/information";
        auto text = host.read_text(path);
        if (!text)
            continue;
        ROOTLOCK_TRY(info, gpu::parse_gpu_information(*text, path));
        GpuFacts facts_gpu;
        facts_gpu.model = info.model;
        facts_gpu.uuid = info.uuid;
        facts_gpu.bus = info.bus.text();
        facts_gpu.minor = info.device_minor;
        if (auto cc = gpu::compute_capability_of(info.model)) {
            facts_gpu.compute_capability = *cc;
            facts_gpu.compute_capability_from = "gpu table";
        }
        facts.gpus.push_back(std::move(facts_gpu));
    }
    std::sort(facts.gpus.begin(), facts.gpus.end(),
              [](const GpuFacts& a, const GpuFacts& b) { return a.minor < b.minor; });
    return util::ok_status();
}

// nvidia-smi's compute_cap beats the table: it knows GPUs newer than rootlock.
void ask_nvidia_smi(HostFacts& facts) {
    std::vector<std::string> argv = {"nvidia-smi"};
    for (auto argument : gpu::k_nvidia_smi_arguments)
        argv.emplace_back(argument);
    auto ran = util::run_process(argv, {});
    if (!ran || ran->exit_code != 0)
        return;
    auto rows = gpu::parse_nvidia_smi(ran->output, "nvidia-smi");
    if (!rows) {
        facts.notes.push_back("nvidia-smi's answer was not understood: " + rows.error().text());
        return;
    }
    for (auto& gpu_facts : facts.gpus) {
        for (const auto& row : *rows) {
            if (!gpu::same_pci_bus(row.bus_text, gpu_facts.bus) || !row.compute_cap)
                continue;
            gpu_facts.compute_capability = *row.compute_cap;
            gpu_facts.compute_capability_from = "nvidia-smi";
        }
    }
}

void add_node(const HostReader& host, HostFacts& facts, const std::string& path, int gpu_minor) {
    auto stat = host.stat(path);
    if (!stat || (stat->kind != HostStat::Kind::character && stat->kind != HostStat::Kind::block))
        return;
    DeviceNode node;
    node.path = path;
    node.host_path = path;
    node.type = stat->kind == HostStat::Kind::block ? 'b' : 'c';
    node.major = stat->major;
    node.minor = stat->minor;
    node.mode = stat->mode;
    node.uid = stat->uid;
    node.gid = stat->gid;
    node.present = true;
    node.gpu_minor = gpu_minor;
    facts.nodes.push_back(std::move(node));
}

// /dev/nvidia<N> for each GPU, the control nodes, and the MIG capability nodes.
void read_nodes(const HostReader& host, HostFacts& facts) {
    for (const auto& name : host.list("/dev")) {
        const std::string path = "/dev/" + name;
        if (const int minor = gpu_minor_of(path); minor >= 0)
            add_node(host, facts, path, minor);
        else if (name == "nvidiactl" || name == "nvidia-modeset" || name == "nvidia-uvm" ||
                 name == "nvidia-uvm-tools")
            add_node(host, facts, path, -1);
    }
    for (const auto& name : host.list("/dev/nvidia-caps"))
        add_node(host, facts, "/dev/nvidia-caps/" + name, -1);
    std::optional<int> frontend;
    if (auto text = host.read_text("/proc/devices")) {
        if (auto devices = gpu::parse_proc_devices(*text, "/proc/devices")) {
            facts.uvm_major = gpu::find_major(*devices, "nvidia-uvm");
            frontend = gpu::nvidia_frontend_major(*devices);
        }
    }
    // The nodes a container of these GPUs needs, named even when absent now: the kernel makes
    // the uvm nodes only on first use (gpu-containers.md 3.3), and a devN: naming a missing node
    // fails the start, so a configuration is refused before that.
    auto expect = [&](std::string path, std::optional<int> major, int minor, int gpu_minor) {
        if (!major || std::any_of(facts.nodes.begin(), facts.nodes.end(),
                                  [&](const DeviceNode& node) { return node.path == path; }))
            return;
        DeviceNode node;
        node.path = path;
        node.host_path = std::move(path);
        node.major = *major;
        node.minor = minor;
        node.mode = 0666;
        node.gpu_minor = gpu_minor;
        facts.nodes.push_back(std::move(node));
    };
    for (const auto& gpu_facts : facts.gpus)
        expect("/dev/nvidia" + std::to_string(gpu_facts.minor), frontend, gpu_facts.minor,
               gpu_facts.minor);
    if (!facts.gpus.empty())
        expect("/dev/nvidiactl", frontend, 255, -1);
    expect("/dev/nvidia-uvm", facts.uvm_major, 0, -1);
    expect("/dev/nvidia-uvm-tools", facts.uvm_major, 1, -1);
}

}  // namespace

util::Result<HostFacts> probe_host(const ProbeOptions& options) {
    ROOTLOCK_TRY(host, HostReader::open(options.host_root));
    HostFacts facts;
    facts.host_root = host.root();
    ROOTLOCK_TRY(driver, read_driver(host, facts));
    (void)driver;
    ROOTLOCK_TRY(gpus, read_gpus(host, facts));
    (void)gpus;
    if (options.run_nvidia_smi && host.is_live_root() && !facts.gpus.empty())
        ask_nvidia_smi(facts);
    read_nodes(host, facts);
    DriverFiles files = discover_driver_files(host, facts.driver.version);
    if (facts.driver.version.empty() && !files.version.empty()) {
        facts.driver.version = files.version;
        facts.driver.version_from = files.libcuda.empty() ? "libnvidia-ml" : files.libcuda;
        facts.notes.push_back("no NVIDIA kernel module is loaded (" + std::string(k_sys_version) +
                              " is missing): the version is the one the driver's files carry");
    }
    facts.files = std::move(files.files);
    facts.links = std::move(files.links);
    facts.library_dirs = std::move(files.library_dirs);
    facts.notes.insert(facts.notes.end(), files.notes.begin(), files.notes.end());
    if (facts.driver.version.empty())
        facts.notes.push_back("no NVIDIA driver found: no kernel module and no libcuda.so.*");
    ROOTLOCK_TRY(cdi, apply_cdi_specs(host, options.cdi_files, facts));
    (void)cdi;
    return facts;
}

}  // namespace rootlock::host
