// Container Device Interface specs (the /etc/cdi and /var/run/cdi files nvidia-ctk writes), read
// as the reference loader (cncf-tags/container-device-interface) reads them, so that rootlock sees
// the devices, mounts and hooks a runtime will inject, and refuses what a runtime would refuse.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.hpp"

namespace rootlock::gpu {

// One deviceNodes[] entry. Absent numbers stay absent: the runtime stats host_path when the
// container starts (nvidia-ctk never writes a major, uvm's is dynamic).
struct CdiDeviceNode {
    std::string path;          // in the container, absolute
    std::string host_path;     // "hostPath", or `path` when the spec gives none
    std::optional<char> type;  // 'b', 'c', 'u' or 'p'
    std::optional<int64_t> major, minor;
    std::optional<uint32_t> file_mode;
    std::string permissions;           // letters of "rwm", "none", or "" (the runtime reads "rwm")
    std::optional<uint32_t> uid, gid;  // in the container's user namespace

    bool operator==(const CdiDeviceNode&) const = default;
};

struct CdiMount {
    std::string host_path;       // absolute for a bind mount; a filesystem's source otherwise
    std::string container_path;  // absolute
    std::vector<std::string> options;
    std::string type;  // "" when absent

    bool operator==(const CdiMount&) const = default;
};

struct CdiHook {
    std::string hook_name;          // createRuntime, createContainer, startContainer, poststart,
                                    // poststop, or the deprecated prestart
    std::string path;               // absolute
    std::vector<std::string> args;  // argv, argv[0] included
    std::vector<std::string> env;   // NAME=VALUE
    std::optional<int> timeout;     // seconds, > 0

    bool operator==(const CdiHook&) const = default;
};

// intelRdt (0.7.0; schemata and enableMonitoring 1.1.0). No GPU spec uses it; it is kept so
// that a merge of edits replaces it as the runtime does.
struct CdiIntelRdt {
    std::string clos_id, l3_cache_schema, mem_bw_schema;
    std::optional<std::vector<std::string>> schemata;  // present, even empty, needs 1.1.0
    bool enable_monitoring = false;

    bool operator==(const CdiIntelRdt&) const = default;
};

// netDevices[] (1.1.0): a host interface moved into the container under a new name.
struct CdiNetDevice {
    std::string host_interface_name;
    std::string name;

    bool operator==(const CdiNetDevice&) const = default;
};

// What a runtime does to the container's OCI spec: at the top level for any device of the spec,
// in a device for that device.
struct ContainerEdits {
    std::vector<std::string> env;  // NAME=VALUE
    std::vector<CdiDeviceNode> device_nodes;
    std::vector<CdiMount> mounts;
    std::vector<CdiHook> hooks;
    std::vector<uint32_t> additional_gids;  // as written; the runtime skips 0
    std::optional<CdiIntelRdt> intel_rdt;
    std::vector<CdiNetDevice> net_devices;

    bool operator==(const ContainerEdits&) const = default;
};

struct CdiDevice {
    std::string name;  // unqualified: "0", "GPU-<uuid>", "all"
    std::map<std::string, std::string> annotations;
    ContainerEdits edits;  // never empty: the reference refuses a device without edits

    bool operator==(const CdiDevice&) const = default;
};

struct CdiSpec {
    std::string version;      // cdiVersion without the 'v' the reference tolerates: "0.6.0"
    std::string kind;         // "nvidia.com/gpu"
    std::string vendor, cls;  // the kind's two halves
    std::map<std::string, std::string> annotations;
    std::vector<CdiDevice> devices;  // at least one, names unique, in file order
    ContainerEdits edits;            // applied when any device of the spec is requested

    bool operator==(const CdiSpec&) const = default;
};

// One spec from YAML or JSON text (YAML 1.2 reads both). Refused as the reference refuses:
// malformed text, unknown or repeated fields, wrong types, a cdiVersion it does not know or
// older than 0.3.0 or older than a field it uses needs (deviceNodes[].hostPath and a device
// name starting with a digit 0.5.0, annotations and a dotted class 0.6.0, ...), a bad kind or
// device name, no device, a duplicate device, a device without edits, a bad env entry, node
// type, permissions or hook name. Stricter than the reference: device node paths, mount
// container paths, bind mounts' host paths and hook paths must be absolute, a hook's timeout
// greater than zero (SPEC.md's rule for hooks, the OCI runtime spec's for paths). Errors are
// "NAME:LINE:COL: message" (1-based), one printable line. Bounded for hostile input
// (cdi_yaml.hpp): 16 MiB of text, 32 levels of nesting, 100000 YAML nodes, and as many nodes
// and 64 MiB of strings read through aliases.
util::Result<CdiSpec> parse_cdi_spec(std::string_view text, std::string_view name);

// "vendor/class=name": the name a runtime is asked for ("nvidia.com/gpu=0").
std::string qualified_name(const CdiSpec& spec, const CdiDevice& device);

// The devices a request names in this spec: `device` is a bare name ("0") or a qualified one
// ("nvidia.com/gpu=0", which must be of this spec's kind). CDI has no wildcard ("all" is a
// device nvidia-ctk defines), so the answer holds one device or none.
std::vector<const CdiDevice*> select_devices(const CdiSpec& spec, std::string_view device);

// The edits a container gets for these devices of one spec, as the runtime merges them: the
// spec's top-level edits once (only when a named device exists), then each named device's in
// the order asked; lists are concatenated, a later intelRdt replaces an earlier one. Names as
// for select_devices; a name the spec lacks adds nothing.
ContainerEdits edits_for(const CdiSpec& spec, const std::vector<std::string>& device_names);

// A parsed spec and the priority of the directory it was read from (the reference's index in
// its directory list: /etc/cdi 0, /var/run/cdi 1).
struct LoadedSpec {
    std::string path;
    int priority = 0;
    CdiSpec spec;
};

// Every device the runtime can inject, by qualified name, after the directories' priorities.
struct CdiRegistry {
    struct Entry {
        size_t spec = 0;    // index into `specs`
        size_t device = 0;  // index into specs[spec].spec.devices
    };
    std::vector<LoadedSpec> specs;  // in scan order: by priority, then as given
    std::map<std::string, Entry> devices;
    std::vector<std::string> conflicts;  // one line each, paths quoted

    const CdiDevice* find(std::string_view qualified) const;
};

// The reference cache's refresh over specs already parsed: specs are scanned by priority (a
// stable sort: give each directory's files in name order, as the runtime lists them); a device
// from a higher priority replaces one from a lower; a second definition at the same priority is
// a conflict, and a conflicted name is dropped at the end even when a higher priority also
// defines it (the reference does so).
CdiRegistry resolve_cdi_specs(std::vector<LoadedSpec> specs);

// The edits for these qualified devices across specs (the runtime's InjectDevices): each
// device's spec's top-level edits the first time a device of that spec is named, then the
// device's. A name not in the registry is an error naming every such name.
util::Result<ContainerEdits> edits_for(const CdiRegistry& registry,
                                       const std::vector<std::string>& qualified_names);

}  // namespace rootlock::gpu
