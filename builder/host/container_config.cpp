// make_container_config: devN: lines (pct) or cgroup rules and node binds (lxc), read-only binds
// of every injected file at its container path, and the ldconfig hook; every line checked
// against pve-container's schema and every host path against the host.
#include "host/container_config.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "fs/path_resolve.hpp"

namespace rootlock::host {

namespace {

// pve-container's dev[n] path rule (Config.pm $dev_desc): under /dev, no "." or ".." parts.
bool valid_dev_path(std::string_view path) {
    if (!path.starts_with("/dev/") || path.size() == 5)
        return false;
    size_t start = 1;
    while (start <= path.size()) {
        size_t slash = path.find('/', start);
        std::string_view part = path.substr(
            start, slash == std::string_view::npos ? std::string_view::npos : slash - start);
        if (part.empty() || part == "." || part == "..")
            return false;
        if (slash == std::string_view::npos)
            break;
        start = slash + 1;
    }
    return path.find_first_of(" ,=\n\t") == std::string_view::npos;
}

// A path as an lxc.mount.entry target: relative to the container's root.
std::string relative(std::string_view path) {
    std::string normal = fs::normalize(path);
    return normal.substr(1);
}

// Paths in mount entries are split on blanks by LXC (fstab syntax): a blank is written \040.
std::string fstab_escape(std::string_view path) {
    std::string out;
    for (char c : path) {
        if (c == ' ')
            out += "\\040";
        else if (c == '\t')
            out += "\\011";
        else if (c == '\\')
            out += "\\134";
        else
            out += c;
    }
    return out;
}

// True when `text` can stand in the hook's shell line unquoted: what driver paths are made of.
bool shell_safe(std::string_view text) {
    return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '/' || c == '.' || c == '_' || c == '-' || c == '+';
    });
}

bool gpu_selected(const HostFacts& facts, const std::vector<size_t>& chosen, int minor) {
    return std::any_of(chosen.begin(), chosen.end(),
                       [&](size_t index) { return facts.gpus[index].minor == minor; });
}

// The nodes the selected GPUs need: each GPU's own, then every control node.
std::vector<const DeviceNode*> needed_nodes(const HostFacts& facts,
                                            const std::vector<size_t>& chosen) {
    std::vector<const DeviceNode*> nodes;
    for (const auto& node : facts.nodes) {
        if (node.gpu_minor >= 0 && !gpu_selected(facts, chosen, node.gpu_minor))
            continue;
        nodes.push_back(&node);
    }
    return nodes;
}

// mode=0666 as the driver's own default (nv-reg.h DeviceFileMode); a node the host keeps to root
// keeps its mode; one kept to a group gets that gid where the image has it, else 0666 and a note.
std::string node_access(const DeviceNode& node, const ImageFacts& image,
                        std::vector<std::string>& notes) {
    if ((node.mode & 0006) == 0006)
        return "mode=0666";
    if (node.gid == 0)  // root's alone on the host (MIG capabilities): the same in the container
        return fmt::format("mode=0{:o}", node.mode & 0777);
    for (const auto& [name, gid] : image.groups) {
        if (gid == node.gid)
            return fmt::format("gid={},mode=0{:o}", gid, node.mode & 0777);
    }
    notes.push_back(
        fmt::format("{} is mode {:04o} for gid {} on the host, a group the image's "
                    "/etc/group lacks: given mode=0666 instead",
                    node.path, node.mode, node.gid));
    return "mode=0666";
}

}  // namespace

util::Result<std::vector<size_t>> select_gpus(const HostFacts& facts,
                                              const std::vector<std::string>& selectors) {
    std::vector<size_t> chosen;
    std::vector<std::string> unknown;
    for (const auto& selector : selectors) {
        if (selector == "all") {
            for (size_t i = 0; i < facts.gpus.size(); ++i)
                chosen.push_back(i);
            continue;
        }
        bool found = false;
        for (size_t i = 0; i < facts.gpus.size(); ++i) {
            const GpuFacts& gpu = facts.gpus[i];
            if (selector == std::to_string(i) || selector == gpu.uuid || selector == gpu.bus) {
                chosen.push_back(i);
                found = true;
            }
        }
        if (!found)
            unknown.push_back(util::quote(selector));
    }
    if (!unknown.empty()) {
        std::string names;
        for (const auto& name : unknown)
            names += (names.empty() ? "" : ", ") + name;
        const size_t count = facts.gpus.size();
        const std::string has = count == 0   ? "it has none"
                                : count == 1 ? "it has GPU 0"
                                             : "it has GPUs 0.." + std::to_string(count - 1);
        return util::make_error("--gpus", fmt::format("no GPU {} on this host ({})", names, has));
    }
    std::sort(chosen.begin(), chosen.end());
    chosen.erase(std::unique(chosen.begin(), chosen.end()), chosen.end());
    return chosen;
}

std::string ldconfig_hook_command(const HostFacts& facts) {
    // One shell line, so the configuration needs no file of its own on the host. LXC runs a hook
    // with /bin/sh and sets LXC_ROOTFS_MOUNT to the container's root, already mounted and with
    // its mount entries (the driver's files) in place when hook.mount runs. The links CDI's
    // create-symlinks hook would make (libcuda.so, which programs dlopen) are made here, as
    // LXD does with a spec's hooks; ldconfig then makes the soname links and the cache.
    std::string dirs;
    for (const auto& dir : facts.library_dirs)
        dirs += " " + dir;
    std::string links;
    for (const auto& link : facts.links) {
        links += fmt::format("mkdir -p \"$R{}\" && ln -sfn {} \"$R{}\" && ", fs::dirname(link.path),
                             link.target, link.path);
    }
    return fmt::format(
        "/bin/sh -c 'R=\"$LXC_ROOTFS_MOUNT\" && printf \"%s\\n\"{} > "
        "\"$R/etc/ld.so.conf.d/00-rootlock-nvidia.conf\" && {}exec /sbin/ldconfig -r \"$R\"'",
        dirs, links);
}

ContainerConfig make_container_config(const HostFacts& facts, const ImageFacts& image,
                                      const ConfigOptions& options) {
    ContainerConfig out;
    const bool pct = options.format == ConfigFormat::pct;
    const char* sep = pct ? ": " : " = ";
    if (facts.driver.version.empty())
        out.problems.push_back(
            "the host has no NVIDIA driver (no kernel module and no "
            "libcuda.so.*): nothing to give a container");
    std::vector<size_t> chosen;
    if (auto selected = select_gpus(facts, options.gpus))
        chosen = *selected;
    else
        out.problems.push_back(selected.error().text());
    if (facts.gpus.empty())
        out.problems.push_back("the host lists no GPU in /proc/driver/nvidia/gpus");

    std::string& text = out.text;
    text += fmt::format("# rootlock pct-config{}: {} GPU{} of {} (driver {}), {} driver files\n",
                        options.image.empty() ? "" : " for " + options.image, chosen.size(),
                        chosen.size() == 1 ? "" : "s", facts.host_root,
                        facts.driver.version.empty() ? "none" : facts.driver.version,
                        facts.files.size());
    if (pct) {
        if (!image.arch.empty())
            text += fmt::format("arch: {}\n", image.arch);
        if (!image.ostype.empty())
            text += fmt::format("ostype: {}\n", image.ostype);
    }
    const auto nodes = needed_nodes(facts, chosen);
    size_t index = 0;
    for (const DeviceNode* node : nodes) {
        if (!node->present) {
            out.problems.push_back(
                node->path +
                " does not exist on the host now: a container naming it fails to "
                "start (install the unit --host-unit writes, or run "
                "`nvidia-modprobe -u -c 0` once)");
        }
        if (pct) {
            if (!valid_dev_path(node->path)) {
                out.problems.push_back(util::quote(node->path) +
                                       " is not a path pve-container accepts for devN:");
                continue;
            }
            text += fmt::format("dev{}: {},{}\n", index++, node->path,
                                node_access(*node, image, out.notes));
        } else {
            const char* key = options.cgroup == CgroupVersion::v2 ? "lxc.cgroup2.devices.allow"
                                                                  : "lxc.cgroup.devices.allow";
            if (node->major >= 0)
                text += fmt::format("{}{}{} {}:{} rwm\n", key, sep, node->type, node->major,
                                    node->minor);
            text += fmt::format("lxc.mount.entry{}{} {} none bind,optional,create=file 0 0\n", sep,
                                fstab_escape(node->host_path), fstab_escape(relative(node->path)));
        }
    }
    if (index > 256)
        out.problems.push_back(
            fmt::format("{} devices: pve-container allows dev0 to dev255", index));
    for (const auto& file : facts.files) {
        const char* options_text = file.kind == InjectedKind::socket
                                       ? "bind,ro,nosuid,nodev,noexec,create=file"
                                       : "bind,ro,nosuid,nodev,create=file";
        text +=
            fmt::format("lxc.mount.entry{}{} {} none {} 0 0\n", sep, fstab_escape(file.host_path),
                        fstab_escape(relative(file.container_path)), options_text);
    }
    bool hook_safe = true;
    for (const auto& dir : facts.library_dirs)
        hook_safe = hook_safe && shell_safe(dir);
    for (const auto& link : facts.links)
        hook_safe = hook_safe && shell_safe(link.path) && shell_safe(link.target);
    if (!hook_safe)
        out.problems.push_back(
            "a driver directory or link holds characters the start hook's "
            "shell line cannot carry: no hook written");
    else if (!facts.library_dirs.empty())
        text += fmt::format("lxc.hook.mount{}{}\n", sep, ldconfig_hook_command(facts));
    return out;
}

std::string host_unit_text() {
    return "# Written by rootlock pct-config --host-unit: the NVIDIA device nodes a container's\n"
           "# devN: or mount entries name exist before any container starts. The kernel makes\n"
           "# /dev/nvidia-uvm* only on first use, and a devN: whose node is missing fails the\n"
           "# start (gpu-containers.md 3.3).\n"
           "[Unit]\n"
           "Description=NVIDIA device nodes for containers (rootlock)\n"
           "After=systemd-modules-load.service\n"
           "Before=pve-guests.service lxc.service\n"
           "\n"
           "[Service]\n"
           "Type=oneshot\n"
           "RemainAfterExit=yes\n"
           // systemd expands $NAME itself: $$ is a literal dollar for the shell.
           "ExecStart=/bin/sh -c 'modprobe nvidia-uvm || modprobe nvidia-current-uvm; "
           "while read -r major name; do [ \"$$name\" = nvidia-uvm ] && break; major=; "
           "done < /proc/devices; [ -n \"$$major\" ] || exit 1; "
           "[ -c /dev/nvidia-uvm ] || mknod -m 666 /dev/nvidia-uvm c \"$$major\" 0; "
           "[ -c /dev/nvidia-uvm-tools ] || mknod -m 666 /dev/nvidia-uvm-tools c \"$$major\" 1'\n"
           "\n"
           "[Install]\n"
           "WantedBy=multi-user.target\n";
}

}  // namespace rootlock::host
