// discover_driver_files: nvidia-ctk's lookup (pkg/nvcdi/driver-nvml.go, internal/lookup) over a
// host root: libcuda first, then everything of the same version in the directories that hold it.
#include "host/driver_discovery.hpp"

#include <algorithm>
#include <set>
#include <span>

#include "fs/path_resolve.hpp"
#include "gpu/driver_files.hpp"
#include "loader/ld_so_cache.hpp"

namespace rootlock::host {

namespace {

// The programs a CDI spec mounts, found in the default PATH (internal/discover/binaries).
const std::vector<std::string> k_driver_programs = {"nvidia-smi",
                                                    "nvidia-debugdump",
                                                    "nvidia-persistenced",
                                                    "nvidia-cuda-mps-control",
                                                    "nvidia-cuda-mps-server",
                                                    "nvidia-imex",
                                                    "nvidia-imex-ctl"};
const std::vector<std::string> k_program_directories = {
    "/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"};
// Where the GSP firmware of a release lives (internal/discover/firmware), without the
// `uname -r` forms: the host's running kernel is not a file rootlock reads.
const std::vector<std::string> k_firmware_directories = {"/lib/firmware/updates", "/lib/firmware"};
// The driver's IPC endpoints (internal/discover/ipc.go).
const std::vector<std::string> k_driver_sockets = {
    "/run/nvidia-persistenced/socket", "/var/run/nvidia-persistenced/socket",
    "/run/nvidia-fabricmanager/socket", "/var/run/nvidia-fabricmanager/socket"};

// The version of a file named `stem.so.VERSION`, or empty.
std::string version_after(std::string_view name, std::string_view stem) {
    std::string prefix = std::string(stem) + ".so.";
    if (!name.starts_with(prefix))
        return {};
    std::string_view rest = name.substr(prefix.size());
    return looks_like_driver_version(rest) ? std::string(rest) : std::string();
}

struct Found {
    std::string path;            // canonical inside the host
    gpu::DriverRelease release;  // from the file's name
};

// The host's ld.so.cache entries for `soname`, resolved to their files.
std::vector<std::string> cache_files(const HostReader& host, std::string_view soname) {
    std::vector<std::string> paths;
    auto bytes = host.read_text("/etc/ld.so.cache", 64U << 20);
    if (!bytes)
        return paths;
    std::span<const std::byte> view(reinterpret_cast<const std::byte*>(bytes->data()),
                                    bytes->size());
    auto cache = loader::parse_ld_so_cache(view, "/etc/ld.so.cache");
    if (!cache)
        return paths;
    for (const auto& entry : cache->entries) {
        if (entry.soname != soname)
            continue;
        if (auto file = host.resolve(entry.path))
            paths.push_back(*file);
    }
    return paths;
}

// libSTEM.so.<version> in the search directories, then through the cache's libSTEM.so.1.
std::optional<Found> find_library(const HostReader& host, std::string_view stem,
                                  std::string_view version) {
    std::vector<Found> candidates;
    for (const auto& dir : driver_search_directories()) {
        auto resolved = host.resolve(dir);
        if (!resolved)
            continue;
        for (const auto& name : host.list(*resolved)) {
            std::string found = version_after(name, stem);
            if (found.empty() || (!version.empty() && found != version))
                continue;
            auto file = host.resolve(fs::join_path(*resolved, name));
            auto stat = file ? host.stat(*file) : std::nullopt;
            if (stat && stat->kind == HostStat::Kind::regular)
                candidates.push_back(Found{*file, *gpu::parse_driver_release(found)});
        }
        if (!candidates.empty())
            break;  // the first directory that has it wins, as a locator's search order
    }
    if (candidates.empty()) {
        for (const auto& file : cache_files(host, std::string(stem) + ".so.1")) {
            std::string found = version_after(fs::basename(file), stem);
            if (!found.empty() && (version.empty() || found == version))
                candidates.push_back(Found{file, *gpu::parse_driver_release(found)});
        }
    }
    if (candidates.empty())
        return std::nullopt;
    return *std::max_element(candidates.begin(), candidates.end(),
                             [](const Found& a, const Found& b) { return a.release < b.release; });
}

// `seen` holds both container paths and the host files they lead to: a link beside a file
// (Debian's alternatives, /var/run -> /run) is the same mount, taken once, as nvidia-ctk does.
bool add_file(DriverFiles& out, std::set<std::string>& seen, const HostReader& host,
              std::string host_path, std::string container_path, InjectedKind kind) {
    const std::string file = host.resolve(host_path).value_or(host_path);
    if (seen.count(container_path) != 0 || seen.count("\n" + file) != 0)
        return false;
    seen.insert(container_path);
    seen.insert("\n" + file);
    out.files.push_back(InjectedFile{std::move(host_path), std::move(container_path), kind});
    return true;
}

// Every `*.so.<version>` in `dir` (links resolved to the file they name; the container sees the
// file at the name found, as nvidia-ctk mounts it).
void add_versioned_libraries(const HostReader& host, const std::string& dir,
                             std::string_view version, DriverFiles& out,
                             std::set<std::string>& seen) {
    std::string suffix = ".so." + std::string(version);
    bool any = false;
    for (const auto& name : host.list(dir)) {
        if (!name.ends_with(suffix))
            continue;
        std::string path = fs::join_path(dir, name);
        auto file = host.resolve(path);
        auto stat = file ? host.stat(*file) : std::nullopt;
        if (!stat || stat->kind != HostStat::Kind::regular)
            continue;
        any = add_file(out, seen, host, path, path, InjectedKind::library) || any;
    }
    if (any &&
        std::find(out.library_dirs.begin(), out.library_dirs.end(), dir) == out.library_dirs.end())
        out.library_dirs.push_back(dir);
}

}  // namespace

const std::vector<std::string>& driver_search_directories() {
    static const std::vector<std::string> dirs = {
        "/usr/lib64",
        "/usr/lib/x86_64-linux-gnu",
        "/usr/lib/x86_64-linux-gnu/nvidia/current",
        "/usr/lib/aarch64-linux-gnu",
        "/usr/lib/aarch64-linux-gnu/nvidia/current",
        "/lib64",
        "/lib/x86_64-linux-gnu",
        "/lib/x86_64-linux-gnu/nvidia/current",
        "/lib/aarch64-linux-gnu",
        "/lib/aarch64-linux-gnu/nvidia/current",
    };
    return dirs;
}

bool looks_like_driver_version(std::string_view text) {
    // Two or three dot-separated decimal numbers: 470.256.02, 999.88.77, 550.54.
    auto release = gpu::parse_driver_release(text);
    return release.ok() && release->parts.size() >= 2;
}

DriverFiles discover_driver_files(const HostReader& host, std::string_view version) {
    DriverFiles out;
    auto libcuda = find_library(host, "libcuda", version);
    if (!libcuda) {
        // A host with NVML and no CUDA driver library still has a version to go by.
        auto nvml = find_library(host, "libnvidia-ml", version);
        if (!nvml) {
            out.version = std::string(version);
            // The module was upgraded (or the files were) and the other did not follow.
            if (auto other = version.empty() ? std::nullopt : find_library(host, "libcuda", ""))
                out.notes.push_back("the kernel module is " + std::string(version) + " but " +
                                    other->path + " is " + other->release.text +
                                    ": every CUDA and NVML call fails with \"Driver/library "
                                    "version mismatch\"; no driver file is given to containers");
            return out;
        }
        out.version = nvml->release.text;
        out.notes.push_back("no libcuda.so." +
                            (version.empty() ? std::string("*") : std::string(version)) +
                            " found; the driver's files were found beside " + nvml->path);
        libcuda = nvml;
    } else {
        out.version = libcuda->release.text;
        out.libcuda = libcuda->path;
    }
    std::set<std::string> seen;
    // The directory of libcuda first, then every other search directory holding a library of
    // the same version (a host may split them, e.g. /usr/lib64 and vdpau/).
    std::vector<std::string> dirs = {fs::dirname(libcuda->path)};
    for (const auto& dir : driver_search_directories()) {
        auto resolved = host.resolve(dir);
        if (resolved && std::find(dirs.begin(), dirs.end(), *resolved) == dirs.end())
            dirs.push_back(*resolved);
    }
    for (const auto& dir : dirs) {
        add_versioned_libraries(host, dir, out.version, out, seen);
        add_versioned_libraries(host, dir + "/vdpau", out.version, out, seen);
    }
    if (!out.libcuda.empty()) {
        // Programs dlopen the unversioned name (create-symlinks libcuda.so.1::DIR/libcuda.so).
        out.links.push_back(
            InjectedLink{fs::join_path(fs::dirname(out.libcuda), "libcuda.so"), "libcuda.so.1"});
    }
    for (const auto& program : k_driver_programs) {
        for (const auto& dir : k_program_directories) {
            std::string path = fs::join_path(dir, program);
            auto file = host.resolve(path);
            auto stat = file ? host.stat(*file) : std::nullopt;
            if (stat && stat->kind == HostStat::Kind::regular) {
                add_file(out, seen, host, path, path, InjectedKind::binary);
                break;
            }
        }
    }
    for (const auto& base : k_firmware_directories) {
        std::string dir = base + "/nvidia/" + out.version;
        auto resolved = host.resolve(dir);
        if (!resolved)
            continue;
        for (const auto& name : host.list(*resolved)) {
            if (!name.starts_with("gsp") || !name.ends_with(".bin"))
                continue;
            std::string path = fs::join_path(dir, name);
            if (host.resolve(path))
                add_file(out, seen, host, path, path, InjectedKind::firmware);
        }
    }
    for (const auto& socket : k_driver_sockets) {
        auto stat = host.stat(socket);
        if (stat && stat->kind == HostStat::Kind::socket) {
            add_file(out, seen, host, socket, socket, InjectedKind::socket);
        }
    }
    return out;
}

}  // namespace rootlock::host
