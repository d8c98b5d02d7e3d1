// The closure checker's driver: scan, load every object in its real context, collect problems
// from every load, deduplicate and sort them; see closure_check.hpp.
#include "check/closure_check.hpp"

#include <fmt/format.h>
#include <malloc.h>
#include <algorithm>
#include <memory>
#include <unordered_set>

#include "check/closure_collect.hpp"
#include "check/cuda_rules.hpp"
#include "check/driver_gate.hpp"
#include "check/object_scan.hpp"
#include "check/python_checks.hpp"
#include "check/session_pipeline.hpp"
#include "check/torch_session.hpp"
#include "fs/hiding_tree.hpp"
#include "fs/path_resolve.hpp"
#include "fs/tar_tree.hpp"

namespace rootlock::check {

using detail::add_requesters;
using detail::canonical_of;
using detail::collect_session;
using detail::Collector;
using detail::emit_problems;
using detail::SessionPipeline;
using detail::Since;
using detail::since;

namespace {

bool in_torch(const std::string& path, const std::string& site) {
    std::string prefix = site + "/torch/";
    return path.compare(0, prefix.size(), prefix) == 0;
}

util::Result<CheckReport> check_tree(const fs::FileTree& tree, const CheckOptions& options,
                                     const EnvironmentSet& environments) {
    auto model = loader::open_root_model(tree, options.model);
    if (!model)
        return model.error();
    loader::SearchContext& context = *model->context;
    ROOTLOCK_TRY(target, parse_cuda_target(options.cuda, options.driver));
    Scan scan = scan_objects(tree, options.paths, context.target(), environments.site_dirs);
    // The scan freed what it held for every file it probed (43,000 paths and probes on a torch
    // root, about 5 MB), much of it in the probing thread's malloc arena, which the main
    // thread's binding does not allocate from: hand those pages back rather than keep them
    // through to the peak (2 ms).
    ::malloc_trim(0);

    Collector collector;
    collector.tree = &tree;
    collector.context = &context;
    collector.scan = &scan;
    collector.site_dirs = &environments.site_dirs;
    collector.record_edges = options.record_edges;
    // Programs: exec'd, so $ORIGIN is their resolved directory. Each is bound on the
    // pipeline's worker while the next one loads.
    SessionPipeline pipeline(collector);
    for (const auto& object : scan.objects) {
        if (object.role != Role::program)
            continue;
        auto session = std::make_unique<loader::LoadSession>(context);
        if (!session->load_main(object.path, true))
            continue;
        ScopePlan plan{{session->main_index()}};
        pipeline.submit(std::move(session), std::move(plan));
    }
    // The environments' base sessions are collected in turn: later sessions copy them.
    pipeline.drain();
    // Python: one namespace per environment, the interpreter loaded first; torch's own
    // extensions see libtorch_global_deps.so already loaded RTLD_GLOBAL, as `import torch` does.
    std::vector<std::unique_ptr<loader::LoadSession>> bases(environments.environments.size());
    std::vector<std::unique_ptr<loader::LoadSession>> torch_bases(environments.environments.size());
    std::vector<std::vector<int>> torch_roots(environments.environments.size());
    std::vector<std::string> notes = model->notes;
    for (size_t i = 0; i < environments.environments.size(); ++i) {
        const auto& environment = environments.environments[i];
        if (!environment.interpreter) {
            notes.push_back(
                fmt::format("no interpreter found for the Python environment at {}: "
                            "its extension modules are checked on their own",
                            environment.prefix));
            continue;
        }
        auto base = std::make_unique<loader::LoadSession>(context);
        if (!base->load_main(*environment.interpreter, true))
            continue;
        collect_session(*base, collector, ScopePlan{{base->main_index()}});
        std::string global_deps = environments.site_dirs[i] + "/torch/lib/libtorch_global_deps.so";
        if (tree.lstat(global_deps)) {
            TorchSession torch =
                open_torch_session(*base, tree, global_deps, {environments.site_dirs[i]});
            // ctypes.CDLL(..., RTLD_GLOBAL): bound now, then part of the global scope.
            collect_session(*torch.session, collector, ScopePlan{torch.global_roots, -1, true},
                            since(*base));
            if (!torch.preload_missing.empty())
                collector.preload_failed[global_deps] = {torch.torch_version,
                                                         torch.preload_missing};
            for (const auto& [soname, path] : torch.preload_only) {
                auto& entry = collector.preload_only[soname];
                entry.first = path;
                entry.second.insert(global_deps);
            }
            torch_roots[i] = torch.global_roots;
            torch_bases[i] = std::move(torch.session);
        }
        bases[i] = std::move(base);
    }
    for (const auto& object : scan.objects) {
        if (object.role != Role::extension)
            continue;
        size_t env = static_cast<size_t>(object.environment);
        const loader::LoadSession* base = bases[env].get();
        ScopePlan plan;
        if (base != nullptr)
            plan.global_roots = {base->main_index()};
        if (torch_bases[env] && in_torch(object.path, environments.site_dirs[env])) {
            base = torch_bases[env].get();
            plan.global_roots = torch_roots[env];
        }
        if (base == nullptr) {
            // No interpreter to load it: its Python symbols cannot be bound here.
            auto session = std::make_unique<loader::LoadSession>(context);
            if (!session->load_main(object.path, false))
                continue;
            ScopePlan alone{{session->main_index()}, -1, false, true};
            pipeline.submit(std::move(session), std::move(alone));
            continue;
        }
        auto session = std::make_unique<loader::LoadSession>(*base);
        plan.local_root = session->dlopen(object.path);
        plan.bind_now = true;  // CPython's default dlopen flags are RTLD_NOW
        pipeline.submit(std::move(session), std::move(plan), since(*base));
    }
    // Libraries nobody in the tree loads: on their own, dlopened by the environment's
    // interpreter when they sit in one, else as `ld.so --list` would load them. One that an
    // earlier session checked is skipped: `checked` holds what the merged sessions checked,
    // `loaded` adds what the sessions still in the pipeline will (known once they are loaded),
    // so the sessions are the ones a loop collecting each in turn would make.
    pipeline.drain();
    std::unordered_set<std::string> loaded;
    for (const auto& object : scan.objects) {
        if (object.role != Role::library || collector.checked.count(object.path) != 0 ||
            loaded.count(object.path) != 0)
            continue;
        if (object.info->needed.empty()) {
            collector.checked.insert(object.path);
            continue;
        }
        std::unique_ptr<loader::LoadSession> session;
        ScopePlan plan;
        Since from;
        if (object.environment >= 0 && bases[static_cast<size_t>(object.environment)]) {
            // In an environment with torch, whatever loads it runs after `import torch` (torch
            // opens libtorch_cuda_linalg.so, and with it cuSOLVER, lazily).
            const size_t env = static_cast<size_t>(object.environment);
            const bool after_torch = torch_bases[env] != nullptr;
            const loader::LoadSession& base = after_torch ? *torch_bases[env] : *bases[env];
            session = std::make_unique<loader::LoadSession>(base);
            plan = ScopePlan{after_torch ? torch_roots[env] : std::vector<int>{base.main_index()},
                             -1, true, true};
            plan.local_root = session->dlopen(object.path);
            from = since(base);
        } else {
            session = std::make_unique<loader::LoadSession>(context);
            if (!session->load_main(object.path, false))
                continue;
            plan = ScopePlan{{session->main_index()}, -1, false, true};
        }
        add_requesters(*session, from, loaded);
        pipeline.submit(std::move(session), std::move(plan), from);
    }
    pipeline.drain();

    CheckReport report;
    report.objects = scan.objects.size();
    std::vector<std::string> object_paths;
    std::vector<ScannedElf> scanned;
    for (const auto& object : scan.objects) {
        object_paths.push_back(object.path);
        scanned.emplace_back(object.path, object.info.get());
    }
    for (auto& problem : cuda_target_problems(collector.cuda_majors, target))
        report.problems.push_back(std::move(problem));
    if (target.driver) {
        const auto runtimes = find_cuda_runtimes(tree, collector.cuda_majors);
        for (auto& problem : driver_gate_problems(runtimes, *target.driver, report.problems))
            report.problems.push_back(std::move(problem));
    }
    for (auto& problem : driver_library_problems(tree, object_paths, target.driver))
        report.problems.push_back(std::move(problem));
    if (options.device_code || !options.gpus.empty()) {
        DeviceCodeScan device_code =
            scan_device_code(tree, object_paths, !options.gpus.empty(), options.known_device_code);
        for (auto& problem : coverage_problems(device_code, options.gpus))
            report.problems.push_back(std::move(problem));
        notes.insert(notes.end(), device_code.notes.begin(), device_code.notes.end());
        report.device_code = std::move(device_code.objects);
    }
    ROOTLOCK_TRY(stubs, stubs_path_problems(tree, options.model.ld_library_path, scanned));
    for (auto& problem : stubs)
        report.problems.push_back(std::move(problem));
    emit_problems(collector, scan, report.problems);
    collector.symbols.emit(scan, report.problems);
    collector.providers.emit(
        scan,
        [&](const std::string& consumer, const std::string& soname, const std::string& picked,
            const std::string& packaged) {
            for (const auto& [key, needed_by] : collector.versions) {
                if (std::get<0>(key) == soname && std::get<2>(key) == picked &&
                    needed_by.count(consumer) != 0) {
                    return "version " + std::get<1>(key);
                }
            }
            // A symbol the consumer misses that its own copy defines.
            fs::ElfProbe own = tree.probe_elf(packaged, true);
            if (own.info && own.info->symbols_read) {
                const ExportIndex& index = collector.indexes.get(own.info);
                for (const auto& name : collector.symbols.missed_by(consumer)) {
                    if (index.defines(name, ""))
                        return name;
                }
            }
            return std::string();
        },
        report.problems);
    report.symbols = collector.symbols.references();
    add_environment_problems(tree, environments, report.problems);
    add_owners(tree, environments, report.problems);
    sort_problems(report.problems);
    report.ok = std::none_of(report.problems.begin(), report.problems.end(),
                             [](const Problem& p) { return p.severity == Severity::error; });
    for (const auto& note : context.notes())
        notes.push_back(note);
    if (scan.foreign > 0) {
        notes.push_back(fmt::format("{} objects of another ELF class or machine were not checked",
                                    scan.foreign));
    }
    std::sort(notes.begin(), notes.end());
    notes.erase(std::unique(notes.begin(), notes.end()), notes.end());
    report.notes = std::move(notes);
    report.edges.insert(collector.edges.begin(), collector.edges.end());
    report.providers = scan.by_soname;
    return report;
}

}  // namespace

util::Result<CheckReport> run_check(const fs::FileTree& tree, const CheckOptions& options) {
    auto environments = load_environments(tree, options.paths);
    if (!environments)
        return environments.error();
    if (options.without.empty())
        return check_tree(tree, options, *environments);

    auto hidden = uninstall_set(tree, *environments, options.without);
    if (!hidden)
        return hidden.error();
    fs::HidingTree view(tree, *hidden);
    auto remaining = load_environments(view, options.paths);
    if (!remaining)
        return remaining.error();
    auto report = check_tree(view, options, *remaining);
    if (report)
        report->without_hidden.assign(hidden->begin(), hidden->end());
    return report;
}

std::vector<Problem> tree_problems(const fs::FileTree& tree) {
    std::vector<Problem> out;
    const auto* tar = dynamic_cast<const fs::TarTree*>(&tree);
    if (tar == nullptr)
        return out;
    for (const auto& issue : tar->issues()) {
        const std::string& path = issue.path;
        Problem problem{"unsafe-path", Severity::error, {}};
        // Paths inside the root are absolute; an entry that never made it in keeps its name.
        const bool climbs =
            path == ".." || path.rfind("../", 0) == 0 || path.find("/../") != std::string::npos;
        problem.fields["path"] = path.empty() || path[0] == '/' || climbs ? path : "/" + path;
        problem.fields["problem"] = issue.problem;
        out.push_back(std::move(problem));
    }
    return out;
}

nlohmann::ordered_json summary_json(const CheckReport& report) {
    nlohmann::ordered_json out;
    out["ok"] = report.ok;
    out["objects"] = report.objects;
    out["problems"] = nlohmann::ordered_json::array();
    for (const auto& problem : report.problems)
        out["problems"].push_back(to_json(problem));
    out["notes"] = report.notes;
    return out;
}

}  // namespace rootlock::check
