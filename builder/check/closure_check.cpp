// The closure checker's driver: scan, load every object in its real context, collect problems
// from every load, deduplicate and sort them; see closure_check.hpp.
#include "check/closure_check.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <memory>
#include <unordered_set>

#include "check/cuda_family.hpp"
#include "check/cuda_rules.hpp"
#include "check/dlopen_edges.hpp"
#include "check/object_scan.hpp"
#include "check/provider_check.hpp"
#include "check/python_checks.hpp"
#include "check/symbol_binding.hpp"
#include "check/symbol_report.hpp"
#include "check/torch_preload.hpp"
#include "check/torch_session.hpp"
#include "fs/hiding_tree.hpp"
#include "fs/path_resolve.hpp"
#include "fs/tar_tree.hpp"
#include "loader/versions.hpp"

namespace rootlock::check {

namespace {

struct EdgeHash {
    size_t operator()(const Edge& edge) const {
        std::hash<std::string> h;
        size_t seed = h(edge.requester);
        for (const std::string* part :
             {&edge.name, &edge.provider, &edge.path, &edge.via, &edge.via_object}) {
            seed ^= h(*part) + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2);
        }
        return seed;
    }
};

// Problems keyed so that one finding seen from many load contexts is reported once, with every
// object that has it.
struct Collector {
    std::map<std::string, std::set<std::string>> missing;  // soname -> needed_by
    // Findings also seen where something in the tree really loads the object; the rest come
    // only from libraries checked on their own (plugins whose host program preloads what they
    // need, like the JVM's libjvm.so), which are warnings.
    std::set<std::string> missing_in_context;
    std::set<std::tuple<std::string, std::string, std::string>> versions_in_context;
    std::map<std::tuple<std::string, std::string, std::string>, std::set<std::string>>
        versions;  // (soname, version, provider) -> needed_by
    std::map<std::tuple<std::string, std::string, std::string>, std::set<std::string>>
        unloadable;  // (soname, file, problem) -> needed_by
    std::map<std::pair<std::string, std::set<int>>, std::set<std::string>>
        cuda_mix;                                               // (family, majors) -> objects
    std::map<std::string, std::set<std::string>> interpreters;  // missing PT_INTERP -> programs
    std::unordered_set<std::string> checked;  // objects whose needs were checked (canonical)
    std::unordered_set<Edge, EdgeHash> edges;
    // Symbol binding: one export index per object, shared by every namespace.
    const fs::FileTree* tree = nullptr;
    ExportIndexCache indexes;
    BindingMemo memo;
    SymbolCollector symbols;
    // Wrong provider wins: needs the search context, the scan's copies and the environments.
    loader::SearchContext* context = nullptr;
    const Scan* scan = nullptr;
    const std::vector<std::string>* site_dirs = nullptr;
    ProviderCollector providers;
    // Known runtime dlopen edges (warnings): name -> who opens it; and opened objects whose own
    // needs fail, (name, provider, missing needs) -> who opens it.
    std::map<std::string, std::set<std::string>> dlopen_missing;
    std::map<std::tuple<std::string, std::string, std::vector<std::string>>, std::set<std::string>>
        dlopen_broken;
    // Found only through torch's Python preload: soname -> (file, environments' global deps).
    std::map<std::string, std::pair<std::string, std::set<std::string>>> preload_only;
    CudaMajors cuda_majors;  // CUDA major -> libraries of it in closures something loads
};

// Whether any object of `session` from `first` on is a consumer in the dlopen-edge table: most
// namespaces have none, and following edges copies the session.
bool has_dlopen_consumer(const loader::LoadSession& session, size_t first) {
    const auto edges = known_dlopen_edges();
    for (size_t i = first; i < session.objects().size(); ++i) {
        const auto& object = session.objects()[i];
        if (object.faked || !object.info)
            continue;
        const std::string name =
            object.info->soname.empty() ? fs::basename(object.canonical) : object.info->soname;
        for (const auto& edge : edges) {
            if (glob_match(edge.consumer, name))
                return true;
        }
    }
    return false;
}

std::string canonical_of(const loader::LoadedObject& object) {
    return object.canonical.empty() ? object.name : object.canonical;
}

// Where a session copied from a base starts to differ: its own requests and objects.
struct Since {
    size_t requests = 0;
    size_t objects = 0;
};

Since since(const loader::LoadSession& base) {
    return Since{base.requests().size(), base.objects().size()};
}

void collect_session(const loader::LoadSession& session, Collector& out, const ScopePlan& plan,
                     Since from = {}) {
    const bool standalone = plan.standalone;
    const auto& objects = session.objects();
    out.symbols.add(session,
                    bind_symbols(session, from.objects, plan, *out.tree, out.indexes, out.memo),
                    standalone, out.indexes);
    if (!standalone)
        out.providers.add(session, from.requests, *out.context, *out.scan, *out.site_dirs);
    if (!standalone && has_dlopen_consumer(session, from.objects)) {
        for (auto& finding : follow_dlopen_edges(session, from.objects)) {
            if (finding.optional)
                continue;
            if (finding.missing) {
                out.dlopen_missing[finding.name].insert(finding.consumer);
            } else if (!finding.missing_dependencies.empty()) {
                out.dlopen_broken[{finding.name, finding.provider, finding.missing_dependencies}]
                    .insert(finding.consumer);
            }
        }
    }
    if (!session.missing_interpreter().empty() && session.main_index() >= 0) {
        out.interpreters[session.missing_interpreter()].insert(
            canonical_of(objects[static_cast<size_t>(session.main_index())]));
    }
    const auto& requests = session.requests();
    for (size_t r = from.requests; r < requests.size(); ++r) {
        const auto& request = requests[r];
        const auto& requester = objects[static_cast<size_t>(request.requester)];
        const auto& provider = objects[static_cast<size_t>(request.object)];
        out.checked.insert(canonical_of(requester));
        Edge edge;
        edge.requester = canonical_of(requester);
        edge.name = request.name;
        edge.provider = provider.canonical;
        edge.path =
            provider.faked || provider.via == loader::Via::host_provided ? "" : provider.name;
        edge.via = std::string(loader::via_name(request.via));
        if (provider.via == loader::Via::rpath && provider.via_object >= 0 &&
            request.via != loader::Via::already_loaded) {
            edge.via_object = canonical_of(objects[static_cast<size_t>(provider.via_object)]);
        }
        out.edges.insert(edge);
        if (!provider.faked)
            continue;
        if (!provider.fatal.empty()) {
            out.unloadable[{request.name, provider.fatal_path, provider.fatal}].insert(
                canonical_of(requester));
        } else {
            out.missing[request.name].insert(canonical_of(requester));
            if (!standalone)
                out.missing_in_context.insert(request.name);
        }
    }
    // Symbol versions: each version an object needs must be defined by the object its verneed
    // file binds to in this namespace.
    std::map<std::string, std::set<int>> majors;
    std::map<std::string, std::set<std::string>> family_objects;
    for (const auto& object : objects) {
        if (object.faked)
            continue;
        std::string soname = object.info && !object.info->soname.empty() ? object.info->soname
                                                                         : object.first_request;
        if (auto member = cuda_membership(soname)) {
            majors[member->family].insert(member->cuda_major);
            family_objects[member->family].insert(canonical_of(object));
        }
    }
    for (const auto& gap : loader::version_gaps(session, from.objects)) {
        const auto& object = objects[static_cast<size_t>(gap.object)];
        const auto& provider = objects[static_cast<size_t>(gap.provider)];
        out.versions[{gap.file, gap.version, canonical_of(provider)}].insert(canonical_of(object));
        if (!standalone)
            out.versions_in_context.insert({gap.file, gap.version, canonical_of(provider)});
    }
    bool mixed = false;
    std::set<int> all_majors;
    for (const auto& [family, set] : majors) {
        all_majors.insert(set.begin(), set.end());
        if (set.size() < 2)
            continue;
        mixed = true;
        auto& members = out.cuda_mix[{family, set}];
        members.insert(family_objects[family].begin(), family_objects[family].end());
    }
    // One closure is one CUDA major: cudart 12 beside cublas 13 is a mix too.
    if (!mixed && all_majors.size() > 1) {
        auto& members = out.cuda_mix[{"cuda", all_majors}];
        for (const auto& [family, objects_of_family] : family_objects)
            members.insert(objects_of_family.begin(), objects_of_family.end());
    }
    {
        // Every closure counts, a library checked on its own too: it is in the image.
        for (const auto& object : objects) {
            if (object.faked)
                continue;
            std::string soname = object.info && !object.info->soname.empty() ? object.info->soname
                                                                             : object.first_request;
            if (auto member = cuda_membership(soname))
                out.cuda_majors[member->cuda_major].insert(canonical_of(object));
        }
    }
}

nlohmann::ordered_json sorted_array(const std::set<std::string>& values) {
    return nlohmann::ordered_json(std::vector<std::string>(values.begin(), values.end()));
}

void emit_problems(const Collector& in, const Scan& scan, std::vector<Problem>& problems) {
    for (const auto& [soname, needed_by] : in.missing) {
        bool in_context = in.missing_in_context.count(soname) != 0;
        Problem problem{"missing-soname", in_context ? Severity::error : Severity::warning, {}};
        problem.fields["soname"] = soname;
        problem.fields["needed_by"] = sorted_array(needed_by);
        std::set<std::string> candidates;
        if (auto it = scan.by_soname.find(soname); it != scan.by_soname.end()) {
            candidates.insert(it->second.begin(), it->second.end());
        }
        if (auto it = scan.by_filename.find(soname); it != scan.by_filename.end()) {
            candidates.insert(it->second.begin(), it->second.end());
        }
        problem.fields["candidates"] = sorted_array(candidates);
        if (!in_context)
            problem.fields["context"] = "standalone";
        problems.push_back(std::move(problem));
    }
    for (const auto& [key, needed_by] : in.versions) {
        bool in_context = in.versions_in_context.count(key) != 0;
        Problem problem{"missing-version", in_context ? Severity::error : Severity::warning, {}};
        problem.fields["soname"] = std::get<0>(key);
        problem.fields["version"] = std::get<1>(key);
        problem.fields["needed_by"] = sorted_array(needed_by);
        problem.fields["provider"] = std::get<2>(key);
        if (!in_context)
            problem.fields["context"] = "standalone";
        problems.push_back(std::move(problem));
    }
    for (const auto& [key, needed_by] : in.unloadable) {
        Problem problem{"bad-object", Severity::error, {}};
        problem.fields["path"] = std::get<1>(key);
        problem.fields["problem"] = std::get<2>(key);
        problem.fields["soname"] = std::get<0>(key);
        problem.fields["needed_by"] = sorted_array(needed_by);
        problems.push_back(std::move(problem));
    }
    for (const auto& [key, objects] : in.cuda_mix) {
        Problem problem{"cuda-major-mix", Severity::error, {}};
        problem.fields["family"] = key.first;
        problem.fields["majors"] = std::vector<int>(key.second.begin(), key.second.end());
        problem.fields["objects"] = sorted_array(objects);
        problems.push_back(std::move(problem));
    }
    for (const auto& [interpreter, programs] : in.interpreters) {
        Problem problem{"missing-interpreter", Severity::error, {}};
        problem.fields["interpreter"] = interpreter;
        problem.fields["needed_by"] = sorted_array(programs);
        problems.push_back(std::move(problem));
    }
    for (const auto& [name, consumers] : in.dlopen_missing) {
        Problem problem{"missing-dlopen", Severity::warning, {}};
        problem.fields["soname"] = name;
        problem.fields["opened_by"] = sorted_array(consumers);
        problem.fields["candidates"] = copies_of(scan, name);
        problems.push_back(std::move(problem));
    }
    for (const auto& [key, consumers] : in.dlopen_broken) {
        Problem problem{"missing-dlopen", Severity::warning, {}};
        problem.fields["soname"] = std::get<0>(key);
        problem.fields["opened_by"] = sorted_array(consumers);
        problem.fields["provider"] = std::get<1>(key);
        problem.fields["missing_dependencies"] = std::get<2>(key);
        problems.push_back(std::move(problem));
    }
    for (const auto& [soname, found] : in.preload_only) {
        Problem problem{"preload-only", Severity::warning, {}};
        problem.fields["soname"] = soname;
        problem.fields["path"] = found.first;
        problem.fields["needed_by"] = sorted_array(found.second);
        problems.push_back(std::move(problem));
    }
    for (const auto& [path, text] : scan.bad_objects) {
        Problem problem{"bad-object", Severity::error, {}};
        problem.fields["path"] = path;
        problem.fields["problem"] = text;
        problems.push_back(std::move(problem));
    }
}

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

    Collector collector;
    collector.tree = &tree;
    collector.context = &context;
    collector.scan = &scan;
    collector.site_dirs = &environments.site_dirs;
    // Programs: exec'd, so $ORIGIN is their resolved directory.
    for (const auto& object : scan.objects) {
        if (object.role != Role::program)
            continue;
        loader::LoadSession session(context);
        if (session.load_main(object.path, true))
            collect_session(session, collector, ScopePlan{{session.main_index()}});
    }
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
            loader::LoadSession session(context);
            if (session.load_main(object.path, false))
                collect_session(session, collector,
                                ScopePlan{{session.main_index()}, -1, false, true});
            continue;
        }
        loader::LoadSession session(*base);
        plan.local_root = session.dlopen(object.path);
        plan.bind_now = true;  // CPython's default dlopen flags are RTLD_NOW
        collect_session(session, collector, plan, since(*base));
    }
    // Libraries nobody in the tree loads: on their own, dlopened by the environment's
    // interpreter when they sit in one, else as `ld.so --list` would load them.
    for (const auto& object : scan.objects) {
        if (object.role != Role::library || collector.checked.count(object.path) != 0)
            continue;
        if (object.info->needed.empty()) {
            collector.checked.insert(object.path);
            continue;
        }
        if (object.environment >= 0 && bases[static_cast<size_t>(object.environment)]) {
            const loader::LoadSession& base = *bases[static_cast<size_t>(object.environment)];
            loader::LoadSession session(base);
            const int opened = session.dlopen(object.path);
            collect_session(session, collector, ScopePlan{{base.main_index()}, opened, true, true},
                            since(base));
        } else {
            loader::LoadSession session(context);
            if (session.load_main(object.path, false))
                collect_session(session, collector,
                                ScopePlan{{session.main_index()}, -1, false, true});
        }
    }

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
    for (auto& problem : driver_library_problems(tree, object_paths, target.driver))
        report.problems.push_back(std::move(problem));
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

}  // namespace rootlock::check
