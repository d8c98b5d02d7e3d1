// host_facts_json and render_host_facts: one JSON shape (docs/cli.md, `rootlock host --json`)
// and one text layout, driver first, then GPUs, device nodes and the files a container gets.
#include "cli/host_render.hpp"

#include <fmt/format.h>

#include <map>

namespace rootlock::cli {

namespace {

std::string octal_mode(uint32_t mode) {
    return fmt::format("{:04o}", mode);
}

const char* source_name(host::FactsSource source) {
    return source == host::FactsSource::cdi ? "cdi" : "files";
}

}  // namespace

nlohmann::ordered_json host_facts_json(const host::HostFacts& facts) {
    nlohmann::ordered_json out;
    out["host_root"] = facts.host_root;
    out["source"] = source_name(facts.source);
    out["cdi_specs"] = facts.cdi_specs;
    nlohmann::ordered_json driver;
    driver["version"] = facts.driver.version.empty() ? nlohmann::ordered_json()
                                                     : nlohmann::ordered_json(facts.driver.version);
    driver["module"] = host::to_string(facts.driver.flavor);
    driver["from"] = facts.driver.version_from;
    out["driver"] = driver;
    out["gpus"] = nlohmann::ordered_json::array();
    for (const auto& gpu : facts.gpus) {
        nlohmann::ordered_json item;
        item["model"] = gpu.model;
        item["uuid"] = gpu.uuid;
        item["bus"] = gpu.bus;
        item["minor"] = gpu.minor;
        item["compute_capability"] = gpu.compute_capability
                                         ? nlohmann::ordered_json(gpu.compute_capability->text())
                                         : nlohmann::ordered_json();
        item["compute_capability_from"] =
            gpu.compute_capability_from.empty() ? "unknown" : gpu.compute_capability_from;
        out["gpus"].push_back(item);
    }
    out["device_nodes"] = nlohmann::ordered_json::array();
    for (const auto& node : facts.nodes) {
        nlohmann::ordered_json item;
        item["path"] = node.path;
        item["host_path"] = node.host_path;
        item["type"] = std::string(1, node.type);
        item["major"] =
            node.major >= 0 ? nlohmann::ordered_json(node.major) : nlohmann::ordered_json();
        item["minor"] =
            node.minor >= 0 ? nlohmann::ordered_json(node.minor) : nlohmann::ordered_json();
        item["mode"] = octal_mode(node.mode);
        item["uid"] = node.uid;
        item["gid"] = node.gid;
        item["present"] = node.present;
        out["device_nodes"].push_back(item);
    }
    out["uvm_major"] =
        facts.uvm_major ? nlohmann::ordered_json(*facts.uvm_major) : nlohmann::ordered_json();
    out["files"] = nlohmann::ordered_json::array();
    for (const auto& file : facts.files)
        out["files"].push_back({{"host_path", file.host_path},
                                {"container_path", file.container_path},
                                {"kind", host::to_string(file.kind)}});
    out["links"] = nlohmann::ordered_json::array();
    for (const auto& link : facts.links)
        out["links"].push_back({{"path", link.path}, {"target", link.target}});
    out["library_dirs"] = facts.library_dirs;
    out["environment"] = facts.environment;
    out["notes"] = facts.notes;
    return out;
}

std::string render_host_facts(const host::HostFacts& facts, const Style& style) {
    std::string text;
    if (facts.driver.version.empty()) {
        text += fmt::format("{} no NVIDIA driver on {}\n", style.red("driver:"), facts.host_root);
    } else {
        text += fmt::format("{} {} ({} kernel module; from {})\n", style.bold("driver:"),
                            facts.driver.version, host::to_string(facts.driver.flavor),
                            facts.driver.version_from);
    }
    if (facts.source == host::FactsSource::cdi)
        text += fmt::format("{} {}\n", style.bold("cdi:"), fmt::join(facts.cdi_specs, ", "));
    for (const auto& gpu : facts.gpus) {
        std::string cc =
            gpu.compute_capability
                ? gpu.compute_capability->text() + " (" + gpu.compute_capability_from + ")"
                : std::string("unknown (not in rootlock's GPU table; pass --gpu)");
        text += fmt::format("{} {} {} bus {} /dev/nvidia{} compute capability {}\n",
                            style.bold("gpu:"), gpu.model, gpu.uuid, gpu.bus, gpu.minor, cc);
    }
    if (facts.gpus.empty())
        text += fmt::format("{} none listed in /proc/driver/nvidia/gpus\n", style.bold("gpus:"));
    for (const auto& node : facts.nodes) {
        std::string numbers =
            node.major >= 0 ? fmt::format("{}:{}", node.major, node.minor) : "?:? (stat at start)";
        text += fmt::format("{} {} {} {} mode {} owner {}:{}{}\n", style.bold("node:"), node.path,
                            node.type, numbers, octal_mode(node.mode), node.uid, node.gid,
                            node.present ? "" : style.yellow(" (missing now)"));
    }
    if (facts.uvm_major)
        text += fmt::format("{} {} (/proc/devices)\n", style.bold("nvidia-uvm major:"),
                            *facts.uvm_major);
    std::map<std::string, size_t> kinds;
    for (const auto& file : facts.files)
        ++kinds[host::to_string(file.kind)];
    for (const auto& file : facts.files) {
        text += fmt::format("{} {}{}\n", style.dim(std::string(host::to_string(file.kind)) + ":"),
                            file.container_path,
                            file.host_path == file.container_path ? "" : " <- " + file.host_path);
    }
    for (const auto& dir : facts.library_dirs)
        text += fmt::format("{} {}\n", style.bold("library dir:"), dir);
    for (const auto& note : facts.notes)
        text += fmt::format("{} {}\n", style.yellow("note:"), note);
    text += fmt::format("{} {} files for a container", style.bold("summary:"), facts.files.size());
    for (const auto& [kind, count] : kinds)
        text += fmt::format(", {} {}", count, kind);
    text += fmt::format(", {} device nodes, {} GPUs\n", facts.nodes.size(), facts.gpus.size());
    return text;
}

}  // namespace rootlock::cli
