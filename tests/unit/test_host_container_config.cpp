// Unit tests for pct-config's engine: devN: lines, LXC cgroup rules and binds, the hook, GPU
// selection, refusals, from host facts written out by hand.
#include <doctest/doctest.h>

#include <string>

#include "host/container_config.hpp"

namespace ROOTLOCK_UNIT_ID {

using rootlock::host::CgroupVersion;
using rootlock::host::ConfigFormat;
using rootlock::host::ConfigOptions;
using rootlock::host::DeviceNode;
using rootlock::host::GpuFacts;
using rootlock::host::HostFacts;
using rootlock::host::ImageFacts;
using rootlock::host::InjectedFile;
using rootlock::host::InjectedKind;
using rootlock::host::make_container_config;
using rootlock::host::select_gpus;

namespace {

DeviceNode node(std::string path, int64_t major, int64_t minor, int gpu_minor = -1,
                uint32_t mode = 0666) {
    DeviceNode out;
    out.path = path;
    out.host_path = path;
    out.major = major;
    out.minor = minor;
    out.mode = mode;
    out.present = true;
    out.gpu_minor = gpu_minor;
    return out;
}

HostFacts two_gpu_host() {
    HostFacts facts;
    facts.host_root = "/srv/host";
    facts.driver.version = "535.261.03";
    GpuFacts first;
    first.model = "NVIDIA GeForce RTX 3090";
    first.uuid = "GPU-6cf00fa7-1a3b-4b2c-9d8e-0123456789ab";
    first.bus = "0000:01:00.0";
    first.minor = 0;
    GpuFacts second = first;
    second.uuid = "GPU-00000000-1111-2222-3333-444444444444";
    second.bus = "0000:02:00.0";
    second.minor = 1;
    facts.gpus = {first, second};
    facts.nodes = {node("/dev/nvidia0", 195, 0, 0), node("/dev/nvidia1", 195, 1, 1),
                   node("/dev/nvidiactl", 195, 255), node("/dev/nvidia-uvm", 511, 0),
                   node("/dev/nvidia-uvm-tools", 511, 1)};
    const std::string dir = "/usr/lib/x86_64-linux-gnu/nvidia/current";
    facts.files = {InjectedFile{dir + "/libcuda.so.535.261.03", dir + "/libcuda.so.535.261.03",
                                InjectedKind::library},
                   InjectedFile{"/usr/bin/nvidia-smi", "/usr/bin/nvidia-smi", InjectedKind::binary},
                   InjectedFile{"/run/nvidia-persistenced/socket",
                                "/run/nvidia-persistenced/socket", InjectedKind::socket}};
    facts.library_dirs = {dir};
    return facts;
}

ImageFacts debian_image() {
    ImageFacts image;
    image.arch = "amd64";
    image.ostype = "debian";
    image.groups = {{"root", 0}, {"video", 44}};
    return image;
}

const std::string k_hook =
    "/bin/sh -c 'R=\"$LXC_ROOTFS_MOUNT\" && printf \"%s\\n\" "
    "/usr/lib/x86_64-linux-gnu/nvidia/current > "
    "\"$R/etc/ld.so.conf.d/00-rootlock-nvidia.conf\" && exec /sbin/ldconfig -r \"$R\"'";

}  // namespace

TEST_SUITE("rootlock::host") {
    TEST_CASE("pct config passes one GPU, the control nodes and read-only binds") {
        ConfigOptions options;
        options.gpus = {"1"};
        options.image = "demo.tar.zst";
        auto config = make_container_config(two_gpu_host(), debian_image(), options);
        CHECK(config.problems.empty());
        CHECK(config.text ==
              "# rootlock pct-config for demo.tar.zst: 1 GPU of /srv/host (driver 535.261.03), "
              "3 driver files\n"
              "arch: amd64\n"
              "ostype: debian\n"
              "dev0: /dev/nvidia1,mode=0666\n"
              "dev1: /dev/nvidiactl,mode=0666\n"
              "dev2: /dev/nvidia-uvm,mode=0666\n"
              "dev3: /dev/nvidia-uvm-tools,mode=0666\n"
              "lxc.mount.entry: /usr/lib/x86_64-linux-gnu/nvidia/current/libcuda.so.535.261.03 "
              "usr/lib/x86_64-linux-gnu/nvidia/current/libcuda.so.535.261.03 none "
              "bind,ro,nosuid,nodev,create=file 0 0\n"
              "lxc.mount.entry: /usr/bin/nvidia-smi usr/bin/nvidia-smi none "
              "bind,ro,nosuid,nodev,create=file 0 0\n"
              "lxc.mount.entry: /run/nvidia-persistenced/socket run/nvidia-persistenced/socket "
              "none bind,ro,nosuid,nodev,noexec,create=file 0 0\n"
              "lxc.hook.mount: " +
                  k_hook + "\n");
    }

    TEST_CASE("lxc config allows each node by its live major and binds it") {
        ConfigOptions options;
        options.format = ConfigFormat::lxc;
        options.cgroup = CgroupVersion::v1;
        options.gpus = {"GPU-6cf00fa7-1a3b-4b2c-9d8e-0123456789ab"};
        auto config = make_container_config(two_gpu_host(), debian_image(), options);
        CHECK(config.problems.empty());
        CHECK(config.text.find("lxc.cgroup.devices.allow = c 195:0 rwm\n"
                               "lxc.mount.entry = /dev/nvidia0 dev/nvidia0 none "
                               "bind,optional,create=file 0 0\n") != std::string::npos);
        CHECK(config.text.find("lxc.cgroup.devices.allow = c 511:1 rwm\n") != std::string::npos);
        CHECK(config.text.find("nvidia1") == std::string::npos);
        CHECK(config.text.find("arch:") == std::string::npos);
    }

    TEST_CASE("a node kept to a group the image has gets that gid") {
        HostFacts facts = two_gpu_host();
        facts.nodes[2].mode = 0660;
        facts.nodes[2].gid = 44;
        auto config = make_container_config(facts, debian_image(), ConfigOptions{});
        CHECK(config.text.find("dev2: /dev/nvidiactl,gid=44,mode=0660\n") != std::string::npos);
        facts.nodes[2].gid = 999;
        config = make_container_config(facts, debian_image(), ConfigOptions{});
        CHECK(config.text.find("dev2: /dev/nvidiactl,mode=0666\n") != std::string::npos);
        REQUIRE(config.notes.size() == 1);
        CHECK(config.notes[0] ==
              "/dev/nvidiactl is mode 0660 for gid 999 on the host, a group the image's "
              "/etc/group lacks: given mode=0666 instead");
    }

    TEST_CASE("refusals come all at once") {
        HostFacts facts = two_gpu_host();
        facts.nodes[3].present = false;
        facts.nodes[3].major = -1;
        facts.nodes.push_back(node("/dev/../etc/passwd", 1, 1));
        ConfigOptions options;
        options.gpus = {"7", "GPU-nope"};
        auto config = make_container_config(facts, debian_image(), options);
        REQUIRE(config.problems.size() == 3);
        CHECK(config.problems[0] ==
              "--gpus: no GPU \"7\", \"GPU-nope\" on this host (it has GPUs 0..1)");
        CHECK(config.problems[1] ==
              "/dev/nvidia-uvm does not exist on the host now: a container naming it fails to "
              "start (install the unit --host-unit writes, or run `nvidia-modprobe -u -c 0` "
              "once)");
        CHECK(config.problems[2] ==
              "\"/dev/../etc/passwd\" is not a path pve-container accepts for devN:");
    }

    TEST_CASE("a host without a driver or GPUs is refused") {
        HostFacts facts;
        facts.host_root = "/";
        auto config = make_container_config(facts, debian_image(), ConfigOptions{});
        REQUIRE(config.problems.size() == 2);
        CHECK(config.problems[0] ==
              "the host has no NVIDIA driver (no kernel module and no libcuda.so.*): nothing to "
              "give a container");
        CHECK(config.problems[1] == "the host lists no GPU in /proc/driver/nvidia/gpus");
    }

    TEST_CASE("the hook makes CDI's links and refuses what its shell line cannot carry") {
        HostFacts facts = two_gpu_host();
        facts.links = {{"/usr/lib/x86_64-linux-gnu/nvidia/current/libcuda.so", "libcuda.so.1"}};
        auto config = make_container_config(facts, debian_image(), ConfigOptions{});
        CHECK(config.text.find(
                  "&& mkdir -p \"$R/usr/lib/x86_64-linux-gnu/nvidia/current\" && ln -sfn "
                  "libcuda.so.1 \"$R/usr/lib/x86_64-linux-gnu/nvidia/current/libcuda.so\" && exec "
                  "/sbin/ldconfig -r \"$R\"'\n") != std::string::npos);
        facts.library_dirs = {"/usr/lib/x'; rm -rf /"};
        config = make_container_config(facts, debian_image(), ConfigOptions{});
        CHECK(config.text.find("lxc.hook.mount") == std::string::npos);
        REQUIRE(config.problems.size() == 1);
        CHECK(config.problems[0] ==
              "a driver directory or link holds characters the start hook's shell line cannot "
              "carry: no hook written");
    }

    TEST_CASE("GPUs are selected by index, UUID and bus, each once") {
        auto chosen = select_gpus(two_gpu_host(), {"0000:02:00.0", "0", "1"});
        REQUIRE(chosen.ok());
        CHECK(*chosen == std::vector<size_t>{0, 1});
    }
}

}  // namespace ROOTLOCK_UNIT_ID
