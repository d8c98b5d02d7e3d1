// `rootlock pct-config`: the container configuration that gives an image this host's GPUs and
// driver (Proxmox's ID.conf, or plain LXC and Incus), written only after the container, as it
// will run, passes the closure check; and the host unit that makes the uvm nodes exist.
#include <fmt/format.h>

#include <charconv>
#include <sstream>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/container_check.hpp"
#include "cli/image_input.hpp"
#include "cli/report_text.hpp"
#include "fs/path_resolve.hpp"
#include "host/container_config.hpp"
#include "image/pct_rules.hpp"
#include "loader/target.hpp"
#include "util/atomic_file.hpp"

namespace rootlock::cli {

namespace {

struct PctConfigCliOptions {
    std::string image;
    std::string host_root = "/";
    std::vector<std::string> cdi;
    std::vector<std::string> gpus = {"all"};
    std::string format = "pct";
    std::string cgroup = "v2";
    std::string output;
    std::string host_unit;
    std::string platform;
    bool allow_broken = false;
};

// pct's `arch`, `ostype` and the image's groups, read from the image itself.
host::ImageFacts read_image_facts(const fs::FileTree& tree) {
    host::ImageFacts facts;
    if (auto target = loader::detect_target(tree, {})) {
        if (target->machine == elf::k_machine_x86_64)
            facts.arch = "amd64";
        else if (target->machine == elf::k_machine_aarch64)
            facts.arch = "arm64";
    }
    for (const char* path : {"/etc/os-release", "/usr/lib/os-release"}) {
        auto resolved = fs::resolve(tree, path);
        if (!resolved)
            continue;
        auto text = tree.read_file(resolved->path, 1 << 20);
        if (!text)
            continue;
        if (auto id = image::os_release_value(*text, "ID")) {
            if (auto distribution = image::pct_distribution_for_id(*id))
                facts.ostype = *distribution;
        }
        break;
    }
    if (auto group = fs::resolve(tree, "/etc/group")) {
        if (auto text = tree.read_file(group->path, 1 << 20)) {
            std::istringstream lines(*text);
            std::string line;
            while (std::getline(lines, line)) {
                // name:password:gid:members
                size_t first = line.find(':');
                size_t second = first == std::string::npos ? first : line.find(':', first + 1);
                size_t third = second == std::string::npos ? second : line.find(':', second + 1);
                if (third == std::string::npos)
                    continue;
                const std::string gid_text = line.substr(second + 1, third - second - 1);
                uint32_t gid = 0;
                auto [end, error] =
                    std::from_chars(gid_text.data(), gid_text.data() + gid_text.size(), gid);
                if (error == std::errc() && end == gid_text.data() + gid_text.size() &&
                    !gid_text.empty())
                    facts.groups[line.substr(0, first)] = gid;
            }
        }
    }
    return facts;
}

int run_pct_config_command(const PctConfigCliOptions& options) {
    host::ConfigOptions config;
    if (options.format == "pct")
        config.format = host::ConfigFormat::pct;
    else if (options.format == "lxc")
        config.format = host::ConfigFormat::lxc;
    else
        return fail_usage("--format: " + util::quote(options.format) + " is not pct or lxc");
    if (options.cgroup == "v2")
        config.cgroup = host::CgroupVersion::v2;
    else if (options.cgroup == "v1")
        config.cgroup = host::CgroupVersion::v1;
    else
        return fail_usage("--cgroup: " + util::quote(options.cgroup) + " is not v1 or v2");
    config.gpus = options.gpus;
    config.image = fs::basename(options.image);
    InputOptions input_options;
    input_options.platform = options.platform;
    auto input = open_input(options.image, input_options);
    if (!input)
        return fail_with(input.error());
    std::shared_ptr<const fs::FileTree> image(std::move(input->tree));
    auto container = open_container(image, ContainerInput{options.host_root, options.cdi, true});
    if (!container)
        return fail_with(container.error());
    // The container as it will run, checked first: a configuration for a container that cannot
    // load its libraries is not written unless asked.
    check::CheckOptions check_options;
    apply_host_to_check(container->facts, check_options);
    auto report = check::run_check(*container->view.tree, check_options);
    if (!report)
        return fail_usage(report.error().text());
    add_host_problems(container->facts, *report);

    const host::ImageFacts image_facts = read_image_facts(*image);
    host::canonical_container_paths(*image, container->facts);
    host::ContainerConfig result =
        host::make_container_config(container->facts, image_facts, config);
    Style err(stderr);
    bool refused = !result.problems.empty() || !report->ok;
    if (!report->ok)
        fmt::print(stderr, "{}", render_report(*report, options.image, err));
    for (const auto& problem : result.problems)
        fmt::print(stderr, "{} {}\n", err.red("error:"), problem);
    for (const auto& note : result.notes)
        fmt::print(stderr, "{} {}\n", err.yellow("note:"), note);
    if (refused && !options.allow_broken) {
        fmt::print(stderr,
                   "{} nothing written ({} problem{} above; --allow-broken writes "
                   "anyway)\n",
                   err.red("refused:"), result.problems.size() + (report->ok ? 0 : 1),
                   result.problems.size() + (report->ok ? 0 : 1) == 1 ? "" : "s");
        return k_exit_problems;
    }
    if (!options.host_unit.empty()) {
        if (auto written = util::write_file_atomically(options.host_unit, host::host_unit_text());
            !written)
            return fail_io(written.error().text());
    }
    if (options.output.empty() || options.output == "-") {
        fmt::print("{}", result.text);
    } else if (auto written = util::write_file_atomically(options.output, result.text); !written) {
        return fail_io(written.error().text());
    } else {
        fmt::print(stderr, "wrote {} ({} format)\n", options.output, options.format);
    }
    return refused ? k_exit_problems : k_exit_ok;
}

}  // namespace

void register_pct_config(CLI::App& app, std::function<int()>& run) {
    auto options = std::make_shared<PctConfigCliOptions>();
    CLI::App* cmd = app.add_subcommand(
        "pct-config",
        "The container configuration that gives IMAGE this host's GPUs and driver (Proxmox or "
        "LXC), after checking the container as it will run");
    cmd->add_option("IMAGE", options->image, "The image: rootfs tarball, directory or OCI image")
        ->required();
    cmd->add_option("--host-root", options->host_root,
                    "Read a host laid out under this directory instead of /")
        ->capture_default_str();
    cmd->add_option("--cdi", options->cdi, "A CDI spec describing the host (repeatable)")
        ->allow_extra_args(false);
    cmd->add_option("--gpus", options->gpus,
                    "Which GPUs: all, indices (0,1), UUIDs or bus ids (repeatable or "
                    "comma-separated)")
        ->delimiter(',')
        ->allow_extra_args(false);
    cmd->add_option("--format", options->format, "pct (/etc/pve/lxc/ID.conf) or lxc")
        ->capture_default_str();
    cmd->add_option("--cgroup", options->cgroup,
                    "lxc format: the cgroup version LXC runs with (v2, or v1)")
        ->capture_default_str();
    cmd->add_option("-o,--output", options->output,
                    "Write the configuration here (default: stdout)");
    cmd->add_option("--host-unit", options->host_unit,
                    "Also write the host's systemd unit that creates the uvm nodes at boot");
    cmd->add_option("--image-platform", options->platform,
                    "The image of a multi-arch OCI index (default linux/amd64)");
    cmd->add_flag("--allow-broken", options->allow_broken,
                  "Write the configuration even when the check or the host refuses");
    cmd->callback(
        [options, &run] { run = [options] { return run_pct_config_command(*options); }; });
}

}  // namespace rootlock::cli
