// `rootlock why SONAME|DIST`: who needs it, which files provide it and which copy the loader
// picks for whom, and what breaks without it (a check with its providers hidden).
#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "check/closure_check.hpp"
#include "check/python_checks.hpp"
#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "fs/hiding_tree.hpp"
#include "python/metadata.hpp"
#include "util/json_text.hpp"

namespace rootlock::cli {

namespace {
struct WhyOptions {
    std::string root = "/";
    std::vector<std::string> paths;
    bool json = false;
    std::string subject;
};

// The answer, whatever the subject: built once, rendered as text or JSON.
struct WhyAnswer {
    std::string kind;               // "soname" or "dist"
    std::string version;            // for a distribution
    std::set<std::string> sonames;  // the subject, or what the distribution provides
    std::set<std::string> needed_by;
    std::set<std::string> providers;
    std::map<std::string, check::DeviceCode> device_code;  // providers' GPU architectures
    std::map<std::tuple<std::string, std::string, std::string>, std::set<std::string>>
        picks;                           // (path, via, via_object) -> requesters
    std::vector<check::Problem> breaks;  // errors a check without it adds
    size_t warnings = 0;                 // warnings it adds
};

std::string count(size_t n, const std::string& noun) {
    return fmt::format("{} {}{}", n, noun, n == 1 ? "" : "s");
}

void add_resolutions(const check::CheckReport& report, WhyAnswer& answer) {
    for (const auto& edge : report.edges) {
        if (answer.sonames.count(edge.name) == 0)
            continue;
        answer.needed_by.insert(edge.requester);
        answer.picks[{edge.path, edge.via, edge.via_object}].insert(edge.requester);
    }
    for (const auto& soname : answer.sonames) {
        if (auto it = report.providers.find(soname); it != report.providers.end()) {
            answer.providers.insert(it->second.begin(), it->second.end());
        }
    }
}

void add_breakage(const check::CheckReport& before, const check::CheckReport& after,
                  WhyAnswer& answer) {
    std::set<std::string> seen;
    for (const auto& p : before.problems)
        seen.insert(util::json_text(check::to_json(p)));
    for (const auto& p : after.problems) {
        if (seen.count(util::json_text(check::to_json(p))) != 0)
            continue;
        // A warning (an empty namespace __init__.py going with its last owner) is no breakage.
        if (p.severity == check::Severity::error) {
            answer.breaks.push_back(p);
        } else {
            ++answer.warnings;
        }
    }
}

void print_text(const std::string& subject, const WhyAnswer& answer, const Style& style) {
    if (answer.kind == "dist") {
        fmt::print("{} {}\n\nprovides {}:\n", style.bold(subject), answer.version,
                   count(answer.sonames.size(), "soname"));
        for (const auto& soname : answer.sonames)
            fmt::print("  {}\n", soname);
    } else {
        fmt::print("{}\n", style.bold(subject));
    }
    fmt::print("\nneeded by {}:\n", count(answer.needed_by.size(), "object"));
    for (const auto& n : answer.needed_by)
        fmt::print("  {}\n", n);
    // The GPU architectures of a file with device code, after its path.
    auto architectures = [&](const std::string& path) {
        auto code = answer.device_code.find(path);
        return code == answer.device_code.end()
                   ? std::string()
                   : " [" + check::device_code_text(code->second) + "]";
    };
    fmt::print("\nprovided by {}:\n", count(answer.providers.size(), "file"));
    for (const auto& p : answer.providers)
        fmt::print("  {}{}\n", p, architectures(p));
    if (!answer.picks.empty())
        fmt::print("\nwhich copy the loader picks:\n");
    for (const auto& [pick, who] : answer.picks) {
        const auto& [path, via, via_object] = pick;
        std::string how =
            path.empty() ? (via == "host-provided" ? "the host" : "nothing (not found)")
                         : path + " (" + via + (via_object.empty() ? "" : " of " + via_object) +
                               ")" + architectures(path);
        fmt::print("  {} for {}\n", how, count(who.size(), "object"));
    }
    if (answer.breaks.empty()) {
        fmt::print("\nwithout it: nothing else breaks\n");
        return;
    }
    fmt::print("\nwithout it, {}:\n", count(answer.breaks.size(), "new problem"));
    for (const auto& problem : answer.breaks) {
        const auto& f = problem.fields;
        if (problem.kind == "missing-soname") {
            fmt::print("  {} {} (needed by {})\n", style.red("missing"),
                       f["soname"].get<std::string>(), count(f["needed_by"].size(), "object"));
        } else if (problem.kind == "missing-record-file") {
            fmt::print("  {} {} left without {} of its RECORD\n", style.red("broken"),
                       f["dist"].get<std::string>(), count(f["paths"].size(), "file"));
        } else {
            fmt::print("  {} {}\n", style.red(problem.kind), util::json_text(f));
        }
    }
}

void print_json(const std::string& subject, const WhyAnswer& answer) {
    nlohmann::ordered_json out;
    out["subject"] = subject;
    out["kind"] = answer.kind;
    if (answer.kind == "dist")
        out["version"] = answer.version;
    out["sonames"] = answer.sonames;
    out["needed_by"] = answer.needed_by;
    out["providers"] = answer.providers;
    out["device_code"] = nlohmann::ordered_json::object();
    for (const auto& [path, code] : answer.device_code)
        out["device_code"][path] = check::device_code_json(code);
    out["picks"] = nlohmann::ordered_json::array();
    for (const auto& [pick, who] : answer.picks) {
        const auto& [path, via, via_object] = pick;
        nlohmann::ordered_json item;
        item["path"] = path.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(path);
        item["via"] = via;
        if (!via_object.empty())
            item["via_object"] = via_object;
        item["for"] = who;
        out["picks"].push_back(item);
    }
    out["breaks"] = nlohmann::ordered_json::array();
    for (const auto& problem : answer.breaks)
        out["breaks"].push_back(check::to_json(problem));
    out["warnings"] = answer.warnings;
    fmt::print("{}\n", util::json_text(out, 2));
}

int run_why(const WhyOptions& options) {
    auto tree = open_root(options.root);
    if (!tree)
        return fail_usage(tree.error().text());
    check::CheckOptions check_options;
    check_options.record_edges = true;
    check_options.device_code = true;
    if (!options.paths.empty())
        check_options.paths = options.paths;
    auto baseline = check::run_check(*tree.value(), check_options);
    if (!baseline)
        return fail_usage(baseline.error().text());
    const std::string& subject = options.subject;

    WhyAnswer answer;
    bool is_soname = baseline->providers.count(subject) != 0 ||
                     std::any_of(baseline->edges.begin(), baseline->edges.end(),
                                 [&](const check::Edge& e) { return e.name == subject; });
    if (is_soname) {
        answer.kind = "soname";
        answer.sonames = {subject};
        add_resolutions(*baseline, answer);
        fs::HidingTree hidden(*tree.value(), answer.providers);
        auto after = check::run_check(hidden, check_options);
        if (!after)
            return fail_usage(after.error().text());
        add_breakage(*baseline, *after, answer);
    } else {
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
                fmt::format("nothing in {} needs or provides '{}', and no "
                            "distribution has that name",
                            options.root, subject));
        }
        answer.kind = "dist";
        answer.version = dist->version;
        std::set<std::string> files(dist->installed_paths.begin(), dist->installed_paths.end());
        for (const auto& [soname, paths] : baseline->providers) {
            for (const auto& path : paths) {
                if (files.count(path) != 0)
                    answer.sonames.insert(soname);
            }
        }
        add_resolutions(*baseline, answer);
        check_options.without = {subject};
        auto after = check::run_check(*tree.value(), check_options);
        if (!after)
            return fail_usage(after.error().text());
        add_breakage(*baseline, *after, answer);
    }
    // Providers by soname, and what the loader picked (a library without a SONAME is found
    // by its file name only).
    std::set<std::string> files = answer.providers;
    for (const auto& [pick, who] : answer.picks)
        files.insert(std::get<0>(pick));
    for (const auto& file : files) {
        if (auto code = baseline->device_code.find(file); code != baseline->device_code.end())
            answer.device_code.emplace(file, code->second);
    }
    if (options.json) {
        print_json(subject, answer);
    } else {
        print_text(subject, answer, Style(stdout));
    }
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
    cmd->add_flag("--json", options->json, "Machine-readable answer");
    cmd->add_option("SUBJECT", options->subject, "A soname (libcudnn.so.9) or a distribution")
        ->required();
    cmd->callback([options, &run] { run = [options] { return run_why(*options); }; });
}

}  // namespace rootlock::cli
