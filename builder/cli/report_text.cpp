// render_report(); see report_text.hpp.
#include "cli/report_text.hpp"

#include <cstring>
#include <map>

#include <fmt/format.h>

namespace rootlock::cli {

namespace {
std::string plural(size_t count, std::string_view one, std::string_view many) {
    return fmt::format("{} {}", count, count == 1 ? one : many);
}

const char* group_title(const std::string& kind) {
    if (kind == "missing-soname")
        return "missing shared libraries";
    if (kind == "missing-version")
        return "missing symbol versions";
    if (kind == "undefined-symbol")
        return "sets of undefined symbols";
    if (kind == "missing-record-file")
        return "distributions whose files are gone (metadata-only installs)";
    if (kind == "shared-path")
        return "paths claimed by two distributions (uninstalling one breaks the other)";
    if (kind == "cuda-major-mix")
        return "closures mixing CUDA majors";
    if (kind == "bad-object")
        return "objects the loader would reject";
    if (kind == "missing-interpreter")
        return "programs whose dynamic loader (PT_INTERP) is missing";
    if (kind == "broken-environment")
        return "broken Python environments";
    if (kind == "unsafe-path")
        return "unsafe paths in the tree";
    return "other problems";
}

void list_paths(std::string& out, const char* label, const nlohmann::ordered_json& paths,
                size_t limit = 8) {
    size_t shown = 0;
    for (const auto& path : paths) {
        if (shown == limit) {
            out += fmt::format("      ... and {} more\n", paths.size() - limit);
            break;
        }
        std::string prefix = shown == 0 ? std::string(label) : std::string(std::strlen(label), ' ');
        if (!prefix.empty())
            prefix += ' ';
        out += fmt::format("    {}{}\n", prefix, path.get<std::string>());
        ++shown;
    }
}

// "41 symbols from libc10.so are missing: this extension was built against another torch",
// then who needs them and the first names, demangled, with when they fail.
void render_undefined_symbols(std::string& out, const nlohmann::ordered_json& f,
                              const Style& style) {
    const size_t count = f["count"].get<size_t>();
    const std::string library = f["library"].get<std::string>();
    std::string head = fmt::format(
        "{} {}", plural(count, "symbol", "symbols"),
        library.empty() ? std::string(count == 1 ? "is" : "are") + " defined by nothing in scope"
                        : fmt::format("from {} {} missing", library, count == 1 ? "is" : "are"));
    if (f.contains("hint"))
        head += ": " + f["hint"].get<std::string>();
    out += fmt::format("  {}\n", style.bold(head));
    if (!f["provider"].get<std::string>().empty())
        out += fmt::format("    {} bound to {}\n", library, f["provider"].get<std::string>());
    list_paths(out, "needed by", f["needed_by"]);
    if (f.contains("context"))
        out += "    (nothing in the checked paths loads the needers: checked on their own)\n";
    size_t shown = 0;
    for (const auto& symbol : f["symbols"]) {
        if (shown++ == 10) {
            out += fmt::format("      ... and {} more (--json lists all)\n", count - 10);
            break;
        }
        std::string version = symbol["version"].get<std::string>();
        out += fmt::format("      {}{} ({})\n", symbol["demangled"].get<std::string>(),
                           version.empty() ? "" : "@" + version,
                           symbol["fails"] == "at-load" ? "fails at load" : "fails at first call");
    }
    if (f.contains("defined_by"))
        list_paths(out, "defined in", f["defined_by"], 4);
    if (f.contains("cached_builds")) {
        std::string builds;
        for (const auto& build : f["cached_builds"])
            builds += (builds.empty() ? "" : ", ") + build.get<std::string>();
        out += fmt::format("    defined by torch {} (in rootlock's cache)\n", builds);
    }
}

void render_problem(std::string& out, const check::Problem& problem, const Style& style) {
    const auto& f = problem.fields;
    const std::string& kind = problem.kind;
    if (kind == "missing-soname") {
        out += fmt::format("  {}\n", style.bold(f["soname"].get<std::string>()));
        list_paths(out, "needed by", f["needed_by"]);
        if (f.contains("context")) {
            out += "    (nothing in the checked paths loads the needers: checked on their own)\n";
        }
        if (f["candidates"].empty()) {
            out += "    no copy anywhere in the checked paths\n";
        } else {
            list_paths(out, "a copy is at", f["candidates"]);
        }
    } else if (kind == "missing-version") {
        out += fmt::format("  {} from {} ({})\n", style.bold(f["version"].get<std::string>()),
                           f["soname"].get<std::string>(), f["provider"].get<std::string>());
        list_paths(out, "needed by", f["needed_by"]);
    } else if (kind == "undefined-symbol") {
        render_undefined_symbols(out, f, style);
    } else if (kind == "missing-record-file") {
        out += fmt::format(
            "  {} {}: {} listed in RECORD but missing\n", style.bold(f["dist"].get<std::string>()),
            f["version"].get<std::string>(), plural(f["paths"].size(), "file", "files"));
        list_paths(out, "e.g.", f["paths"], 3);
    } else if (kind == "shared-path") {
        std::string dists;
        for (const auto& d : f["dists"])
            dists += (dists.empty() ? "" : ", ") + d.get<std::string>();
        out += fmt::format("  {}\n    claimed by {}\n", f["path"].get<std::string>(), dists);
    } else if (kind == "cuda-major-mix") {
        std::string majors;
        for (const auto& m : f["majors"])
            majors += (majors.empty() ? "" : " and ") + std::to_string(m.get<int>());
        out += fmt::format("  {}: CUDA {} in one process\n",
                           style.bold(f["family"].get<std::string>()), majors);
        list_paths(out, "objects", f["objects"]);
    } else if (kind == "missing-interpreter") {
        out += fmt::format("  {}\n", style.bold(f["interpreter"].get<std::string>()));
        list_paths(out, "needed by", f["needed_by"]);
    } else if (kind == "bad-object") {
        out += fmt::format("  {}: {}\n", style.bold(f["path"].get<std::string>()),
                           f["problem"].get<std::string>());
        if (f.contains("needed_by"))
            list_paths(out, "needed by", f["needed_by"]);
    } else if (kind == "broken-environment") {
        out += fmt::format("  {}: {}\n", style.bold(f["environment"].get<std::string>()),
                           f["problem"].get<std::string>());
    } else {
        out += fmt::format("  {}\n", f.dump());
    }
}
// Shared paths come in families (every cuDNN library is claimed by the cu12 and the cu13
// dist): one block per set of claimants reads better than one per path.
void render_shared_paths(std::string& out, const std::vector<const check::Problem*>& list,
                         const Style& style) {
    std::map<std::string, nlohmann::ordered_json> by_claimants;
    for (const auto* problem : list) {
        std::string dists;
        for (const auto& d : problem->fields["dists"]) {
            dists += (dists.empty() ? "" : " and ") + d.get<std::string>();
        }
        by_claimants[dists].push_back(problem->fields["path"]);
    }
    for (const auto& [dists, paths] : by_claimants) {
        out += fmt::format("  claimed by {}:\n", style.bold(dists));
        list_paths(out, "", paths, 4);
    }
}
}  // namespace

std::string render_report(const check::CheckReport& report, const std::string& root,
                          const Style& style) {
    std::string out;
    out += fmt::format("rootlock check: {} ({} checked, {} bound)\n", root,
                       plural(report.objects, "ELF object", "ELF objects"),
                       plural(report.symbols, "symbol reference", "symbol references"));
    if (!report.without_hidden.empty()) {
        out += fmt::format("as if uninstalled: {} hidden\n",
                           plural(report.without_hidden.size(), "path", "paths"));
    }
    // Groups in report order (problems are sorted by kind, errors first within a kind).
    std::map<std::pair<std::string, bool>, std::vector<const check::Problem*>> groups;
    std::vector<std::pair<std::string, bool>> order;
    for (const auto& problem : report.problems) {
        std::pair<std::string, bool> key{problem.kind, problem.severity == check::Severity::error};
        if (groups.find(key) == groups.end())
            order.push_back(key);
        groups[key].push_back(&problem);
    }
    size_t errors = 0;
    size_t warnings = 0;
    for (const auto& key : order) {
        const auto& list = groups[key];
        const std::string& kind = key.first;
        bool error = key.second;
        (error ? errors : warnings) += list.size();
        std::string head = fmt::format("{} {}", list.size(), group_title(kind));
        out +=
            fmt::format("\n{} {}\n", error ? style.red("error:") : style.yellow("warning:"), head);
        if (kind == "shared-path") {
            render_shared_paths(out, list, style);
            continue;
        }
        for (const auto* problem : list)
            render_problem(out, *problem, style);
    }
    if (!report.notes.empty()) {
        out += "\nnotes:\n";
        for (const auto& note : report.notes)
            out += fmt::format("  {}\n", note);
    }
    if (report.ok) {
        out += fmt::format(
            "\n{} every object finds every library and version it needs{}\n", style.green("OK:"),
            warnings ? fmt::format(" ({})", plural(warnings, "warning", "warnings")) : "");
    } else {
        out += fmt::format("\n{} {}, {}\n", style.red("FAILED:"), plural(errors, "error", "errors"),
                           plural(warnings, "warning", "warnings"));
    }
    return out;
}

}  // namespace rootlock::cli
