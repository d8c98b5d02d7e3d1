// A CDI spec's document checked field by field: types as Go's strict decoder takes them, then the
// reference loader's rules (pkg/cdi/spec.go, container-edits.go, pkg/parser, specs-go/version.go).
#include "gpu/cdi_validate.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpu/cdi_yaml.hpp"

// The module is compiled as one unit: these helpers live in a namespace no other file uses.
namespace rootlock::gpu::cdi_read {
namespace {

using cdi::shown;
using cdi::YamlNode;
using cdi::YamlTree;
using util::Result;

// The versions the reference knows, oldest first (specs-go/version.go). 0.1.0 and 0.2.0 are
// known but refused: the minimum it computes for any spec is 0.3.0.
constexpr std::array<std::string_view, 10> k_versions = {
    "0.1.0", "0.2.0", "0.3.0", "0.4.0", "0.5.0", "0.6.0", "0.7.0", "0.8.0", "1.0.0", "1.1.0"};
constexpr size_t k_v030 = 2, k_v040 = 3, k_v050 = 4, k_v060 = 5, k_v070 = 6, k_v110 = 9;

bool cdi_letter(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

bool cdi_alnum(char c) {
    return cdi_letter(c) || (c >= '0' && c <= '9');
}

// pkg/parser's vendor and class rule: a letter first, a letter or digit last, "_-." between.
std::string kind_part_problem(std::string_view kind, std::string_view role, std::string_view part) {
    const std::string head = "kind " + shown(kind) + ": the " + std::string(role);
    if (!cdi_letter(part.front()))
        return head + " must start with a letter";
    for (char c : part.substr(1))
        if (!cdi_alnum(c) && c != '_' && c != '-' && c != '.')
            return head + " may hold only letters, digits, \"_\", \"-\" and \".\"";
    if (!cdi_alnum(part.back()))
        return head + " must end with a letter or digit";
    return {};
}

// "" when `name` is a device name pkg/parser accepts: a letter or digit first and last,
// "_-.:" between.
std::string device_name_problem(std::string_view name) {
    if (!cdi_alnum(name.front()))
        return "device name " + shown(name) + " must start with a letter or digit";
    for (char c : name.substr(1))
        if (!cdi_alnum(c) && c != '_' && c != '-' && c != '.' && c != ':')
            return "device name " + shown(name) +
                   " may hold only letters, digits, \"_\", \"-\", \".\" and \":\"";
    if (!cdi_alnum(name.back()))
        return "device name " + shown(name) + " must end with a letter or digit";
    return {};
}

class SpecReader {
  public:
    SpecReader(const YamlTree& tree, std::string_view name) : m_in(tree, name) {}

    Result<CdiSpec> read();

  private:
    util::Error error(const YamlNode& node, std::string message) const {
        return m_in.error(node, std::move(message));
    }

    // The declared cdiVersion must be at least what a field it uses needs; `used`: whether the spec
    // uses the field at all (an empty list does not).
    util::Status require(bool used, size_t version, const YamlNode& node,
                         std::string_view what) const {
        if (!used || m_declared >= version)
            return util::ok_status();
        return error(node, std::string(what) + " needs cdiVersion " +
                               std::string(k_versions[version]) + " or later; the spec declares " +
                               std::string(k_versions[m_declared]));
    }

    Result<std::vector<std::string>> env(const YamlNode& node, std::string_view field);
    Result<std::map<std::string, std::string>> annotations(const YamlNode& node);
    Result<ContainerEdits> edits(const YamlNode& node);
    Result<CdiDeviceNode> device_node(const YamlNode& node);
    Result<CdiMount> mount(const YamlNode& node);
    Result<CdiHook> hook(const YamlNode& node);
    Result<CdiIntelRdt> intel_rdt(const YamlNode& node);
    Result<std::vector<CdiNetDevice>> net_devices(const YamlNode& node);
    Result<CdiDevice> device(const YamlNode& node);

    cdi::TreeReader m_in;
    size_t m_declared = k_v030;
};

// Annotations are strings by any key: the reference's key check is never reached (it
// type-asserts a map[string]string to map[string]any), so it takes any, and so does this.
Result<std::map<std::string, std::string>> SpecReader::annotations(const YamlNode& node) {
    return m_in.string_map(node, "annotations");
}

// NAME=VALUE with a non-empty NAME (ValidateEnv).
Result<std::vector<std::string>> SpecReader::env(const YamlNode& node, std::string_view field) {
    ROOTLOCK_TRY(list, m_in.items(node, field));
    std::vector<std::string> out;
    out.reserve(list.size());
    for (const YamlNode* item : list) {
        ROOTLOCK_TRY(value, m_in.text(*item, std::string(field) + "[]"));
        const size_t equals = value.find('=');
        if (equals == 0 || equals == std::string::npos)
            return error(*item, "env entry " + shown(value) + " is not NAME=VALUE");
        out.push_back(std::move(value));
    }
    return out;
}

Result<CdiDeviceNode> SpecReader::device_node(const YamlNode& node) {
    static constexpr std::array<std::string_view, 9> k_known = {
        "path", "hostPath", "type", "major", "minor", "fileMode", "permissions", "uid", "gid"};
    if (node.kind != YamlNode::Kind::mapping)
        return error(node, "an item of \"deviceNodes\" must be a mapping");
    ROOTLOCK_TRY(f, m_in.fields(node, "a device node", k_known));
    CdiDeviceNode out;
    ROOTLOCK_TRY(path, m_in.optional_text(f[0], "path"));
    out.path = std::move(path);
    if (out.path.empty())
        return error(node, "a device node has no \"path\"");
    if (out.path.front() != '/')
        return error(*f[0], "device node path " + shown(out.path) + " is not absolute");
    if (f[1] != nullptr) {
        ROOTLOCK_TRY(host_path, m_in.text(*f[1], "hostPath"));
        if (!host_path.empty()) {
            if (auto status = require(true, k_v050, *f[1], "a device node's \"hostPath\"");
                !status.ok())
                return status.error();
            if (host_path.front() != '/')
                return error(*f[1],
                             "device node hostPath " + shown(host_path) + " is not absolute");
        }
        out.host_path = std::move(host_path);
    }
    if (out.host_path.empty())
        out.host_path = out.path;
    if (f[2] != nullptr) {
        ROOTLOCK_TRY(type, m_in.text(*f[2], "type"));
        if (type.size() > 1 ||
            (type.size() == 1 && std::string_view("bcup").find(type[0]) == std::string_view::npos))
            return error(*f[2], "device node " + shown(out.path) + " has type " + shown(type) +
                                    ", not one of b, c, u, p");
        if (!type.empty())
            out.type = type[0];
    }
    constexpr int64_t k_u32 = std::numeric_limits<uint32_t>::max();
    constexpr int64_t k_i64_min = std::numeric_limits<int64_t>::min();
    constexpr int64_t k_i64_max = std::numeric_limits<int64_t>::max();
    if (f[3] != nullptr) {
        ROOTLOCK_TRY(major, m_in.integer(*f[3], "major", k_i64_min, k_i64_max));
        out.major = major;
    }
    if (f[4] != nullptr) {
        ROOTLOCK_TRY(minor, m_in.integer(*f[4], "minor", k_i64_min, k_i64_max));
        out.minor = minor;
    }
    if (f[5] != nullptr) {
        ROOTLOCK_TRY(mode, m_in.integer(*f[5], "fileMode", 0, k_u32));
        out.file_mode = static_cast<uint32_t>(mode);
    }
    if (f[6] != nullptr) {
        ROOTLOCK_TRY(permissions, m_in.text(*f[6], "permissions"));
        // As the reference's strings.Trim(p, "rwm") != "": any run of those letters.
        if (permissions != "none" && permissions.find_first_not_of("rwm") != std::string::npos)
            return error(*f[6], "device node " + shown(out.path) + " has permissions " +
                                    shown(permissions) + ", not letters of \"rwm\" or \"none\"");
        out.permissions = std::move(permissions);
    }
    if (f[7] != nullptr) {
        ROOTLOCK_TRY(uid, m_in.integer(*f[7], "uid", 0, k_u32));
        out.uid = static_cast<uint32_t>(uid);
    }
    if (f[8] != nullptr) {
        ROOTLOCK_TRY(gid, m_in.integer(*f[8], "gid", 0, k_u32));
        out.gid = static_cast<uint32_t>(gid);
    }
    return out;
}

Result<CdiMount> SpecReader::mount(const YamlNode& node) {
    static constexpr std::array<std::string_view, 4> k_known = {"hostPath", "containerPath",
                                                                "options", "type"};
    if (node.kind != YamlNode::Kind::mapping)
        return error(node, "an item of \"mounts\" must be a mapping");
    ROOTLOCK_TRY(f, m_in.fields(node, "a mount", k_known));
    CdiMount out;
    ROOTLOCK_TRY(host_path, m_in.optional_text(f[0], "hostPath"));
    out.host_path = std::move(host_path);
    if (out.host_path.empty())
        return error(node, "a mount has no \"hostPath\"");
    ROOTLOCK_TRY(container_path, m_in.optional_text(f[1], "containerPath"));
    out.container_path = std::move(container_path);
    if (out.container_path.empty())
        return error(node, "a mount has no \"containerPath\"");
    if (out.container_path.front() != '/')
        return error(*f[1],
                     "mount containerPath " + shown(out.container_path) + " is not absolute");
    if (f[2] != nullptr) {
        ROOTLOCK_TRY(options, m_in.strings(*f[2], "options"));
        out.options = std::move(options);
    }
    if (f[3] != nullptr) {
        ROOTLOCK_TRY(type, m_in.text(*f[3], "type"));
        if (auto status = require(!type.empty(), k_v040, *f[3], "a mount's \"type\""); !status.ok())
            return status.error();
        out.type = std::move(type);
    }
    // A bind mount's source is a host path; another filesystem's ("tmpfs") need not be one.
    const bool bind = out.type.empty() || out.type == "bind" ||
                      std::any_of(out.options.begin(), out.options.end(),
                                  [](const std::string& o) { return o == "bind" || o == "rbind"; });
    if (bind && out.host_path.front() != '/')
        return error(*f[0], "bind mount hostPath " + shown(out.host_path) + " is not absolute");
    return out;
}

Result<CdiHook> SpecReader::hook(const YamlNode& node) {
    static constexpr std::array<std::string_view, 5> k_known = {"hookName", "path", "args", "env",
                                                                "timeout"};
    // pkg/cdi's validHookNames: the OCI hooks, prestart (deprecated in OCI) included.
    static constexpr std::array<std::string_view, 6> k_hook_names = {
        "prestart", "createRuntime", "createContainer", "startContainer", "poststart", "poststop"};
    if (node.kind != YamlNode::Kind::mapping)
        return error(node, "an item of \"hooks\" must be a mapping");
    ROOTLOCK_TRY(f, m_in.fields(node, "a hook", k_known));
    CdiHook out;
    if (f[0] == nullptr)
        return error(node, "a hook has no \"hookName\"");
    ROOTLOCK_TRY(hook_name, m_in.text(*f[0], "hookName"));
    if (std::find(k_hook_names.begin(), k_hook_names.end(), hook_name) == k_hook_names.end())
        return error(*f[0], "unknown hookName " + shown(hook_name));
    out.hook_name = std::move(hook_name);
    ROOTLOCK_TRY(path, m_in.optional_text(f[1], "path"));
    out.path = std::move(path);
    if (out.path.empty())
        return error(node, "a hook has no \"path\"");
    if (out.path.front() != '/')  // SPEC.md: "path MUST be absolute"
        return error(*f[1], "hook path " + shown(out.path) + " is not absolute");
    if (f[2] != nullptr) {
        ROOTLOCK_TRY(args, m_in.strings(*f[2], "args"));
        out.args = std::move(args);
    }
    if (f[3] != nullptr) {
        ROOTLOCK_TRY(hook_env, env(*f[3], "env"));
        out.env = std::move(hook_env);
    }
    if (f[4] != nullptr) {
        ROOTLOCK_TRY(timeout, m_in.integer(*f[4], "timeout", std::numeric_limits<int>::min(),
                                           std::numeric_limits<int>::max()));
        if (timeout <= 0)  // SPEC.md: "timeout MUST be greater than zero"
            return error(*f[4], "hook timeout must be greater than zero");
        out.timeout = static_cast<int>(timeout);
    }
    return out;
}

Result<CdiIntelRdt> SpecReader::intel_rdt(const YamlNode& node) {
    static constexpr std::array<std::string_view, 5> k_known = {
        "closID", "l3CacheSchema", "memBwSchema", "schemata", "enableMonitoring"};
    if (node.kind != YamlNode::Kind::mapping)
        return error(node, "\"intelRdt\" must be a mapping");
    if (auto status = require(true, k_v070, node, "\"intelRdt\""); !status.ok())
        return status.error();
    ROOTLOCK_TRY(f, m_in.fields(node, "intelRdt", k_known));
    CdiIntelRdt out;
    std::string* targets[] = {&out.clos_id, &out.l3_cache_schema, &out.mem_bw_schema};
    for (size_t i = 0; i < 3; ++i) {
        if (f[i] == nullptr)
            continue;
        ROOTLOCK_TRY(value, m_in.text(*f[i], k_known[i]));
        *targets[i] = std::move(value);
    }
    // The reference's IntelRdt.Validate: a Linux file name, or "/" for the root CLOS.
    const std::string& clos = out.clos_id;
    if (clos != "/" && (clos.size() >= 4096 || clos == "." || clos == ".." ||
                        clos.find_first_of("/\n") != std::string::npos))
        return error(*f[0], "intelRdt closID " + shown(clos) + " is not a file name");
    if (f[3] != nullptr) {
        if (auto status = require(true, k_v110, *f[3], "intelRdt's \"schemata\""); !status.ok())
            return status.error();
        ROOTLOCK_TRY(schemata, m_in.strings(*f[3], "schemata"));
        out.schemata = std::move(schemata);
    }
    if (f[4] != nullptr) {
        ROOTLOCK_TRY(monitoring, m_in.boolean(*f[4], "enableMonitoring"));
        if (auto status = require(monitoring, k_v110, *f[4], "intelRdt's \"enableMonitoring\"");
            !status.ok())
            return status.error();
        out.enable_monitoring = monitoring;
    }
    return out;
}

// ValidateNetDevices: both names given, neither repeated within one list.
Result<std::vector<CdiNetDevice>> SpecReader::net_devices(const YamlNode& node) {
    static constexpr std::array<std::string_view, 2> k_known = {"hostInterfaceName", "name"};
    ROOTLOCK_TRY(list, m_in.items(node, "netDevices"));
    if (auto status = require(!list.empty(), k_v110, node, "\"netDevices\""); !status.ok())
        return status.error();
    std::vector<CdiNetDevice> out;
    std::set<std::string> hosts, names;
    for (const YamlNode* item : list) {
        if (item->kind != YamlNode::Kind::mapping)
            return error(*item, "an item of \"netDevices\" must be a mapping");
        ROOTLOCK_TRY(f, m_in.fields(*item, "a net device", k_known));
        CdiNetDevice device;
        ROOTLOCK_TRY(host, m_in.optional_text(f[0], "hostInterfaceName"));
        device.host_interface_name = std::move(host);
        ROOTLOCK_TRY(name, m_in.optional_text(f[1], "name"));
        device.name = std::move(name);
        if (device.host_interface_name.empty())
            return error(*item, "a net device has no \"hostInterfaceName\"");
        if (device.name.empty())
            return error(*item, "a net device has no \"name\"");
        if (!hosts.insert(device.host_interface_name).second)
            return error(*item, "net device hostInterfaceName " +
                                    shown(device.host_interface_name) + " appears twice");
        if (!names.insert(device.name).second)
            return error(*item, "net device name " + shown(device.name) + " appears twice");
        out.push_back(std::move(device));
    }
    return out;
}

Result<ContainerEdits> SpecReader::edits(const YamlNode& node) {
    static constexpr std::array<std::string_view, 7> k_known = {
        "env", "deviceNodes", "mounts", "hooks", "additionalGids", "intelRdt", "netDevices"};
    if (node.kind != YamlNode::Kind::mapping)
        return error(node, "\"containerEdits\" must be a mapping");
    ROOTLOCK_TRY(f, m_in.fields(node, "containerEdits", k_known));
    ContainerEdits out;
    if (f[0] != nullptr) {
        ROOTLOCK_TRY(values, env(*f[0], "env"));
        out.env = std::move(values);
    }
    if (f[1] != nullptr) {
        ROOTLOCK_TRY(list, m_in.items(*f[1], "deviceNodes"));
        for (const YamlNode* item : list) {
            ROOTLOCK_TRY(value, device_node(*item));
            out.device_nodes.push_back(std::move(value));
        }
    }
    if (f[2] != nullptr) {
        ROOTLOCK_TRY(list, m_in.items(*f[2], "mounts"));
        for (const YamlNode* item : list) {
            ROOTLOCK_TRY(value, mount(*item));
            out.mounts.push_back(std::move(value));
        }
    }
    if (f[3] != nullptr) {
        ROOTLOCK_TRY(list, m_in.items(*f[3], "hooks"));
        for (const YamlNode* item : list) {
            ROOTLOCK_TRY(value, hook(*item));
            out.hooks.push_back(std::move(value));
        }
    }
    if (f[4] != nullptr) {
        ROOTLOCK_TRY(list, m_in.items(*f[4], "additionalGids"));
        if (auto status = require(!list.empty(), k_v070, *f[4], "\"additionalGids\""); !status.ok())
            return status.error();
        for (const YamlNode* item : list) {
            ROOTLOCK_TRY(gid, m_in.integer(*item, "additionalGids[]", 0,
                                           std::numeric_limits<uint32_t>::max()));
            out.additional_gids.push_back(static_cast<uint32_t>(gid));
        }
    }
    if (f[5] != nullptr) {
        ROOTLOCK_TRY(rdt, intel_rdt(*f[5]));
        out.intel_rdt = std::move(rdt);
    }
    if (f[6] != nullptr) {
        ROOTLOCK_TRY(net, net_devices(*f[6]));
        out.net_devices = std::move(net);
    }
    return out;
}

bool cdi_edits_empty(const ContainerEdits& e) {
    return e.env.empty() && e.device_nodes.empty() && e.mounts.empty() && e.hooks.empty() &&
           e.additional_gids.empty() && !e.intel_rdt && e.net_devices.empty();
}

Result<CdiDevice> SpecReader::device(const YamlNode& node) {
    static constexpr std::array<std::string_view, 3> k_known = {"name", "annotations",
                                                                "containerEdits"};
    if (node.kind != YamlNode::Kind::mapping)
        return error(node, "an item of \"devices\" must be a mapping");
    ROOTLOCK_TRY(f, m_in.fields(node, "a device", k_known));
    CdiDevice out;
    ROOTLOCK_TRY(name, m_in.optional_text(f[0], "name"));
    out.name = std::move(name);
    if (out.name.empty())
        return error(node, "a device has no \"name\"");
    if (std::string problem = device_name_problem(out.name); !problem.empty())
        return error(*f[0], std::move(problem));
    const bool digit_first = out.name.front() >= '0' && out.name.front() <= '9';
    if (auto status = require(digit_first, k_v050, *f[0], "a device name starting with a digit");
        !status.ok())
        return status.error();
    if (f[1] != nullptr) {
        ROOTLOCK_TRY(values, annotations(*f[1]));
        if (auto status = require(!values.empty(), k_v060, *f[1], "\"annotations\""); !status.ok())
            return status.error();
        out.annotations = std::move(values);
    }
    if (f[2] != nullptr) {
        ROOTLOCK_TRY(values, edits(*f[2]));
        out.edits = std::move(values);
    }
    if (cdi_edits_empty(out.edits))
        return error(f[2] != nullptr ? *f[2] : node,
                     "device " + shown(out.name) + " has no container edits");
    return out;
}

Result<CdiSpec> SpecReader::read() {
    static constexpr std::array<std::string_view, 5> k_known = {"cdiVersion", "kind", "annotations",
                                                                "devices", "containerEdits"};
    ROOTLOCK_TRY(root, m_in.root());
    if (root->kind == YamlNode::Kind::null)
        return error(*root, "the spec is empty");
    if (root->kind != YamlNode::Kind::mapping)
        return error(*root, "a CDI spec must be a mapping");
    ROOTLOCK_TRY(f, m_in.fields(*root, "the spec", k_known));
    CdiSpec spec;

    if (f[0] == nullptr)
        return error(*root, "the spec has no \"cdiVersion\"");
    ROOTLOCK_TRY(version, m_in.text(*f[0], "cdiVersion"));
    // The reference drops one leading 'v' (newVersion).
    const std::string_view bare =
        std::string_view(version).substr(!version.empty() && version.front() == 'v' ? 1 : 0);
    auto known = std::find(k_versions.begin(), k_versions.end(), bare);
    if (known == k_versions.end())
        return error(*f[0], "unknown cdiVersion " + shown(version));
    m_declared = static_cast<size_t>(known - k_versions.begin());
    if (m_declared < k_v030)
        return error(*f[0], "cdiVersion " + shown(version) +
                                " is older than 0.3.0, the oldest the reference reads");
    spec.version = std::string(bare);

    ROOTLOCK_TRY(kind, m_in.optional_text(f[1], "kind"));
    spec.kind = std::move(kind);
    if (spec.kind.empty())
        return error(*root, "the spec has no \"kind\"");
    // ParseQualifier: cut at the first '/'; either half empty is not a kind.
    const size_t slash = spec.kind.find('/');
    if (slash == std::string::npos || slash == 0 || slash + 1 == spec.kind.size())
        return error(*f[1], "kind " + shown(spec.kind) + " is not vendor/class");
    spec.vendor = spec.kind.substr(0, slash);
    spec.cls = spec.kind.substr(slash + 1);
    for (auto [role, part] : {std::pair<std::string_view, std::string_view>{"vendor", spec.vendor},
                              {"class", spec.cls}})
        if (std::string problem = kind_part_problem(spec.kind, role, part); !problem.empty())
            return error(*f[1], std::move(problem));
    if (auto status = require(spec.cls.find('.') != std::string::npos, k_v060, *f[1],
                              "a dot in the kind's class");
        !status.ok())
        return status.error();

    if (f[2] != nullptr) {
        ROOTLOCK_TRY(values, annotations(*f[2]));
        if (auto status = require(!values.empty(), k_v060, *f[2], "\"annotations\""); !status.ok())
            return status.error();
        spec.annotations = std::move(values);
    }
    if (f[4] != nullptr) {
        ROOTLOCK_TRY(values, edits(*f[4]));
        spec.edits = std::move(values);
    }

    if (f[3] == nullptr)
        return error(*root, "the spec has no \"devices\"");
    ROOTLOCK_TRY(list, m_in.items(*f[3], "devices"));
    if (list.empty())
        return error(*f[3], "the spec defines no devices");
    std::map<std::string, uint32_t> first_line;
    for (const YamlNode* item : list) {
        ROOTLOCK_TRY(device_value, device(*item));
        auto [at, inserted] = first_line.emplace(device_value.name, item->line);
        if (!inserted)
            return error(*item, "device " + shown(device_value.name) +
                                    " is defined twice (first at line " +
                                    std::to_string(at->second) + ")");
        spec.devices.push_back(std::move(device_value));
    }
    return spec;
}

}  // namespace
}  // namespace rootlock::gpu::cdi_read

namespace rootlock::gpu::cdi {

util::Result<CdiSpec> read_spec_tree(const YamlTree& tree, std::string_view name) {
    return cdi_read::SpecReader(tree, name).read();
}

}  // namespace rootlock::gpu::cdi
