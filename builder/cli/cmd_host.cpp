// `rootlock host`: what this host (or one laid out under --host-root) gives a GPU container,
// read from files only, or from its CDI specs; text for people, JSON for tools and tests.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/host_render.hpp"
#include "host/host_probe.hpp"
#include "util/json_text.hpp"

namespace rootlock::cli {

namespace {

struct HostCliOptions {
    std::string host_root = "/";
    std::vector<std::string> cdi;
    bool json = false;
    bool no_nvidia_smi = false;
};

int run_host_command(const HostCliOptions& options) {
    host::ProbeOptions probe;
    probe.host_root = options.host_root;
    probe.cdi_files = options.cdi;
    probe.run_nvidia_smi = !options.no_nvidia_smi;
    auto facts = host::probe_host(probe);
    if (!facts)
        return fail_with(facts.error());
    const bool driver = !facts->driver.version.empty();
    if (options.json)
        fmt::print("{}\n", util::json_text(host_facts_json(*facts), 2));
    else
        fmt::print("{}", render_host_facts(*facts, Style(stdout)));
    return driver ? k_exit_ok : k_exit_problems;
}

}  // namespace

void register_host(CLI::App& app, std::function<int()>& run) {
    auto options = std::make_shared<HostCliOptions>();
    CLI::App* cmd = app.add_subcommand(
        "host", "What this host gives a GPU container: driver, GPUs, device nodes, driver files");
    cmd->add_option("--host-root", options->host_root,
                    "Read a host laid out under this directory instead of /")
        ->capture_default_str();
    cmd->add_option("--cdi", options->cdi,
                    "A CDI spec describing the host (repeatable; default: the host's /etc/cdi "
                    "and /var/run/cdi)")
        ->allow_extra_args(false);
    cmd->add_flag("--no-nvidia-smi", options->no_nvidia_smi,
                  "Never run nvidia-smi (compute capabilities from the GPU table only)");
    cmd->add_flag("--json", options->json, "Machine-readable report");
    cmd->callback([options, &run] { run = [options] { return run_host_command(*options); }; });
}

}  // namespace rootlock::cli
