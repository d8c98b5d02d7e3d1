// apply_cdi_specs: CDI edits read back into HostFacts. Nodes without numbers are stat'ed on the
// host (as the runtime does at start), hooks are read for what they mean to the container's
// loader: create-symlinks gives links, update-ldcache its folders, enable-cuda-compat the driver.
#include "host/cdi_facts.hpp"

#include <algorithm>

#include "fs/path_resolve.hpp"
#include "gpu/cdi_spec.hpp"
#include "gpu/cdi_yaml.hpp"
#include "host/driver_discovery.hpp"
#include "util/atomic_file.hpp"

namespace rootlock::host {

namespace {

// A spec named on the command line: a file of this machine, not of the host root.
util::Result<std::string> read_local_file(const std::string& path) {
    ROOTLOCK_TRY(size, util::read_host_file_size(path));
    if (size > gpu::cdi::k_max_text)
        return util::make_error(path, "larger than 16 MiB: not a CDI spec");
    return util::read_host_file(path);
}

bool spec_file_name(std::string_view name) {
    return name.ends_with(".yaml") || name.ends_with(".json");
}

util::Result<std::vector<gpu::LoadedSpec>> load_specs(const HostReader& host,
                                                      const std::vector<std::string>& files) {
    std::vector<gpu::LoadedSpec> specs;
    if (!files.empty()) {
        for (const auto& path : files) {
            ROOTLOCK_TRY(text, read_local_file(path));
            ROOTLOCK_TRY(spec, gpu::parse_cdi_spec(text, path));
            specs.push_back(gpu::LoadedSpec{path, 0, std::move(spec)});
        }
        return specs;
    }
    const char* dirs[] = {"/etc/cdi", "/var/run/cdi"};
    for (int priority = 0; priority < 2; ++priority) {
        for (const auto& name : host.list(dirs[priority])) {
            if (!spec_file_name(name))
                continue;
            std::string path = std::string(dirs[priority]) + "/" + name;
            ROOTLOCK_TRY(text, host.read_text(path, gpu::cdi::k_max_text));
            ROOTLOCK_TRY(spec, gpu::parse_cdi_spec(text, host.on_disk(path)));
            specs.push_back(gpu::LoadedSpec{path, priority, std::move(spec)});
        }
    }
    return specs;
}

DeviceNode node_from_cdi(const HostReader& host, const gpu::CdiDeviceNode& cdi) {
    DeviceNode node;
    node.path = cdi.path;
    node.host_path = cdi.host_path;
    auto stat = host.stat(cdi.host_path);
    node.present =
        stat && (stat->kind == HostStat::Kind::character || stat->kind == HostStat::Kind::block);
    if (node.present) {
        node.type = stat->kind == HostStat::Kind::block ? 'b' : 'c';
        node.major = stat->major;
        node.minor = stat->minor;
        node.mode = stat->mode;
        node.uid = stat->uid;
        node.gid = stat->gid;
    }
    // What the spec fixes wins over the live node, as the runtime fills only what is missing.
    if (cdi.type)
        node.type = *cdi.type;
    if (cdi.major)
        node.major = *cdi.major;
    if (cdi.minor)
        node.minor = *cdi.minor;
    if (cdi.file_mode)
        node.mode = *cdi.file_mode & 07777;
    if (cdi.uid)
        node.uid = *cdi.uid;
    if (cdi.gid)
        node.gid = *cdi.gid;
    node.gpu_minor = gpu_minor_of(cdi.path);
    return node;
}

InjectedKind kind_of(const HostReader& host, const gpu::CdiMount& mount) {
    // A bind mount follows links: the kind is the file's they lead to.
    auto file = host.resolve(mount.host_path);
    HostStat stat;  // Kind::other when the host lacks it
    if (file) {
        if (auto found = host.stat(*file))
            stat = *found;
    }
    if (stat.kind == HostStat::Kind::socket)
        return InjectedKind::socket;
    const std::string name = fs::basename(mount.container_path);
    if (mount.container_path.starts_with("/lib/firmware/"))
        return InjectedKind::firmware;
    if (name.find(".so") != std::string::npos)
        return InjectedKind::library;
    if (stat.kind == HostStat::Kind::regular && (stat.mode & 0111) != 0)
        return InjectedKind::binary;
    return InjectedKind::other;
}

// What each nvidia-cdi-hook means for the container (gpu-containers.md 1.3, Hooks).
void read_hooks(const gpu::ContainerEdits& edits, HostFacts& facts, std::string& compat_driver) {
    for (const auto& hook : edits.hooks) {
        const auto& args = hook.args;
        auto is = [&](std::string_view verb) {
            return std::find(args.begin(), args.end(), verb) != args.end();
        };
        for (size_t i = 0; i < args.size(); ++i) {
            const std::string& arg = args[i];
            std::string value;
            if (i + 1 < args.size() && (arg == "--link" || arg == "--folder"))
                value = args[i + 1];
            else if (arg.starts_with("--link="))
                value = arg.substr(7);
            else if (arg.starts_with("--folder="))
                value = arg.substr(9);
            if (is("create-symlinks") && (arg == "--link" || arg.starts_with("--link="))) {
                size_t sep = value.find("::");
                if (sep != std::string::npos)
                    facts.links.push_back(
                        InjectedLink{value.substr(sep + 2), value.substr(0, sep)});
            } else if (is("update-ldcache") &&
                       (arg == "--folder" || arg.starts_with("--folder="))) {
                if (!value.empty() &&
                    std::find(facts.library_dirs.begin(), facts.library_dirs.end(), value) ==
                        facts.library_dirs.end())
                    facts.library_dirs.push_back(value);
            } else if (arg.starts_with("--host-driver-version=")) {
                compat_driver = arg.substr(22);
            }
        }
    }
}

}  // namespace

util::Status apply_cdi_specs(const HostReader& host, const std::vector<std::string>& spec_files,
                             HostFacts& facts) {
    ROOTLOCK_TRY(specs, load_specs(host, spec_files));
    if (specs.empty())
        return util::ok_status();
    gpu::CdiRegistry registry = gpu::resolve_cdi_specs(std::move(specs));
    for (const auto& conflict : registry.conflicts)
        facts.notes.push_back("CDI: " + conflict);
    std::vector<std::string> chosen;
    std::string prefix = std::string(k_nvidia_gpu_kind) + "=";
    if (registry.devices.count(prefix + "all") != 0) {
        chosen.push_back(prefix + "all");
    } else {
        for (const auto& [name, entry] : registry.devices) {
            if (name.starts_with(prefix))
                chosen.push_back(name);
        }
    }
    if (chosen.empty()) {
        facts.notes.push_back("no CDI device of kind nvidia.com/gpu: the host's files are used");
        return util::ok_status();
    }
    ROOTLOCK_TRY(edits, gpu::edits_for(registry, chosen));
    facts.source = FactsSource::cdi;
    facts.cdi_specs.clear();
    for (const auto& loaded : registry.specs) {
        if (loaded.spec.kind == k_nvidia_gpu_kind)
            facts.cdi_specs.push_back(spec_files.empty() ? host.on_disk(loaded.path) : loaded.path);
    }
    facts.nodes.clear();
    // Devices named together (by index and by UUID) repeat their nodes and mounts: once each.
    for (const auto& cdi : edits.device_nodes) {
        if (std::none_of(facts.nodes.begin(), facts.nodes.end(),
                         [&](const DeviceNode& node) { return node.path == cdi.path; }))
            facts.nodes.push_back(node_from_cdi(host, cdi));
    }
    facts.files.clear();
    for (const auto& mount : edits.mounts) {
        if (std::none_of(facts.files.begin(), facts.files.end(), [&](const InjectedFile& file) {
                return file.container_path == mount.container_path;
            }))
            facts.files.push_back(
                InjectedFile{mount.host_path, mount.container_path, kind_of(host, mount)});
    }
    facts.links.clear();
    facts.library_dirs.clear();
    std::string compat_driver;
    read_hooks(edits, facts, compat_driver);
    if (facts.library_dirs.empty()) {
        // A spec written with --disable-hook update-ldcache: the libraries' own directories.
        for (const auto& file : facts.files) {
            std::string dir = fs::dirname(file.container_path);
            if (file.kind == InjectedKind::library &&
                std::find(facts.library_dirs.begin(), facts.library_dirs.end(), dir) ==
                    facts.library_dirs.end())
                facts.library_dirs.push_back(dir);
        }
    }
    facts.environment = edits.env;
    if (facts.driver.version.empty()) {
        for (const auto& file : facts.files) {
            std::string name = fs::basename(file.container_path);
            if (name.starts_with("libcuda.so.") && looks_like_driver_version(name.substr(11))) {
                facts.driver.version = name.substr(11);
                facts.driver.version_from = file.host_path + " (CDI mount)";
            }
        }
        if (facts.driver.version.empty() && !compat_driver.empty()) {
            facts.driver.version = compat_driver;
            facts.driver.version_from = "CDI enable-cuda-compat hook";
        }
    }
    if (facts.gpus.empty()) {
        // No /proc to read: the GPUs are the spec's numbered devices, model unknown.
        for (const auto& node : facts.nodes) {
            if (node.gpu_minor < 0)
                continue;
            GpuFacts gpu_facts;
            gpu_facts.minor = node.gpu_minor;
            facts.gpus.push_back(gpu_facts);
        }
    }
    return util::ok_status();
}

}  // namespace rootlock::host
