// Unit tests for CDI specs: nvidia-ctk's output on a real host in YAML and JSON, its test fixture,
// device selection and merged edits, directory priorities, the version rules, every refusal.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "gpu/cdi_spec.hpp"

namespace ROOTLOCK_UNIT_ID {

using rootlock::gpu::CdiDevice;
using rootlock::gpu::CdiMount;
using rootlock::gpu::CdiSpec;
using rootlock::gpu::ContainerEdits;
using rootlock::gpu::edits_for;
using rootlock::gpu::LoadedSpec;
using rootlock::gpu::parse_cdi_spec;
using rootlock::gpu::qualified_name;
using rootlock::gpu::resolve_cdi_specs;
using rootlock::gpu::select_devices;

namespace {

const std::string k_driver = "570.133.20";
const std::string k_uuid = "GPU-6cf00fa7-59e2-16d4-6c69-fd3ff1ac6f4e";
const std::vector<std::string> k_ro = {"ro", "nosuid", "nodev", "bind"};

// /etc/cdi/nvidia.yaml as `nvidia-ctk cdi generate` writes it on a one-T4 host with driver
// 570.133.20 (the layout of Go's YAML encoder: four-space indents, "---" first).
std::string nvidia_yaml() {
    std::string lib = "/usr/lib/x86_64-linux-gnu/";
    auto mount = [&](const std::string& path) {
        return "        - hostPath: " + path + "\n          containerPath: " + path +
               "\n          options:\n            - ro\n            - nosuid\n            - "
               "nodev\n            - bind\n";
    };
    auto device = [](const std::string& name) {
        return "    - name: " + name +
               "\n      containerEdits:\n        deviceNodes:\n            - path: "
               "/dev/nvidia0\n";
    };
    std::string text = "---\ncdiVersion: 0.6.0\nkind: nvidia.com/gpu\ndevices:\n" +
                       device("\"0\"") + device(k_uuid) + device("all") +
                       "containerEdits:\n"
                       "    env:\n"
                       "        - NVIDIA_VISIBLE_DEVICES=void\n"
                       "    deviceNodes:\n"
                       "        - path: /dev/nvidia-modeset\n"
                       "        - path: /dev/nvidia-uvm\n"
                       "        - path: /dev/nvidia-uvm-tools\n"
                       "        - path: /dev/nvidiactl\n"
                       "    hooks:\n"
                       "        - hookName: createContainer\n"
                       "          path: /usr/bin/nvidia-cdi-hook\n"
                       "          args:\n"
                       "            - nvidia-cdi-hook\n"
                       "            - create-symlinks\n"
                       "            - --link\n"
                       "            - ../libnvidia-allocator.so.1::" +
                       lib +
                       "gbm/nvidia-drm_gbm.so\n"
                       "            - --link\n"
                       "            - libcuda.so.1::" +
                       lib +
                       "libcuda.so\n"
                       "        - hookName: createContainer\n"
                       "          path: /usr/bin/nvidia-cdi-hook\n"
                       "          args:\n"
                       "            - nvidia-cdi-hook\n"
                       "            - enable-cuda-compat\n"
                       "            - --host-driver-version=" +
                       k_driver +
                       "\n"
                       "        - hookName: createContainer\n"
                       "          path: /usr/bin/nvidia-cdi-hook\n"
                       "          args:\n"
                       "            - nvidia-cdi-hook\n"
                       "            - update-ldcache\n"
                       "            - --folder\n"
                       "            - /usr/lib/x86_64-linux-gnu\n"
                       "    mounts:\n";
    text +=
        "        - hostPath: /run/nvidia-persistenced/socket\n"
        "          containerPath: /run/nvidia-persistenced/socket\n"
        "          options:\n            - ro\n            - nosuid\n            - nodev\n"
        "            - bind\n            - noexec\n";
    for (const char* tool : {"nvidia-cuda-mps-control", "nvidia-cuda-mps-server",
                             "nvidia-debugdump", "nvidia-persistenced", "nvidia-smi"})
        text += mount(std::string("/usr/bin/") + tool);
    for (const char* name :
         {"libcuda", "libcudadebugger", "libnvidia-allocator", "libnvidia-cfg", "libnvidia-gpucomp",
          "libnvidia-ml", "libnvidia-nscq", "libnvidia-nvvm", "libnvidia-opencl",
          "libnvidia-pkcs11-openssl3", "libnvidia-pkcs11", "libnvidia-ptxjitcompiler"})
        text += mount(lib + name + ".so." + k_driver);
    text += mount("/lib/firmware/nvidia/" + k_driver + "/gsp_ga10x.bin");
    text += mount("/lib/firmware/nvidia/" + k_driver + "/gsp_tu10x.bin");
    return text;
}

// The same spec as JSON (the reference writes JSON for a ".json" name), cut to what the
// comparison needs: devices, nodes, one hook, two mounts.
std::string nvidia_json() {
    return R"({"cdiVersion":"0.6.0","kind":"nvidia.com/gpu","devices":[)"
           R"({"name":"0","containerEdits":{"deviceNodes":[{"path":"/dev/nvidia0"}]}},)"
           R"({"name":"GPU-6cf00fa7-59e2-16d4-6c69-fd3ff1ac6f4e","containerEdits":)"
           R"({"deviceNodes":[{"path":"/dev/nvidia0"}]}},)"
           R"({"name":"all","containerEdits":{"deviceNodes":[{"path":"/dev/nvidia0"}]}}],)"
           R"("containerEdits":{"env":["NVIDIA_VISIBLE_DEVICES=void"],"deviceNodes":[)"
           R"({"path":"/dev/nvidia-modeset"},{"path":"/dev/nvidia-uvm"},)"
           R"({"path":"/dev/nvidia-uvm-tools"},{"path":"/dev/nvidiactl"}],"hooks":[)"
           R"({"hookName":"createContainer","path":"/usr/bin/nvidia-cdi-hook","args":)"
           R"(["nvidia-cdi-hook","update-ldcache","--folder","/usr/lib/x86_64-linux-gnu"]}],)"
           R"("mounts":[{"hostPath":"/usr/bin/nvidia-smi","containerPath":"/usr/bin/nvidia-smi",)"
           R"("options":["ro","nosuid","nodev","bind"]},{"hostPath":)"
           R"("/usr/lib/x86_64-linux-gnu/libcuda.so.570.133.20","containerPath":)"
           R"("/usr/lib/x86_64-linux-gnu/libcuda.so.570.133.20","options":)"
           R"(["ro","nosuid","nodev","bind"]}]}})";
}

// The expected spec of nvidia-ctk's own test (cmd/nvidia-ctk/cdi/generate/generate_test.go,
// case "default", hooks cut to two), its driver root at /drv.
const std::string k_ctk_fixture = R"(---
cdiVersion: 0.5.0
kind: example.com/device
devices:
    - name: "0"
      containerEdits:
        deviceNodes:
            - path: /dev/nvidia0
              hostPath: /drv/dev/nvidia0
    - name: all
      containerEdits:
        deviceNodes:
            - path: /dev/nvidia0
              hostPath: /drv/dev/nvidia0
containerEdits:
    env:
        - NVIDIA_CTK_LIBCUDA_DIR=/lib/x86_64-linux-gnu
        - NVIDIA_VISIBLE_DEVICES=void
    deviceNodes:
        - path: /dev/nvidiactl
          hostPath: /drv/dev/nvidiactl
    hooks:
        - hookName: createContainer
          path: /usr/bin/nvidia-cdi-hook
          args:
            - nvidia-cdi-hook
            - enable-cuda-compat
            - --host-driver-version=999.88.77
          env:
            - NVIDIA_CTK_DEBUG=false
        - hookName: createContainer
          path: /usr/bin/nvidia-cdi-hook
          args:
            - nvidia-cdi-hook
            - update-ldcache
            - --folder
            - /lib/x86_64-linux-gnu
            - --folder
            - /lib/x86_64-linux-gnu/vdpau
          env:
            - NVIDIA_CTK_DEBUG=false
    mounts:
        - hostPath: /drv/lib/x86_64-linux-gnu/libcuda.so.999.88.77
          containerPath: /lib/x86_64-linux-gnu/libcuda.so.999.88.77
          options:
            - ro
            - nosuid
            - nodev
            - rbind
            - rprivate
)";

// A spec of `version` whose one device "gpu0" has `device_edits` (flow style), then `more`
// (whole lines at the top level).
std::string spec_with(const std::string& version, const std::string& device_edits,
                      const std::string& more = "") {
    return "cdiVersion: " + version + "\nkind: nvidia.com/gpu\ndevices:\n- name: gpu0\n" +
           "  containerEdits: " + device_edits + "\n" + more;
}

const std::string k_node = "{deviceNodes: [{path: /dev/nvidia0}]}";

CdiSpec parsed(const std::string& text) {
    auto spec = parse_cdi_spec(text, "nvidia.yaml");
    if (!spec.ok())
        FAIL(spec.error().text());
    return spec.value();
}

std::string refusal(const std::string& text) {
    auto spec = parse_cdi_spec(text, "nvidia.yaml");
    if (spec.ok())
        return "(accepted)";
    return spec.error().text();
}

}  // namespace

TEST_SUITE("rootlock::gpu") {
    TEST_CASE("a real host's nvidia-ctk spec gives its devices, nodes, mounts and hooks") {
        const CdiSpec spec = parsed(nvidia_yaml());
        CHECK(spec.version == "0.6.0");
        CHECK(spec.kind == "nvidia.com/gpu");
        CHECK(spec.vendor == "nvidia.com");
        CHECK(spec.cls == "gpu");
        CHECK(spec.annotations.empty());
        REQUIRE(spec.devices.size() == 3);
        CHECK(spec.devices[0].name == "0");
        CHECK(spec.devices[1].name == k_uuid);
        CHECK(spec.devices[2].name == "all");
        REQUIRE(spec.devices[0].edits.device_nodes.size() == 1);
        const auto& node = spec.devices[0].edits.device_nodes[0];
        CHECK(node.path == "/dev/nvidia0");
        CHECK(node.host_path == "/dev/nvidia0");
        CHECK_FALSE(node.type.has_value());
        CHECK_FALSE(node.major.has_value());
        CHECK(node.permissions.empty());

        const ContainerEdits& edits = spec.edits;
        CHECK(edits.env == std::vector<std::string>{"NVIDIA_VISIBLE_DEVICES=void"});
        REQUIRE(edits.device_nodes.size() == 4);
        CHECK(edits.device_nodes[1].path == "/dev/nvidia-uvm");
        REQUIRE(edits.hooks.size() == 3);
        CHECK(edits.hooks[0].hook_name == "createContainer");
        CHECK(edits.hooks[0].path == "/usr/bin/nvidia-cdi-hook");
        CHECK(edits.hooks[0].args.size() == 6);
        CHECK(edits.hooks[0].args[5] == "libcuda.so.1::/usr/lib/x86_64-linux-gnu/libcuda.so");
        CHECK(edits.hooks[1].args[2] == "--host-driver-version=570.133.20");
        CHECK(edits.hooks[2].args == std::vector<std::string>{"nvidia-cdi-hook", "update-ldcache",
                                                              "--folder",
                                                              "/usr/lib/x86_64-linux-gnu"});
        CHECK_FALSE(edits.hooks[2].timeout.has_value());
        REQUIRE(edits.mounts.size() == 1 + 5 + 12 + 2);
        CHECK(edits.mounts[0].options.back() == "noexec");
        const CdiMount& libcuda = edits.mounts[6];
        CHECK(libcuda.host_path == "/usr/lib/x86_64-linux-gnu/libcuda.so.570.133.20");
        CHECK(libcuda.container_path == libcuda.host_path);
        CHECK(libcuda.options == k_ro);
        CHECK(libcuda.type.empty());
        CHECK(edits.mounts.back().host_path == "/lib/firmware/nvidia/570.133.20/gsp_tu10x.bin");
        CHECK(edits.additional_gids.empty());
        CHECK_FALSE(edits.intel_rdt.has_value());
    }

    TEST_CASE("the same spec as JSON reads as the YAML does") {
        const CdiSpec json = parsed(nvidia_json());
        CdiSpec yaml = parsed(nvidia_yaml());
        // Cut the YAML spec to the JSON's hook and mounts.
        yaml.edits.hooks = {yaml.edits.hooks[2]};
        yaml.edits.mounts = {yaml.edits.mounts[5], yaml.edits.mounts[6]};
        CHECK(json == yaml);
    }

    TEST_CASE("nvidia-ctk's own expected spec reads with host paths under its driver root") {
        const CdiSpec spec = parsed(k_ctk_fixture);
        CHECK(spec.version == "0.5.0");
        CHECK(spec.vendor == "example.com");
        CHECK(spec.cls == "device");
        REQUIRE(spec.devices.size() == 2);
        CHECK(spec.devices[0].edits.device_nodes[0].host_path == "/drv/dev/nvidia0");
        CHECK(spec.edits.device_nodes[0].host_path == "/drv/dev/nvidiactl");
        CHECK(spec.edits.hooks[1].env == std::vector<std::string>{"NVIDIA_CTK_DEBUG=false"});
        CHECK(spec.edits.mounts[0].options.back() == "rprivate");
        CHECK(spec.edits.mounts[0].container_path == "/lib/x86_64-linux-gnu/libcuda.so.999.88.77");
        // Its hostPath needs 0.5.0, so nvidia-ctk could not have written 0.4.0.
        std::string older = k_ctk_fixture;
        older.replace(older.find("0.5.0"), 5, "0.4.0");
        CHECK(refusal(older) ==
              "nvidia.yaml:21:21: a device node's \"hostPath\" needs cdiVersion 0.5.0 or later; "
              "the spec declares 0.4.0");
    }

    TEST_CASE("devices are named bare or qualified, and a request merges top-level edits once") {
        const CdiSpec spec = parsed(nvidia_yaml());
        CHECK(qualified_name(spec, spec.devices[1]) == "nvidia.com/gpu=" + k_uuid);
        auto by_name = select_devices(spec, "0");
        REQUIRE(by_name.size() == 1);
        CHECK(by_name[0] == &spec.devices[0]);
        auto qualified = select_devices(spec, "nvidia.com/gpu=all");
        REQUIRE(qualified.size() == 1);
        CHECK(qualified[0]->name == "all");
        CHECK(select_devices(spec, "amd.com/gpu=0").empty());
        CHECK(select_devices(spec, "1").empty());
        CHECK(select_devices(spec, "nvidia.com/gpu=").empty());

        const ContainerEdits edits = edits_for(spec, {"nvidia.com/gpu=0", k_uuid, "7"});
        REQUIRE(edits.device_nodes.size() == 4 + 2);
        CHECK(edits.device_nodes[0].path == "/dev/nvidia-modeset");
        CHECK(edits.device_nodes[4].path == "/dev/nvidia0");
        CHECK(edits.mounts.size() == spec.edits.mounts.size());
        CHECK(edits.hooks.size() == 3);
        CHECK(edits_for(spec, {"7"}) == ContainerEdits{});
    }

    TEST_CASE("a later intelRdt replaces an earlier one when edits merge") {
        const CdiSpec spec =
            parsed(spec_with("0.7.0", "{intelRdt: {closID: dev}}",
                             "- name: gpu1\n  containerEdits: {additionalGids: [0, 44]}\n"
                             "containerEdits: {intelRdt: {closID: top}, additionalGids: [27]}\n"));
        const ContainerEdits edits = edits_for(spec, {"gpu1", "gpu0"});
        REQUIRE(edits.intel_rdt.has_value());
        CHECK(edits.intel_rdt->clos_id == "dev");
        CHECK(edits.additional_gids == std::vector<uint32_t>{27, 0, 44});
    }

    TEST_CASE("/var/run/cdi outranks /etc/cdi and two equal definitions drop the device") {
        const CdiSpec etc =
            parsed(spec_with("0.6.0", k_node, "- name: gpu1\n  containerEdits: " + k_node + "\n"));
        CdiSpec run = parsed(spec_with("0.6.0", k_node));
        run.devices[0].edits.env = {"FROM=run"};
        auto registry =
            resolve_cdi_specs({{"/var/run/cdi/nvidia.yaml", 1, run},
                               {"/etc/cdi/nvidia.yaml", 0, etc},
                               {"/etc/cdi/other.yaml", 0, parsed(spec_with("0.6.0", k_node))}});
        // gpu0: twice in /etc/cdi (a conflict) and once in /var/run/cdi; the reference drops
        // a conflicted name even though the higher directory defines it.
        CHECK(registry.specs[0].path == "/etc/cdi/nvidia.yaml");
        CHECK(registry.specs[2].path == "/var/run/cdi/nvidia.yaml");
        CHECK(registry.find("nvidia.com/gpu=gpu0") == nullptr);
        REQUIRE(registry.find("nvidia.com/gpu=gpu1") != nullptr);
        CHECK(registry.devices.size() == 1);
        CHECK(registry.conflicts ==
              std::vector<std::string>{"conflicting device \"nvidia.com/gpu=gpu0\" (specs "
                                       "\"/etc/cdi/other.yaml\", \"/etc/cdi/nvidia.yaml\")"});

        auto ranked = resolve_cdi_specs(
            {{"/var/run/cdi/nvidia.yaml", 1, run}, {"/etc/cdi/nvidia.yaml", 0, etc}});
        CHECK(ranked.conflicts.empty());
        const CdiDevice* gpu0 = ranked.find("nvidia.com/gpu=gpu0");
        REQUIRE(gpu0 != nullptr);
        CHECK(gpu0->edits.env == std::vector<std::string>{"FROM=run"});

        auto merged = edits_for(ranked, {"nvidia.com/gpu=gpu0", "nvidia.com/gpu=gpu1"});
        REQUIRE(merged.ok());
        CHECK(merged->env == std::vector<std::string>{"FROM=run"});
        CHECK(merged->device_nodes.size() == 2);
        auto missing = edits_for(ranked, {"nvidia.com/gpu=9", "nvidia.com/gpu=gpu1", "x\ny"});
        REQUIRE_FALSE(missing.ok());
        CHECK(missing.error().text() ==
              "unresolvable CDI devices \"nvidia.com/gpu=9\", \"x\\x0ay\"");
    }

    TEST_CASE("each field is accepted from the version that added it and refused before") {
        struct Case {
            std::string minimum, below, device_edits, more;
            std::string error;  // the refusal at `below`
        };
        const Case cases[] = {
            {"0.4.0", "0.3.0", "{mounts: [{hostPath: /a, containerPath: /a, type: bind}]}", "",
             "nvidia.yaml:5:69: a mount's \"type\" needs cdiVersion 0.4.0 or later; the spec "
             "declares 0.3.0"},
            {"0.5.0", "0.4.0", "{deviceNodes: [{path: /dev/x, hostPath: /h/dev/x}]}", "",
             "nvidia.yaml:5:59: a device node's \"hostPath\" needs cdiVersion 0.5.0 or later; "
             "the spec declares 0.4.0"},
            {"0.6.0", "0.5.0", k_node, "annotations: {a: b}\n",
             "nvidia.yaml:6:14: \"annotations\" needs cdiVersion 0.6.0 or later; the spec "
             "declares 0.5.0"},
            {"0.7.0", "0.6.0", "{additionalGids: [44]}", "",
             "nvidia.yaml:5:36: \"additionalGids\" needs cdiVersion 0.7.0 or later; the spec "
             "declares 0.6.0"},
            {"0.7.0", "0.6.0", "{intelRdt: {closID: a}}", "",
             "nvidia.yaml:5:30: \"intelRdt\" needs cdiVersion 0.7.0 or later; the spec declares "
             "0.6.0"},
            {"1.1.0", "1.0.0", "{netDevices: [{hostInterfaceName: eth1, name: net0}]}", "",
             "nvidia.yaml:5:32: \"netDevices\" needs cdiVersion 1.1.0 or later; the spec "
             "declares 1.0.0"},
            {"1.1.0", "0.8.0", "{intelRdt: {schemata: []}}", "",
             "nvidia.yaml:5:41: intelRdt's \"schemata\" needs cdiVersion 1.1.0 or later; the "
             "spec declares 0.8.0"},
            {"1.1.0", "0.7.0", "{intelRdt: {enableMonitoring: yes}}", "",
             "nvidia.yaml:5:49: intelRdt's \"enableMonitoring\" needs cdiVersion 1.1.0 or "
             "later; the spec declares 0.7.0"},
        };
        for (const Case& c : cases) {
            CAPTURE(c.device_edits);
            CHECK(refusal(spec_with(c.minimum, c.device_edits, c.more)) == "(accepted)");
            CHECK(refusal(spec_with(c.below, c.device_edits, c.more)) == c.error);
        }
        // Empty lists and a false flag use nothing new.
        CHECK(refusal(spec_with("0.3.0", "{env: [A=1], additionalGids: [], netDevices: []}",
                                "annotations: {}\n")) == "(accepted)");
        CHECK(refusal(spec_with("0.7.0", "{intelRdt: {enableMonitoring: false}}")) == "(accepted)");
        // The class of the kind may hold a dot from 0.6.0; the vendor always could.
        std::string dotted = spec_with("0.6.0", k_node);
        dotted.replace(dotted.find("nvidia.com/gpu"), 14, "nvidia.com/gpu.mig");
        CHECK(parsed(dotted).cls == "gpu.mig");
        dotted.replace(dotted.find("0.6.0"), 5, "0.5.0");
        CHECK(refusal(dotted) ==
              "nvidia.yaml:2:7: a dot in the kind's class needs cdiVersion 0.6.0 or later; the "
              "spec declares 0.5.0");
    }

    TEST_CASE("versions, numbers and flags read as the reference's decoder reads them") {
        CHECK(parsed(spec_with("v0.6.0", k_node)).version == "0.6.0");
        CHECK(parsed(spec_with("\"1.1.0\"", k_node)).version == "1.1.0");
        // A byte order mark and CRLF line ends, as an editor on another system may leave them.
        CHECK(parsed("\xef\xbb\xbf"
                     "cdiVersion: 0.6.0\r\nkind: a.b/c\r\ndevices:\r\n- name: x\r\n"
                     "  containerEdits: {env: [A=1]}\r\n")
                  .devices[0]
                  .edits.env == std::vector<std::string>{"A=1"});
        const CdiSpec spec = parsed(
            spec_with("0.5.0",
                      "{deviceNodes: [{path: /dev/nvidiactl, type: c, major: 195, minor: 0xff, "
                      "fileMode: 0666, permissions: rw, uid: 0, gid: !!int 44}, {path: /dev/null, "
                      "major: -1, minor: 1_0, fileMode: 0o644, permissions: none, type: ~}]}"));
        const auto& nodes = spec.devices[0].edits.device_nodes;
        REQUIRE(nodes.size() == 2);
        CHECK(nodes[0].type == 'c');
        CHECK(nodes[0].major == 195);
        CHECK(nodes[0].minor == 255);
        CHECK(nodes[0].file_mode == 0666u);  // YAML 1.1's octal, as yaml.v2 reads it
        CHECK(nodes[0].permissions == "rw");
        CHECK(nodes[0].uid == 0u);
        CHECK(nodes[0].gid == 44u);
        CHECK(nodes[1].major == -1);
        CHECK(nodes[1].minor == 10);
        CHECK(nodes[1].file_mode == 0644u);
        CHECK(nodes[1].permissions == "none");
        CHECK_FALSE(nodes[1].type.has_value());
        const CdiSpec hooks =
            parsed(spec_with("0.6.0",
                             "{hooks: [{hookName: prestart, path: /bin/h, timeout: 5}, {hookName: "
                             "poststop, path: /bin/h, args: [h, 1, true, ''], env: [A=, B==]}]}"));
        CHECK(hooks.devices[0].edits.hooks[0].timeout == 5);
        CHECK(hooks.devices[0].edits.hooks[1].args ==
              std::vector<std::string>{"h", "1", "true", ""});
        CHECK(hooks.devices[0].edits.hooks[1].env == std::vector<std::string>{"A=", "B=="});
        // Null is absent, for Go's decoder; a tmpfs mount's source is not a path.
        const CdiSpec nulls = parsed(
            spec_with("0.6.0",
                      "{env: null, mounts: [{hostPath: tmpfs, containerPath: /tmp, type: tmpfs, "
                      "options: [nosuid]}], hooks: ~}",
                      "annotations:\ncontainerEdits:\n"));
        CHECK(nulls.devices[0].edits.mounts[0].host_path == "tmpfs");
        CHECK(nulls.devices[0].edits.env.empty());
        const CdiSpec annotated =
            parsed(spec_with("0.6.0", k_node, "annotations: {cdi.k8s.io/x: \"1\", n: 2}\n"));
        CHECK(annotated.annotations.at("cdi.k8s.io/x") == "1");
        CHECK(annotated.annotations.at("n") == "2");
        // A device name may hold ':' (pkg/parser), and anchors may share edits between devices.
        const CdiSpec shared = parsed(
            "cdiVersion: 0.5.0\nkind: a.b/c\ndevices:\n- name: mig:0\n  containerEdits: &e " +
            k_node + "\n- name: mig:1\n  containerEdits: *e\n");
        CHECK(shared.devices[1].edits == shared.devices[0].edits);
    }

    TEST_CASE("malformed specs are refused with the file, line and column") {
        struct Case {
            std::string text;
            std::string error;
        };
        const std::string v = "0.6.0";
        const Case cases[] = {
            // YAML itself
            {"cdiVersion: [0.6.0\n", "nvidia.yaml:2:1: YAML: end of sequence flow not found"},
            {"cdiVersion: 0.6.0\nkind: a: b\n", "nvidia.yaml:2:8: YAML: illegal map value"},
            {"kind: \"a\\qb\"\n", "nvidia.yaml:1:11: YAML: unknown escape character: \"q\""},
            {"a: *nothing\n", "nvidia.yaml:1:4: YAML: the referenced anchor is not defined"},
            {"", "nvidia.yaml: no YAML document"},
            {"# only a comment\n", "nvidia.yaml: no YAML document"},
            {"---\n", "nvidia.yaml:2:1: the spec is empty"},
            {"- cdiVersion: 0.6.0\n", "nvidia.yaml:1:1: a CDI spec must be a mapping"},
            {std::string("cdiVersion: 0.6.0\0\n", 19),
             "nvidia.yaml:1:18: control byte 0x00 in YAML text"},
            {"kind: \"\x1b[2J\"\n", "nvidia.yaml:1:8: control byte 0x1b in YAML text"},
            {"a: b\nkind: \xc3\x28\n", "nvidia.yaml:2:7: text is not UTF-8"},
            {"kind: \xed\xa0\x80\n", "nvidia.yaml:1:7: text is not UTF-8"},
            // shape and types
            {spec_with(v, k_node, "vendor: nvidia\n"),
             "nvidia.yaml:6:1: unknown field \"vendor\" in the spec"},
            {spec_with(v, k_node, "kind: again\n"),
             "nvidia.yaml:6:1: field \"kind\" appears twice in the spec"},
            {spec_with(v, "{deviceNodes: [{path: /dev/x, Major: 1}]}"),
             "nvidia.yaml:5:49: unknown field \"Major\" in a device node"},
            {spec_with(v, "{env: [A=1], enableCMT: true}"),
             "nvidia.yaml:5:32: unknown field \"enableCMT\" in containerEdits"},
            {spec_with(v, "{deviceNodes: {path: /dev/x}}"),
             "nvidia.yaml:5:33: \"deviceNodes\" must be a sequence"},
            {spec_with(v, "{env: [[A=1]]}"), "nvidia.yaml:5:26: \"env[]\" must be a string"},
            {spec_with(v, "[env]"), "nvidia.yaml:5:19: \"containerEdits\" must be a mapping"},
            {spec_with(v, "{deviceNodes: [/dev/x]}"),
             "nvidia.yaml:5:34: an item of \"deviceNodes\" must be a mapping"},
            {spec_with(v, "{deviceNodes: [{path: /dev/x, major: \"195\"}]}"),
             "nvidia.yaml:5:56: \"major\" must be an integer"},
            {spec_with(v, "{deviceNodes: [{path: /dev/x, major: 1.5}]}"),
             "nvidia.yaml:5:56: \"major\" must be an integer: \"1.5\""},
            {spec_with(v, "{deviceNodes: [{path: /dev/x, major: 99999999999999999999}]}"),
             "nvidia.yaml:5:56: \"major\" is out of range: \"99999999999999999999\""},
            {spec_with(v, "{deviceNodes: [{path: /dev/x, major: 9223372036854775808}]}"),
             "nvidia.yaml:5:56: \"major\" is out of range: \"9223372036854775808\""},
            {spec_with(v, "{deviceNodes: [{path: /dev/x, uid: -1}]}"),
             "nvidia.yaml:5:54: \"uid\" is out of range: \"-1\""},
            {spec_with(v, "{deviceNodes: [{path: /dev/x, gid: 4294967296}]}"),
             "nvidia.yaml:5:54: \"gid\" is out of range: \"4294967296\""},
            {spec_with("0.7.0", "{additionalGids: [a]}"),
             "nvidia.yaml:5:37: \"additionalGids[]\" must be an integer: \"a\""},
            {spec_with("0.7.0", "{intelRdt: {enableMonitoring: maybe}}"),
             "nvidia.yaml:5:49: \"enableMonitoring\" must be true or false"},
            {spec_with(v, k_node, "annotations: {a: [b]}\n"),
             "nvidia.yaml:6:18: the value of \"a\" in \"annotations\" must be a string"},
            {spec_with(v, k_node, "annotations: {\"\\e[1m\": [b]}\n"),
             "nvidia.yaml:6:24: the value of \"\\x1b[1m\" in \"annotations\" must be a string"},
            {spec_with(v, k_node, "annotations: {a: 1, a: 2}\n"),
             "nvidia.yaml:6:21: key \"a\" appears twice in \"annotations\""},
            {spec_with(v, "{env: !!binary QQ==}"), "nvidia.yaml:5:25: \"env\" must be a sequence"},
            {"{cdiVersion: 0.6.0, kind: !!int 5}", "nvidia.yaml:1:27: \"kind\" must be a string"},
            {spec_with(v, k_node, "[a]: b\n"),
             "nvidia.yaml:6:1: a key in the spec is not a string"},
            {spec_with(v, "&c {env: [A=1], mounts: *c}"),
             "nvidia.yaml:5:19: \"mounts\" must be a sequence"},
            // version
            {"kind: a.b/c\n", "nvidia.yaml:1:1: the spec has no \"cdiVersion\""},
            {spec_with("0.9.0", k_node), "nvidia.yaml:1:13: unknown cdiVersion \"0.9.0\""},
            {spec_with("0.6", k_node), "nvidia.yaml:1:13: unknown cdiVersion \"0.6\""},
            {spec_with("0.6.0-rc1", k_node), "nvidia.yaml:1:13: unknown cdiVersion \"0.6.0-rc1\""},
            {spec_with("0.2.0", k_node),
             "nvidia.yaml:1:13: cdiVersion \"0.2.0\" is older than 0.3.0, the oldest the "
             "reference reads"},
            {spec_with("0.4.0", k_node, "annotations: {a: b}\n"),
             "nvidia.yaml:6:14: \"annotations\" needs cdiVersion 0.6.0 or later; the spec "
             "declares 0.4.0"},
            // kind
            {"cdiVersion: 0.6.0\ndevices: []\n", "nvidia.yaml:1:1: the spec has no \"kind\""},
            {"cdiVersion: 0.6.0\nkind: nvidia.com\n",
             "nvidia.yaml:2:7: kind \"nvidia.com\" is not vendor/class"},
            {"cdiVersion: 0.6.0\nkind: nvidia.com/\n",
             "nvidia.yaml:2:7: kind \"nvidia.com/\" is not vendor/class"},
            {"cdiVersion: 0.6.0\nkind: 1nvidia.com/gpu\n",
             "nvidia.yaml:2:7: kind \"1nvidia.com/gpu\": the vendor must start with a letter"},
            {"cdiVersion: 0.6.0\nkind: nvidia.com./gpu\n",
             "nvidia.yaml:2:7: kind \"nvidia.com./gpu\": the vendor must end with a letter or "
             "digit"},
            {"cdiVersion: 0.6.0\nkind: nvidia.com/gpu/mig\n",
             "nvidia.yaml:2:7: kind \"nvidia.com/gpu/mig\": the class may hold only letters, "
             "digits, \"_\", \"-\" and \".\""},
            {"cdiVersion: 0.6.0\nkind: nvidia.com/_gpu\n",
             "nvidia.yaml:2:7: kind \"nvidia.com/_gpu\": the class must start with a letter"},
            // devices
            {"cdiVersion: 0.6.0\nkind: a.b/c\n", "nvidia.yaml:1:1: the spec has no \"devices\""},
            {"cdiVersion: 0.6.0\nkind: a.b/c\ndevices: []\n",
             "nvidia.yaml:3:10: the spec defines no devices"},
            {spec_with(v, k_node, "- name: gpu0\n  containerEdits: " + k_node + "\n"),
             "nvidia.yaml:6:3: device \"gpu0\" is defined twice (first at line 4)"},
            {"cdiVersion: 0.6.0\nkind: a.b/c\ndevices:\n- containerEdits: " + k_node + "\n",
             "nvidia.yaml:4:3: a device has no \"name\""},
            {"cdiVersion: 0.6.0\nkind: a.b/c\ndevices:\n- name: -gpu\n",
             "nvidia.yaml:4:9: device name \"-gpu\" must start with a letter or digit"},
            {"cdiVersion: 0.6.0\nkind: a.b/c\ndevices:\n- name: gpu/0\n",
             "nvidia.yaml:4:9: device name \"gpu/0\" may hold only letters, digits, \"_\", "
             "\"-\", \".\" and \":\""},
            {"cdiVersion: 0.6.0\nkind: a.b/c\ndevices:\n- name: gpu.\n",
             "nvidia.yaml:4:9: device name \"gpu.\" must end with a letter or digit"},
            {"cdiVersion: 0.6.0\nkind: a.b/c\ndevices:\n- name: gpu0\n",
             "nvidia.yaml:4:3: device \"gpu0\" has no container edits"},
            {spec_with(v, "{env: []}"), "nvidia.yaml:5:19: device \"gpu0\" has no container edits"},
            // edits
            {spec_with(v, "{env: [=x]}"), "nvidia.yaml:5:26: env entry \"=x\" is not NAME=VALUE"},
            {spec_with(v, "{env: [PATH]}"),
             "nvidia.yaml:5:26: env entry \"PATH\" is not NAME=VALUE"},
            {spec_with(v, "{deviceNodes: [{path: dev/nvidia0}]}"),
             "nvidia.yaml:5:41: device node path \"dev/nvidia0\" is not absolute"},
            {spec_with(v, "{deviceNodes: [{hostPath: /dev/x}]}"),
             "nvidia.yaml:5:34: a device node has no \"path\""},
            {spec_with(v, "{deviceNodes: [{path: /dev/x, hostPath: x}]}"),
             "nvidia.yaml:5:59: device node hostPath \"x\" is not absolute"},
            {spec_with(v, "{deviceNodes: [{path: /dev/x, type: x}]}"),
             "nvidia.yaml:5:55: device node \"/dev/x\" has type \"x\", not one of b, c, u, p"},
            {spec_with(v, "{deviceNodes: [{path: /dev/x, type: cb}]}"),
             "nvidia.yaml:5:55: device node \"/dev/x\" has type \"cb\", not one of b, c, u, p"},
            {spec_with(v, "{deviceNodes: [{path: /dev/x, permissions: rx}]}"),
             "nvidia.yaml:5:62: device node \"/dev/x\" has permissions \"rx\", not letters of "
             "\"rwm\" or \"none\""},
            {spec_with(v, "{mounts: [{hostPath: /a, containerPath: a}]}"),
             "nvidia.yaml:5:59: mount containerPath \"a\" is not absolute"},
            {spec_with(v, "{mounts: [{hostPath: lib, containerPath: /a}]}"),
             "nvidia.yaml:5:40: bind mount hostPath \"lib\" is not absolute"},
            {spec_with(v,
                       "{mounts: [{hostPath: lib, containerPath: /a, type: tmpfs, options: "
                       "[rbind]}]}"),
             "nvidia.yaml:5:40: bind mount hostPath \"lib\" is not absolute"},
            {spec_with(v, "{mounts: [{containerPath: /a}]}"),
             "nvidia.yaml:5:29: a mount has no \"hostPath\""},
            {spec_with(v, "{mounts: [{hostPath: /a, containerPath: \"\"}]}"),
             "nvidia.yaml:5:29: a mount has no \"containerPath\""},
            {spec_with(v, "{hooks: [{hookName: preStart, path: /bin/h}]}"),
             "nvidia.yaml:5:39: unknown hookName \"preStart\""},
            {spec_with(v, "{hooks: [{path: /bin/h}]}"),
             "nvidia.yaml:5:28: a hook has no \"hookName\""},
            {spec_with(v, "{hooks: [{hookName: poststop}]}"),
             "nvidia.yaml:5:28: a hook has no \"path\""},
            {spec_with(v, "{hooks: [{hookName: poststop, path: nvidia-cdi-hook}]}"),
             "nvidia.yaml:5:55: hook path \"nvidia-cdi-hook\" is not absolute"},
            {spec_with(v, "{hooks: [{hookName: poststop, path: /h, env: [X]}]}"),
             "nvidia.yaml:5:65: env entry \"X\" is not NAME=VALUE"},
            {spec_with(v, "{hooks: [{hookName: poststop, path: /h, timeout: 0}]}"),
             "nvidia.yaml:5:68: hook timeout must be greater than zero"},
            {spec_with(v, "{hooks: [{hookName: poststop, path: /h, timeout: 2147483648}]}"),
             "nvidia.yaml:5:68: \"timeout\" is out of range: \"2147483648\""},
            {spec_with("0.7.0", "{intelRdt: {closID: a/b}}"),
             "nvidia.yaml:5:39: intelRdt closID \"a/b\" is not a file name"},
            {spec_with("1.1.0", "{netDevices: [{hostInterfaceName: eth1}]}"),
             "nvidia.yaml:5:33: a net device has no \"name\""},
            {spec_with("1.1.0",
                       "{netDevices: [{hostInterfaceName: eth1, name: a}, "
                       "{hostInterfaceName: eth1, name: b}]}"),
             "nvidia.yaml:5:69: net device hostInterfaceName \"eth1\" appears twice"},
        };
        for (const Case& c : cases) {
            CAPTURE(c.text);
            CHECK(refusal(c.text) == c.error);
        }
    }

    TEST_CASE("hostile input stops at the limits: size, nesting, nodes, aliases") {
        CHECK(refusal(std::string((16u << 20) + 1, ' ')) ==
              "nvidia.yaml: larger than 16 MiB (16777217 bytes)");
        // Stopped at the 33rd level, before yaml-cpp recurses further (its own guard is 2000
        // levels deep); the column is yaml-cpp's mark for a flow sequence it cannot close.
        CHECK(refusal(std::string(100000, '[')) ==
              "nvidia.yaml:1:17: nested deeper than 32 levels");
        CHECK(refusal(std::string(40, '[') + std::string(40, ']')) ==
              "nvidia.yaml:1:33: nested deeper than 32 levels");
        std::string blocks;
        for (int depth = 0; depth < 40; ++depth)
            blocks += std::string(static_cast<size_t>(depth), ' ') + "a:\n";
        CHECK(refusal(blocks) == "nvidia.yaml:33:33: nested deeper than 32 levels");
        std::string many = "[";
        for (int i = 0; i < 100001; ++i)
            many += "0,";
        many += "]";
        CHECK(refusal(many) == "nvidia.yaml:1:200000: more than 100000 YAML nodes");
        // Billion laughs: nine levels of ten aliases name 10^9 strings in 400 bytes. Nested
        // sequences fit no field of the schema, so the reader stops at the first.
        std::string laughs = "a0: &a0 [x]\n";
        for (int level = 1; level < 10; ++level) {
            const std::string below = "*a" + std::to_string(level - 1);
            laughs += "a" + std::to_string(level) + ": &a" + std::to_string(level) + " [";
            for (int k = 0; k < 10; ++k)
                laughs += below + (k < 9 ? "," : "");
            laughs += "]\n";
        }
        CHECK(refusal(laughs) == "nvidia.yaml:1:1: unknown field \"a0\" in the spec");
        // What the schema does expand: 300 mounts whose options are one 1000-item alias.
        std::string repeated =
            "cdiVersion: 0.6.0\nkind: a.b/c\ndevices:\n- name: d\n"
            "  containerEdits:\n    env: &e [";
        for (int i = 0; i < 1000; ++i)
            repeated += std::string(i ? "," : "") + "A=1";
        repeated += "]\n    mounts: [";
        for (int i = 0; i < 300; ++i)
            repeated +=
                std::string(i ? "," : "") + "{hostPath: /a, containerPath: /a, options: *e}";
        repeated += "]\n";
        CHECK(refusal(repeated) == "nvidia.yaml:6:374: aliases repeat nodes past 100000");
        // And a megabyte of text named a hundred times.
        std::string text_bomb =
            "cdiVersion: 0.6.0\nkind: a.b/c\ndevices:\n- name: d\n"
            "  containerEdits:\n    env: [&v \"A=" +
            std::string(1u << 20, 'x') + "\"";
        for (int i = 0; i < 100; ++i)
            text_bomb += ", *v";
        text_bomb += "]\n";
        CHECK(refusal(text_bomb) == "nvidia.yaml:6:11: aliases repeat text past 64 MiB");
    }
}

}  // namespace ROOTLOCK_UNIT_ID
