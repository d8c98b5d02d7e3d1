// render_report(); see report_text.hpp.
#include "cli/report_text.hpp"
#include "util/json_text.hpp"

#include <cstring>
#include <map>

#include <fmt/format.h>

namespace rootlock::cli {

namespace {
std::string plural(size_t count, std::string_view one, std::string_view many) {
    return fmt::format("{} {}", count, count == 1 ? one : many);
}

// Each kind's group title, singular and plural: the title follows the group's count.
struct Title {
    std::string_view kind;
    std::string_view one;
    std::string_view many;
};

constexpr Title k_titles[] = {
    {"missing-soname", "missing shared library", "missing shared libraries"},
    {"missing-version", "missing symbol version", "missing symbol versions"},
    {"undefined-symbol", "set of undefined symbols", "sets of undefined symbols"},
    {"wrong-provider", "library where another copy wins over the consumer's own",
     "libraries where another copy wins over the consumer's own"},
    {"missing-record-file", "distribution whose files are gone (metadata-only install)",
     "distributions whose files are gone (metadata-only installs)"},
    {"shared-path", "path claimed by two distributions (uninstalling one breaks the other)",
     "paths claimed by two distributions (uninstalling one breaks the other)"},
    {"cuda-major-mix", "process mixing CUDA majors", "processes mixing CUDA majors"},
    {"cuda-unloaded-major", "CUDA major whose libraries nothing loads",
     "CUDA majors whose libraries nothing loads"},
    {"cuda-major-mismatch", "set of CUDA libraries of another major than declared",
     "sets of CUDA libraries of another major than declared"},
    {"driver-too-old", "host driver too old for the CUDA in the image",
     "host drivers too old for the CUDA in the image"},
    {"driver-library-in-image", "host driver library baked into the image",
     "host driver libraries baked into the image"},
    {"host-without-driver", "host without an NVIDIA driver", "hosts without an NVIDIA driver"},
    {"cuda-compat-refused", "forward-compatibility libcuda the host's driver cannot use",
     "forward-compatibility libcudas the host's driver cannot use"},
    {"gpu-arch-missing", "GPU without a kernel image in some library",
     "GPUs without a kernel image in some library"},
    {"gpu-arch-ptx-only", "GPU reached only through PTX (JIT at first use)",
     "GPUs reached only through PTX (JIT at first use)"},
    {"driver-minor-version-compat",
     "CUDA runtime newer than the driver (minor-version "
     "compatibility only)",
     "CUDA runtimes newer than the driver (minor-version compatibility "
     "only)"},
    {"stubs-on-search-path", "CUDA stub directory on a search path",
     "CUDA stub directories on a search path"},
    {"bad-object", "object the loader would reject", "objects the loader would reject"},
    {"missing-interpreter", "program whose dynamic loader (PT_INTERP) is missing",
     "programs whose dynamic loader (PT_INTERP) is missing"},
    {"broken-environment", "broken Python environment", "broken Python environments"},
    {"unsafe-path", "unsafe path in the tree", "unsafe paths in the tree"},
    {"preload-failed", "torch import whose preload fallback fails",
     "torch imports whose preload fallback fails"},
    {"preload-only", "library found only through torch's Python preload",
     "libraries found only through torch's Python preload"},
    {"missing-dlopen", "library opened at run time (dlopen) that would fail to load",
     "libraries opened at run time (dlopen) that would fail to load"},
};

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

std::string joined(const nlohmann::ordered_json& values, std::string_view separator) {
    std::string out;
    for (const auto& value : values)
        out += (out.empty() ? "" : std::string(separator)) + value.get<std::string>();
    return out;
}

// `copies` holds the winner and the consumer's own copy too: the line above names them, so only
// the others are listed.
void render_wrong_provider(std::string& out, const nlohmann::ordered_json& f, const Style& style) {
    const std::string picked = f["picked"].get<std::string>();
    const std::string packaged = f["packaged"].get<std::string>();
    out += fmt::format("  {}: {} wins ({}) over {}\n", style.bold(f["soname"].get<std::string>()),
                       picked, f["via"].get<std::string>(), packaged);
    list_paths(out, "needed by", f["needed_by"]);
    if (f.contains("reason"))
        out += fmt::format("    ({})\n", f["reason"].get<std::string>());
    nlohmann::ordered_json others = nlohmann::ordered_json::array();
    for (const auto& copy : f["copies"]) {
        if (copy.get<std::string>() != picked && copy.get<std::string>() != packaged)
            others.push_back(copy);
    }
    list_paths(out, "other copies", others, 4);
}

// Two shapes: nothing answers the dlopen, or the file found cannot load its own dependencies.
void render_missing_dlopen(std::string& out, const nlohmann::ordered_json& f, const Style& style) {
    const std::string soname = f["soname"].get<std::string>();
    if (f.contains("provider")) {
        out +=
            fmt::format("  {}: {} would not load: {} not found\n", style.bold(soname),
                        f["provider"].get<std::string>(), joined(f["missing_dependencies"], ", "));
        list_paths(out, "opened by", f["opened_by"]);
        return;
    }
    out += fmt::format("  {}\n", style.bold(soname));
    list_paths(out, "opened by", f["opened_by"]);
    if (f["candidates"].empty())
        out += "    no copy anywhere in the checked paths\n";
    else
        list_paths(out, "a copy is at", f["candidates"]);
}

// From `check`, one problem per other major found; from `lock`, the wheels' own sonames, each
// with the distribution that ships it.
void render_cuda_mismatch(std::string& out, const nlohmann::ordered_json& f, const Style& style) {
    const int expected = f["expected_major"].get<int>();
    if (!f.contains("torch_cuda")) {
        out += fmt::format("  {}\n",
                           style.bold(fmt::format("CUDA {} libraries where CUDA {} is declared",
                                                  f["found_major"].get<int>(), expected)));
        list_paths(out, "", f["libraries"]);
        return;
    }
    const auto& libraries = f["libraries"];
    const std::string torch_cuda = f["torch_cuda"].get<std::string>();
    size_t shown = 0;
    for (const auto& library : libraries) {
        if (shown++ == 8) {
            out += fmt::format("    ... and {} more (--json lists all)\n", libraries.size() - 8);
            break;
        }
        out += fmt::format("  {} (CUDA {}) from {}, but torch.cuda is {}\n",
                           style.bold(library["soname"].get<std::string>()),
                           library["cuda_major"].get<int>(),
                           library["distribution"].get<std::string>(), torch_cuda);
    }
}

void render_driver_too_old(std::string& out, const nlohmann::ordered_json& f, const Style& style) {
    const int major = f["cuda_major"].get<int>();
    if (f.contains("problem")) {
        out += fmt::format("  {}\n", style.bold(f["problem"].get<std::string>()));
        list_paths(out, "runtime", f["libraries"], 4);
        return;
    }
    out += fmt::format(
        "  {}\n",
        style.bold(fmt::format("driver {} is older than {}, the oldest branch that runs CUDA {}",
                               f["driver"].get<std::string>(),
                               f["minimum_driver"].get<std::string>(), major)));
    if (f["libraries"].empty()) {
        out += "    (the declared CUDA: no CUDA library was found)\n";
        return;
    }
    const std::string label = fmt::format("CUDA {} in", major);
    list_paths(out, label.c_str(), f["libraries"], 4);
}

std::string majors_text(const nlohmann::ordered_json& majors) {
    std::string out;
    for (const auto& m : majors)
        out += (out.empty() ? "" : " and ") + std::to_string(m.get<int>());
    return out;
}

std::string dist_list(const nlohmann::ordered_json& dists) {
    std::string out;
    for (const auto& d : dists) {
        out += (out.empty() ? "" : ", ") + d["dist"].get<std::string>() + " " +
               d["version"].get<std::string>();
    }
    return out;
}

// The distribution whose RECORD still lists the missing file, and how to get it back.
void render_owner(std::string& out, const nlohmann::ordered_json& f) {
    if (!f.contains("owner"))
        return;
    const auto& owner = f["owner"];
    out += fmt::format("    listed in the RECORD of {} {}, its file gone (metadata-only)\n",
                       owner["dist"].get<std::string>(), owner["version"].get<std::string>());
    if (f.contains("remedy"))
        out += fmt::format("    fix: {}\n", f["remedy"].get<std::string>());
}

// "CUDA 13 libraries that nothing loads: nvidia-cuda-runtime 13.0.48, ..."
void render_unloaded_major(std::string& out, const nlohmann::ordered_json& f, const Style& style) {
    const std::string dists = dist_list(f["distributions"]);
    out += fmt::format("  {}\n", style.bold(fmt::format("CUDA {} libraries that nothing loads{}{}",
                                                        f["cuda_major"].get<int>(),
                                                        dists.empty() ? "" : ": ", dists)));
    out +=
        fmt::format("    (the processes here load CUDA {}: harmless until something loads these)\n",
                    majors_text(f["loaded_majors"]));
    list_paths(out, "", f["libraries"], 4);
}

// One GPU, the libraries without code for it: what each holds, so the fix (another wheel, a
// build with this architecture) is plain.
void render_gpu_coverage(std::string& out, const nlohmann::ordered_json& f, const Style& style) {
    out += fmt::format("  {} {} ({}): {}\n", style.bold("GPU " + f["gpu"].get<std::string>()),
                       f["sm"].get<std::string>(), f["source"].get<std::string>(),
                       f["problem"].get<std::string>());
    size_t shown = 0;
    for (const auto& object : f["objects"]) {
        if (shown++ == 8) {
            out += fmt::format("      ... and {} more\n", f["objects"].size() - 8);
            break;
        }
        std::string held;
        for (const auto& name : object["cubin"])
            held += (held.empty() ? "" : " ") + name.get<std::string>();
        if (object["ptx"].is_array()) {
            for (const auto& name : object["ptx"])
                held += (held.empty() ? "" : " ") + name.get<std::string>();
        } else if (!object["ptx"].get<std::string>().empty()) {
            held += (held.empty() ? "JIT from " : "; JIT from ") + object["ptx"].get<std::string>();
        }
        out += fmt::format("    {} (holds {})\n", object["path"].get<std::string>(),
                           held.empty() ? "nothing loadable" : held);
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
        if (f.contains("wrong_machine")) {
            for (const auto& copy : f["wrong_machine"])
                out += fmt::format("    {} is {}, not the root's machine: ld.so skips it\n",
                                   copy["path"].get<std::string>(),
                                   copy["machine"].get<std::string>());
        } else if (f["candidates"].empty()) {
            out += "    no copy anywhere in the checked paths\n";
        }
        if (f.contains("host"))
            out += fmt::format("    {}\n", f["host"].get<std::string>());
        if (!f["candidates"].empty())
            list_paths(out, "a copy is at", f["candidates"]);
        render_owner(out, f);
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
        out += fmt::format("  {}: CUDA {} in one process\n",
                           style.bold(f["family"].get<std::string>()), majors_text(f["majors"]));
        list_paths(out, "objects", f["objects"]);
        if (f.contains("failures"))
            list_paths(out, "and it fails:", f["failures"], 4);
        else
            out +=
                "    (each major has its own sonames: they load side by side until a failure "
                "follows)\n";
    } else if (kind == "cuda-unloaded-major") {
        render_unloaded_major(out, f, style);
    } else if (kind == "missing-interpreter") {
        out += fmt::format("  {}\n", style.bold(f["interpreter"].get<std::string>()));
        list_paths(out, "needed by", f["needed_by"]);
    } else if (kind == "bad-object") {
        out += fmt::format("  {}: {}\n", style.bold(f["path"].get<std::string>()),
                           f["problem"].get<std::string>());
        if (f.contains("needed_by"))
            list_paths(out, "needed by", f["needed_by"]);
    } else if (kind == "wrong-provider") {
        render_wrong_provider(out, f, style);
    } else if (kind == "missing-dlopen") {
        render_missing_dlopen(out, f, style);
    } else if (kind == "preload-failed") {
        out += fmt::format("  torch {}: {}\n", f["torch"].get<std::string>(),
                           style.bold(f["problem"].get<std::string>()));
        list_paths(out, "missing", f["missing"]);
        list_paths(out, "needed by", f["needed_by"]);
    } else if (kind == "preload-only") {
        out += fmt::format("  {}: {}\n", style.bold(f["soname"].get<std::string>()),
                           f["path"].get<std::string>());
        list_paths(out, "needed by", f["needed_by"]);
        out +=
            "    (ld.so alone does not find it: loading the needers outside `import torch` "
            "fails)\n";
    } else if (kind == "cuda-major-mismatch") {
        render_cuda_mismatch(out, f, style);
    } else if (kind == "driver-too-old") {
        render_driver_too_old(out, f, style);
    } else if (kind == "driver-library-in-image" || kind == "cuda-compat-refused") {
        out += fmt::format("  {}: {}\n", style.bold(f["path"].get<std::string>()),
                           f["problem"].get<std::string>());
    } else if (kind == "host-without-driver") {
        out += fmt::format("  {}: {}\n", style.bold(f["host_root"].get<std::string>()),
                           f["problem"].get<std::string>());
    } else if (kind == "gpu-arch-missing" || kind == "gpu-arch-ptx-only") {
        render_gpu_coverage(out, f, style);
    } else if (kind == "driver-minor-version-compat") {
        out += fmt::format("  {}\n", style.bold(f["problem"].get<std::string>()));
        list_paths(out, "runtime", f["libraries"], 4);
    } else if (kind == "stubs-on-search-path") {
        out += fmt::format(
            "  {} (from {}): its libcuda.so makes every CUDA call fail with "
            "CUDA_ERROR_STUB_LIBRARY\n",
            style.bold(f["directory"].get<std::string>()), f["source"].get<std::string>());
    } else if (kind == "broken-environment") {
        out += fmt::format("  {}: {}\n", style.bold(f["environment"].get<std::string>()),
                           f["problem"].get<std::string>());
    } else {
        out += fmt::format("  {}\n", util::json_text(f));
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

// Metadata-only findings with one cause are folded: the eleven cu12 dists that each lost only
// the empty nvidia/__init__.py their cu13 twin's uninstall deleted make one line, not eleven.
void render_missing_records(std::string& out, const std::vector<const check::Problem*>& list,
                            const Style& style) {
    std::map<std::string, std::vector<const check::Problem*>> by_paths;
    std::vector<std::string> order;
    for (const auto* problem : list) {
        std::string key = util::json_text(problem->fields["paths"]);
        if (by_paths.find(key) == by_paths.end())
            order.push_back(key);
        by_paths[key].push_back(problem);
    }
    for (const auto& key : order) {
        const auto& group = by_paths[key];
        if (group.size() == 1) {
            render_problem(out, *group.front(), style);
            continue;
        }
        nlohmann::ordered_json dists = nlohmann::ordered_json::array();
        for (const auto* problem : group) {
            dists.push_back(
                {{"dist", problem->fields["dist"]}, {"version", problem->fields["version"]}});
        }
        const auto& paths = group.front()->fields["paths"];
        const std::string what = paths.size() == 1
                                     ? paths.front().get<std::string>()
                                     : fmt::format("the same {} files (e.g. {})", paths.size(),
                                                   paths.front().get<std::string>());
        out += fmt::format("  {} listed in RECORD but missing, for {}: {}\n", style.bold(what),
                           plural(group.size(), "distribution", "distributions"), dist_list(dists));
    }
}
}  // namespace

std::string group_title(std::string_view kind, size_t count) {
    for (const auto& title : k_titles) {
        if (title.kind == kind)
            return plural(count, title.one, title.many);
    }
    return plural(count, "other problem", "other problems");
}

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
        const std::string head = group_title(kind, list.size());
        out +=
            fmt::format("\n{} {}\n", error ? style.red("error:") : style.yellow("warning:"), head);
        if (kind == "shared-path") {
            render_shared_paths(out, list, style);
            continue;
        }
        if (kind == "missing-record-file") {
            render_missing_records(out, list, style);
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
