// `rootlock why SONAME|DIST`: who needs it, which files provide it and which copy the loader
// picks for whom, and what breaks without it (a check with its providers hidden).
#include <fmt/format.h>

#include <map>
#include <set>

#include "check/closure_check.hpp"
#include "check/python_checks.hpp"
#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "fs/hiding_tree.hpp"
#include "python/metadata.hpp"

namespace rootlock::cli {

namespace {
struct WhyOptions {
    std::string root = "/";
    std::vector<std::string> paths;
    std::string subject;
};

std::string count(size_t n, const std::string& noun) {
    return fmt::format("{} {}{}", n, noun, n == 1 ? "" : "s");
}

// Problems present in `after` but not in `before`.
std::vector<check::Problem> new_problems(const check::CheckReport& before,
                                         const check::CheckReport& after) {
    std::set<std::string> seen;
    for (const auto& p : before.problems)
        seen.insert(check::to_json(p).dump());
    std::vector<check::Problem> out;
    for (const auto& p : after.problems) {
        if (seen.count(check::to_json(p).dump()) == 0)
            out.push_back(p);
    }
    return out;
}

void print_breakage(const std::vector<check::Problem>& all, const Style& style) {
    // Warnings (an empty namespace __init__.py going with its last owner) are not breakage.
    std::vector<check::Problem> broken;
    for (const auto& problem : all) {
        if (problem.severity == check::Severity::error)
            broken.push_back(problem);
    }
    if (broken.empty()) {
        fmt::print("\nwithout it: nothing else breaks\n");
        return;
    }
    fmt::print("\nwithout it, {}:\n", count(broken.size(), "new problem"));
    for (const auto& problem : broken) {
        const auto& f = problem.fields;
        if (problem.kind == "missing-soname") {
            fmt::print("  {} {} (needed by {})\n", style.red("missing"),
                       f["soname"].get<std::string>(), count(f["needed_by"].size(), "object"));
        } else if (problem.kind == "missing-record-file") {
            fmt::print("  {} {} left without {} of its RECORD\n", style.red("broken"),
                       f["dist"].get<std::string>(), count(f["paths"].size(), "file"));
        } else {
            fmt::print("  {} {}\n", style.red(problem.kind), f.dump());
        }
    }
}

int run_why(const WhyOptions& options) {
    auto tree = open_root(options.root);
    if (!tree)
        return fail_usage(tree.error().text());
    check::CheckOptions check_options;
    if (!options.paths.empty())
        check_options.paths = options.paths;
    auto baseline = check::run_check(*tree.value(), check_options);
    if (!baseline)
        return fail_usage(baseline.error().text());
    Style style(stdout);
    const std::string& subject = options.subject;

    std::set<std::string> providers;
    if (auto it = baseline->providers.find(subject); it != baseline->providers.end()) {
        providers.insert(it->second.begin(), it->second.end());
    }
    std::map<std::string, std::set<std::string>> picked;  // provider path -> requesters
    std::set<std::string> needers;
    for (const auto& edge : baseline->edges) {
        if (edge.name != subject)
            continue;
        needers.insert(edge.requester);
        std::string how = edge.provider.empty()
                              ? (edge.via == "host-provided" ? "the host" : "nothing (not found)")
                              : edge.path + " (" + edge.via +
                                    (edge.via_object.empty() ? "" : " of " + edge.via_object) + ")";
        picked[how].insert(edge.requester);
    }

    if (!providers.empty() || !needers.empty()) {
        fmt::print("{}\n", style.bold(subject));
        fmt::print("\nneeded by {}:\n", count(needers.size(), "object"));
        for (const auto& n : needers)
            fmt::print("  {}\n", n);
        fmt::print("\nprovided by {}:\n", count(providers.size(), "file"));
        for (const auto& p : providers)
            fmt::print("  {}\n", p);
        fmt::print("\nwhich copy the loader picks:\n");
        for (const auto& [how, who] : picked) {
            fmt::print("  {} for {}\n", how, count(who.size(), "object"));
        }
        fs::HidingTree hidden(*tree.value(), providers);
        auto after = check::run_check(hidden, check_options);
        if (!after)
            return fail_usage(after.error().text());
        print_breakage(new_problems(*baseline, *after), style);
        return k_exit_ok;
    }

    // Not a soname: maybe a distribution.
    auto environments = check::load_environments(*tree.value(), check_options.paths);
    if (!environments)
        return fail_usage(environments.error().text());
    const python::Distribution* dist = nullptr;
    for (const auto& environment : environments->environments) {
        if ((dist = python::find_distribution(environment, subject)) != nullptr)
            break;
    }
    if (dist == nullptr) {
        return fail_usage(
            fmt::format("nothing in {} needs or provides '{}', and no distribution "
                        "has that name",
                        options.root, subject));
    }
    fmt::print("{} {}\n", style.bold(dist->display_name), dist->version);
    std::set<std::string> sonames;
    for (const auto& path : dist->installed_paths) {
        for (const auto& [soname, files] : baseline->providers) {
            if (std::find(files.begin(), files.end(), path) != files.end())
                sonames.insert(soname);
        }
    }
    fmt::print("\nprovides {}:\n", count(sonames.size(), "soname"));
    for (const auto& soname : sonames) {
        size_t users = 0;
        for (const auto& edge : baseline->edges)
            users += edge.name == soname ? 1U : 0U;
        fmt::print("  {} (requested {} times)\n", soname, users);
    }
    check_options.without = {subject};
    auto after = check::run_check(*tree.value(), check_options);
    if (!after)
        return fail_usage(after.error().text());
    print_breakage(new_problems(*baseline, *after), style);
    return k_exit_ok;
}
}  // namespace

void register_why(CLI::App& app, std::function<int()>& run) {
    auto options = std::make_shared<WhyOptions>();
    CLI::App* cmd = app.add_subcommand(
        "why", "Who needs a soname or distribution, who provides it, what breaks without it");
    cmd->add_option("--root", options->root, "Root directory or rootfs tarball")
        ->capture_default_str();
    cmd->add_option("--path", options->paths, "Limit the model to these paths inside the root")
        ->allow_extra_args(false);
    cmd->add_option("SUBJECT", options->subject, "A soname (libcudnn.so.9) or a distribution")
        ->required();
    cmd->callback([options, &run] { run = [options] { return run_why(*options); }; });
}

}  // namespace rootlock::cli
