// Unit tests for reading a host laid out under a directory: the driver from /sys and /proc, the
// files as nvidia-ctk finds them (Debian's layout, links taken once), a CDI spec replacing them,
// and the container view's conf, soname links and cache.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "fs/memory_tree.hpp"
#include "host/container_view.hpp"
#include "host/host_probe.hpp"
#include "loader/ld_so_cache.hpp"
#include "support/elf_writer.hpp"
#include "support/temp_dir.hpp"

namespace ROOTLOCK_UNIT_ID {

using rootlock::host::HostFacts;
using rootlock::host::HostReader;
using rootlock::host::InjectedKind;
using rootlock::host::probe_host;
using rootlock::host::ProbeOptions;
using rootlock::testing::TempDir;

namespace {

const std::string k_dir = "usr/lib/x86_64-linux-gnu/nvidia/current";
const std::string k_version = "535.261.03";

std::string elf_text(const std::string& soname) {
    rootlock::testing::ElfSpec spec;
    spec.soname = soname;
    auto bytes = rootlock::testing::build_elf(spec);
    return std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

// Debian's layout: the libraries in nvidia/current with their package links, the alternatives'
// link in the multiarch directory, /sys and /proc as the proprietary module writes them.
void debian_host(const TempDir& dir) {
    dir.write_file(k_dir + "/libcuda.so." + k_version, elf_text("libcuda.so.1"));
    dir.make_symlink(k_dir + "/libcuda.so.1", "libcuda.so." + k_version);
    dir.write_file(k_dir + "/libnvidia-ml.so." + k_version, elf_text("libnvidia-ml.so.1"));
    dir.make_symlink("usr/lib/x86_64-linux-gnu/libnvidia-ml.so." + k_version,
                     "/" + k_dir + "/libnvidia-ml.so." + k_version);
    dir.write_file("usr/lib/nvidia/current/nvidia-smi", "#!/bin/sh\n");
    dir.make_symlink("usr/bin/nvidia-smi", "/usr/lib/nvidia/current/nvidia-smi");
    dir.write_file("lib/firmware/nvidia/" + k_version + "/gsp_tu10x.bin", "gsp");
    dir.write_file("sys/module/nvidia/version", k_version + "\n");
    dir.write_file("proc/driver/nvidia/version",
                   "NVRM version: NVIDIA UNIX x86_64 Kernel Module  " + k_version +
                       "  Sat Jun 14 16:05:50 UTC 2025\nGCC version:  gcc version 12.2.0 \n");
    dir.write_file("proc/devices", "Character devices:\n195 nvidia-frontend\n511 nvidia-uvm\n");
    dir.write_file("proc/driver/nvidia/gpus/0000:01:00.0/information",
                   "Model: \t\t Tesla T4\nIRQ:   \t\t 156\nGPU UUID: \t "
                   "GPU-6cf00fa7-1a3b-4b2c-9d8e-0123456789ab\nBus Location: \t 0000:01:00.0\n"
                   "Device Minor: \t 0\n");
}

std::vector<std::string> container_paths(const HostFacts& facts) {
    std::vector<std::string> out;
    for (const auto& file : facts.files)
        out.push_back(file.container_path + " " + rootlock::host::to_string(file.kind));
    std::sort(out.begin(), out.end());
    return out;
}

}  // namespace

TEST_SUITE("rootlock::host") {
    TEST_CASE("a Debian-packaged host: driver, GPU and the files nvidia-ctk would mount") {
        TempDir dir;
        debian_host(dir);
        ProbeOptions options;
        options.host_root = dir.path();
        auto facts = probe_host(options);
        REQUIRE(facts.ok());
        CHECK(facts->driver.version == k_version);
        CHECK(facts->driver.flavor == rootlock::host::ModuleFlavor::proprietary);
        CHECK(facts->driver.version_from == "/sys/module/nvidia/version");
        REQUIRE(facts->gpus.size() == 1);
        CHECK(facts->gpus[0].compute_capability->text() == "7.5");
        CHECK(facts->uvm_major == 511);
        // The alternatives' link to libnvidia-ml is the same file: mounted once.
        CHECK(container_paths(*facts) ==
              std::vector<std::string>{"/lib/firmware/nvidia/535.261.03/gsp_tu10x.bin firmware",
                                       "/usr/bin/nvidia-smi binary",
                                       "/" + k_dir + "/libcuda.so.535.261.03 library",
                                       "/" + k_dir + "/libnvidia-ml.so.535.261.03 library"});
        CHECK(facts->library_dirs == std::vector<std::string>{"/" + k_dir});
        REQUIRE(facts->links.size() == 1);
        CHECK(facts->links[0].path == "/" + k_dir + "/libcuda.so");
        // No node exists: the GPU's, nvidiactl and the two uvm nodes are named, missing, with
        // the majors /proc/devices gives.
        std::vector<std::string> missing;
        for (const auto& node : facts->nodes) {
            if (!node.present)
                missing.push_back(node.path + " " + std::to_string(node.major) + ":" +
                                  std::to_string(node.minor));
        }
        CHECK(missing == std::vector<std::string>{"/dev/nvidia0 195:0", "/dev/nvidiactl 195:255",
                                                  "/dev/nvidia-uvm 511:0",
                                                  "/dev/nvidia-uvm-tools 511:1"});
    }

    TEST_CASE("a module of another version than the files finds no files") {
        TempDir dir;
        debian_host(dir);
        dir.write_file("sys/module/nvidia/version", "550.163.01\n");
        ProbeOptions options;
        options.host_root = dir.path();
        auto facts = probe_host(options);
        REQUIRE(facts.ok());
        CHECK(facts->driver.version == "550.163.01");
        CHECK(facts->files.empty());
        REQUIRE(facts->notes.size() == 2);
        CHECK(facts->notes[0] ==
              "/sys/module/nvidia/version says 550.163.01 but /proc/driver/nvidia/version says "
              "535.261.03; taking /sys (the module loaded now)");
        CHECK(facts->notes[1] == "the kernel module is 550.163.01 but /" + k_dir +
                                     "/libcuda.so.535.261.03 is 535.261.03: every CUDA and NVML "
                                     "call fails with \"Driver/library version mismatch\"; no "
                                     "driver file is given to containers");
    }

    TEST_CASE("a CDI spec of the host replaces the files found by hand") {
        TempDir dir;
        debian_host(dir);
        dir.write_file("etc/cdi/nvidia.yaml",
                       "cdiVersion: 0.5.0\nkind: nvidia.com/gpu\ndevices:\n- name: all\n"
                       "  containerEdits:\n    deviceNodes:\n    - path: /dev/nvidia0\n"
                       "containerEdits:\n  mounts:\n  - hostPath: /" +
                           k_dir + "/libcuda.so.535.261.03\n    containerPath: /" + k_dir +
                           "/libcuda.so.535.261.03\n    options: [ro, nosuid, nodev, bind]\n"
                           "  hooks:\n  - hookName: createContainer\n"
                           "    path: /usr/bin/nvidia-cdi-hook\n"
                           "    args: [nvidia-cdi-hook, update-ldcache, --folder, /" +
                           k_dir + "]\n");
        ProbeOptions options;
        options.host_root = dir.path();
        auto facts = probe_host(options);
        REQUIRE(facts.ok());
        CHECK(facts->source == rootlock::host::FactsSource::cdi);
        CHECK(container_paths(*facts) ==
              std::vector<std::string>{"/" + k_dir + "/libcuda.so.535.261.03 library"});
        CHECK(facts->library_dirs == std::vector<std::string>{"/" + k_dir});
        REQUIRE(facts->nodes.size() == 1);
        CHECK(facts->nodes[0].path == "/dev/nvidia0");
        CHECK_FALSE(facts->nodes[0].present);
    }

    TEST_CASE("a CDI spec that does not parse is one error naming it") {
        TempDir dir;
        dir.write_file("etc/cdi/nvidia.yaml", "cdiVersion: [\n");
        ProbeOptions options;
        options.host_root = dir.path();
        auto facts = probe_host(options);
        REQUIRE_FALSE(facts.ok());
        CHECK(facts.error().text().find("etc/cdi/nvidia.yaml:") != std::string::npos);
    }

    TEST_CASE("the container view adds the files, the conf, the soname links and the cache") {
        TempDir dir;
        debian_host(dir);
        ProbeOptions options;
        options.host_root = dir.path();
        auto facts = probe_host(options);
        REQUIRE(facts.ok());
        auto host = HostReader::open(dir.path());
        REQUIRE(host.ok());
        auto image = std::make_shared<rootlock::fs::MemoryTree>();
        image->add_file("/etc/ld.so.conf", "include /etc/ld.so.conf.d/*.conf\n");
        image->add_file("/bin/sh", elf_text(""), 0755);
        auto view = rootlock::host::container_view(image, *facts, *host);
        REQUIRE_MESSAGE(view.ok(), view.error().text());
        const auto& tree = *view->tree;
        CHECK(tree.read_file(rootlock::host::k_driver_ld_conf).value() == "/" + k_dir + "\n");
        CHECK(tree.readlink("/" + k_dir + "/libcuda.so.1").value() == "libcuda.so.535.261.03");
        CHECK(tree.readlink("/" + k_dir + "/libcuda.so").value() == "libcuda.so.1");
        auto bytes = tree.read_file("/etc/ld.so.cache");
        REQUIRE(bytes.ok());
        std::span<const std::byte> cache_bytes(reinterpret_cast<const std::byte*>(bytes->data()),
                                               bytes->size());
        auto cache = rootlock::loader::parse_ld_so_cache(cache_bytes, "cache");
        REQUIRE(cache.ok());
        bool libcuda = std::any_of(cache->entries.begin(), cache->entries.end(), [](auto& e) {
            return e.soname == "libcuda.so.1" && e.path == "/" + k_dir + "/libcuda.so.1";
        });
        CHECK(libcuda);
    }

    TEST_CASE("image paths are named without the image's links") {
        rootlock::fs::MemoryTree image;
        image.add_dir("/usr/lib");
        image.add_symlink("/lib", "usr/lib");
        CHECK(rootlock::host::image_path(image, "/lib/firmware/nvidia/x/gsp.bin") ==
              "/usr/lib/firmware/nvidia/x/gsp.bin");
        CHECK(rootlock::host::image_path(image, "/opt/x") == "/opt/x");
    }
}

}  // namespace ROOTLOCK_UNIT_ID
