// `rootlock check`: the closure check of a root directory or tarball, every problem at once,
// as text or as the JSON contract of docs/cli.md.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "check/closure_check.hpp"
#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/report_text.hpp"
#include "fs/path_resolve.hpp"
#include "loader/dst.hpp"

namespace rootlock::cli {

namespace {
struct CheckCliOptions {
    std::string root = "/";
    bool json = false;
    std::vector<std::string> without;
    std::vector<std::string> host_provides;
    bool no_default_host_provides = false;
    std::string ld_library_path;
    std::string hwcaps;
    std::vector<std::string> paths;
};

int run_check_command(const CheckCliOptions& options) {
    auto tree = open_root(options.root);
    if (!tree)
        return fail_usage(tree.error().text());
    check::CheckOptions check_options;
    if (!options.paths.empty()) {
        check_options.paths.clear();
        for (const auto& path : options.paths)
            check_options.paths.push_back(fs::normalize(path));
    }
    check_options.without = options.without;
    check_options.model.extra_host_provided = options.host_provides;
    check_options.model.no_default_host_provided = options.no_default_host_provides;
    if (!options.ld_library_path.empty()) {
        check_options.model.ld_library_path =
            loader::split_path_list(options.ld_library_path, true);
    }
    check_options.model.overrides.hwcaps = split_list(options.hwcaps);
    auto report = check::run_check(*tree.value(), check_options);
    if (!report)
        return fail_usage(report.error().text());

    for (auto& problem : check::tree_problems(*tree.value())) {
        report->problems.push_back(std::move(problem));
        report->ok = false;
    }
    check::sort_problems(report->problems);

    if (options.json) {
        nlohmann::ordered_json out;
        out["ok"] = report->ok;
        out["objects"] = report->objects;
        out["root"] = options.root;
        out["problems"] = nlohmann::ordered_json::array();
        for (const auto& problem : report->problems)
            out["problems"].push_back(check::to_json(problem));
        out["notes"] = report->notes;
        if (!options.without.empty())
            out["without_hidden"] = report->without_hidden.size();
        fmt::print("{}\n", out.dump(2));
    } else {
        fmt::print("{}", render_report(report.value(), options.root, Style(stdout)));
    }
    return report->ok ? k_exit_ok : k_exit_problems;
}
}  // namespace

void register_check(CLI::App& app, std::function<int()>& run) {
    auto options = std::make_shared<CheckCliOptions>();
    CLI::App* cmd = app.add_subcommand(
        "check", "Prove that every ELF object finds every library and symbol version it needs");
    cmd->add_option("--root", options->root, "Root directory or rootfs tarball")
        ->capture_default_str();
    cmd->add_flag("--json", options->json, "Machine-readable report");
    cmd->add_option("--without", options->without,
                    "Check as if DIST were uninstalled the way pip does it (repeatable)")
        ->allow_extra_args(false);
    cmd->add_option(
           "--host-provides", options->host_provides,
           "A soname the host supplies at run time, beyond the NVIDIA driver's (repeatable)")
        ->allow_extra_args(false);
    cmd->add_flag(
        "--no-default-host-provides", options->no_default_host_provides,
        "Do not count the NVIDIA driver's libraries (libcuda.so.1, ...) as host-provided");
    cmd->add_option("--ld-library-path", options->ld_library_path,
                    "Model an LD_LIBRARY_PATH set in the container");
    cmd->add_option("--hwcaps", options->hwcaps, "glibc-hwcaps levels the target CPU supports");
    cmd->add_option("PATH", options->paths, "Paths inside the root to check (default: all of it)");
    cmd->callback([options, &run] { run = [options] { return run_check_command(*options); }; });
}

}  // namespace rootlock::cli
