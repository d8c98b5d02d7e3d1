// Gathering what each load session shows and turning it into problems; see closure_collect.hpp.
#include "check/closure_collect.hpp"

#include <fmt/format.h>
#include <algorithm>

#include "check/cuda_family.hpp"
#include "check/dlopen_edges.hpp"
#include "check/torch_preload.hpp"
#include "fs/path_resolve.hpp"
#include "loader/versions.hpp"

namespace rootlock::check::detail {

namespace {

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

}  // namespace

Since since(const loader::LoadSession& base) {
    return Since{base.requests().size(), base.objects().size()};
}

namespace {

// An object whose failures concern CUDA: a CUDA-family library, or one that needs one directly
// (an extension linked against cuBLAS).
bool cuda_related(const loader::LoadedObject& object) {
    if (object.faked || !object.info)
        return false;
    if (cuda_membership(loader::soname_of(object)))
        return true;
    return std::any_of(object.info->needed.begin(), object.info->needed.end(),
                       [](const std::string& name) { return cuda_membership(name).has_value(); });
}

// The failures of a process that mixes CUDA majors which follow from its CUDA libraries, as
// lines: the requests and objects from `from` on (what this session added), and two copies of
// one CUDA soname anywhere in the process.
std::set<std::string> cuda_failures(const loader::LoadSession& session, Since from,
                                    const BindResult& bound,
                                    const std::vector<loader::VersionGap>& gaps) {
    std::set<std::string> out;
    const auto& objects = session.objects();
    const auto& requests = session.requests();
    for (size_t r = from.requests; r < requests.size(); ++r) {
        const auto& request = requests[r];
        const auto& requester = objects[static_cast<size_t>(request.requester)];
        const auto& provider = objects[static_cast<size_t>(request.object)];
        if (!provider.faked || (!cuda_membership(request.name) && !cuda_related(requester)))
            continue;
        out.insert(
            provider.fatal.empty()
                ? fmt::format("{} not found (needed by {})", request.name, canonical_of(requester))
                : fmt::format("{}: {} (needed by {})", provider.fatal_path, provider.fatal,
                              canonical_of(requester)));
    }
    for (const auto& gap : gaps) {
        const auto& object = objects[static_cast<size_t>(gap.object)];
        if (!cuda_membership(gap.file) && !cuda_related(object))
            continue;
        out.insert(fmt::format("version {} of {} missing from {} (needed by {})", gap.version,
                               gap.file, canonical_of(objects[static_cast<size_t>(gap.provider)]),
                               canonical_of(object)));
    }
    for (const auto& reference : bound.unbound) {
        const auto& object = objects[static_cast<size_t>(reference.object)];
        if (!cuda_membership(reference.file) && !cuda_related(object))
            continue;
        out.insert(fmt::format("undefined symbol {}{} (needed by {})", demangle(reference.name),
                               reference.version.empty() ? "" : "@" + reference.version,
                               canonical_of(object)));
    }
    std::map<std::string, std::set<std::string>> copies;  // CUDA soname -> files loaded
    for (const auto& object : objects) {
        if (!object.faked && cuda_membership(loader::soname_of(object)))
            copies[loader::soname_of(object)].insert(canonical_of(object));
    }
    for (const auto& [soname, files] : copies) {
        if (files.size() < 2)
            continue;
        std::string list;
        for (const auto& file : files)
            list += (list.empty() ? "" : " and ") + file;
        out.insert(fmt::format("two copies of {} loaded: {}", soname, list));
    }
    return out;
}

}  // namespace

namespace {

// The resolution `request` made, for `why`.
void record_edge(Collector& out, const loader::Request& request,
                 const std::vector<loader::LoadedObject>& objects) {
    const auto& requester = objects[static_cast<size_t>(request.requester)];
    const auto& provider = objects[static_cast<size_t>(request.object)];
    Edge edge;
    edge.requester = canonical_of(requester);
    edge.name = request.name;
    edge.provider = provider.canonical;
    edge.path = provider.faked || provider.via == loader::Via::host_provided ? "" : provider.name;
    edge.via = std::string(loader::via_name(request.via));
    if (provider.via == loader::Via::rpath && provider.via_object >= 0 &&
        request.via != loader::Via::already_loaded) {
        edge.via_object = canonical_of(objects[static_cast<size_t>(provider.via_object)]);
    }
    out.edges.insert(std::move(edge));
}

}  // namespace

void add_requesters(const loader::LoadSession& session, Since from,
                    std::unordered_set<std::string>& checked) {
    const auto& objects = session.objects();
    const auto& requests = session.requests();
    for (size_t r = from.requests; r < requests.size(); ++r)
        checked.insert(canonical_of(objects[static_cast<size_t>(requests[r].requester)]));
}

BindResult bind_session(const loader::LoadSession& session, Collector& out, const ScopePlan& plan,
                        Since from) {
    return bind_symbols(session, from.objects, plan, *out.tree, out.indexes, out.memo);
}

void collect_session(const loader::LoadSession& session, Collector& out, const ScopePlan& plan,
                     Since from) {
    merge_session(session, out, plan, from, bind_session(session, out, plan, from));
}

void merge_session(const loader::LoadSession& session, Collector& out, const ScopePlan& plan,
                   Since from, BindResult bound) {
    const bool standalone = plan.standalone;
    const auto& objects = session.objects();
    count_references(bound);
    out.symbols.add(session, bound, standalone, out.indexes);
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
    add_requesters(session, from, out.checked);
    const auto& requests = session.requests();
    for (size_t r = from.requests; r < requests.size(); ++r) {
        const auto& request = requests[r];
        const auto& requester = objects[static_cast<size_t>(request.requester)];
        const auto& provider = objects[static_cast<size_t>(request.object)];
        if (out.record_edges)
            record_edge(out, request, objects);
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
    const auto gaps = loader::version_gaps(session, from.objects);
    for (const auto& gap : gaps) {
        const auto& object = objects[static_cast<size_t>(gap.object)];
        const auto& provider = objects[static_cast<size_t>(gap.provider)];
        out.versions[{gap.file, gap.version, canonical_of(provider)}].insert(canonical_of(object));
        if (!standalone)
            out.versions_in_context.insert({gap.file, gap.version, canonical_of(provider)});
    }
    std::map<std::string, std::set<int>> majors;
    std::map<std::string, std::set<std::string>> family_objects;
    for (const auto& object : objects) {
        if (object.faked)
            continue;
        const std::string& soname = loader::soname_of(object);
        if (auto member = cuda_membership(soname)) {
            majors[member->family].insert(member->cuda_major);
            family_objects[member->family].insert(canonical_of(object));
            // Every closure counts for the declared major, a library checked on its own too:
            // it is in the image.
            out.cuda_majors[member->cuda_major].insert(canonical_of(object));
            if (!standalone)
                out.cuda_loaded[canonical_of(object)] = member->cuda_major;
        }
    }
    // A library nothing loads is no process: what its own session mixes happens nowhere.
    if (standalone)
        return;
    std::vector<std::pair<std::string, std::set<int>>> mixes;
    std::set<int> all_majors;
    for (const auto& [family, set] : majors) {
        all_majors.insert(set.begin(), set.end());
        if (set.size() < 2)
            continue;
        mixes.emplace_back(family, set);
        auto& members = out.cuda_mix[mixes.back()];
        members.insert(family_objects[family].begin(), family_objects[family].end());
    }
    // One closure is one CUDA major: cudart 12 beside cublas 13 is a mix too.
    if (mixes.empty() && all_majors.size() > 1) {
        mixes.emplace_back("cuda", all_majors);
        auto& members = out.cuda_mix[mixes.back()];
        for (const auto& [family, objects_of_family] : family_objects)
            members.insert(objects_of_family.begin(), objects_of_family.end());
    }
    if (mixes.empty())
        return;
    const auto failures = cuda_failures(session, from, bound, gaps);
    for (const auto& key : mixes)
        out.cuda_mix_failures[key].insert(failures.begin(), failures.end());
}

namespace {
nlohmann::ordered_json sorted_array(const std::set<std::string>& values) {
    return nlohmann::ordered_json(std::vector<std::string>(values.begin(), values.end()));
}

}  // namespace

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
        if (auto it = scan.foreign_by_name.find(soname); it != scan.foreign_by_name.end()) {
            std::set<std::pair<std::string, std::string>> skipped(it->second.begin(),
                                                                  it->second.end());
            nlohmann::ordered_json list = nlohmann::ordered_json::array();
            for (const auto& [path, machine] : skipped)
                list.push_back({{"path", path}, {"machine", machine}});
            problem.fields["wrong_machine"] = std::move(list);
        }
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
    // Majors mixed in one process load and run unless a failure follows (cuda-wheels.md
    // section 3: each major's libraries carry their own sonames): a warning until then.
    for (const auto& [key, objects] : in.cuda_mix) {
        const auto failures = in.cuda_mix_failures.find(key);
        const bool failed = failures != in.cuda_mix_failures.end() && !failures->second.empty();
        Problem problem{"cuda-major-mix", failed ? Severity::error : Severity::warning, {}};
        problem.fields["family"] = key.first;
        problem.fields["majors"] = std::vector<int>(key.second.begin(), key.second.end());
        problem.fields["objects"] = sorted_array(objects);
        if (failed)
            problem.fields["failures"] = sorted_array(failures->second);
        problems.push_back(std::move(problem));
    }
    // CUDA libraries of a major no process loads, beside processes that load another: left by
    // other packages, harmless until something loads them. One warning per major.
    std::set<int> loaded_majors;
    for (const auto& [path, major] : in.cuda_loaded)
        loaded_majors.insert(major);
    std::map<int, std::set<std::string>> unloaded;
    for (const auto& object : scan.objects) {
        if (!object.info || object.role != Role::library || in.cuda_loaded.count(object.path) != 0)
            continue;
        const std::string name =
            object.info->soname.empty() ? fs::basename(object.path) : object.info->soname;
        auto member = cuda_membership(name);
        if (member && !loaded_majors.empty() && loaded_majors.count(member->cuda_major) == 0)
            unloaded[member->cuda_major].insert(object.path);
    }
    for (const auto& [major, libraries] : unloaded) {
        Problem problem{"cuda-unloaded-major", Severity::warning, {}};
        problem.fields["cuda_major"] = major;
        problem.fields["loaded_majors"] =
            std::vector<int>(loaded_majors.begin(), loaded_majors.end());
        problem.fields["libraries"] = sorted_array(libraries);
        problem.fields["distributions"] = nlohmann::ordered_json::array();  // python_checks
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
    for (const auto& [global_deps, failed] : in.preload_failed) {
        Problem problem{"preload-failed", Severity::error, {}};
        problem.fields["torch"] = failed.first;
        problem.fields["missing"] = failed.second;
        problem.fields["needed_by"] = nlohmann::ordered_json::array({global_deps});
        problem.fields["problem"] =
            fmt::format("import torch raises ValueError: {} not found in the system path",
                        failed.second.front());
        problems.push_back(std::move(problem));
    }
    for (const auto& [path, text] : scan.bad_objects) {
        Problem problem{"bad-object", Severity::error, {}};
        problem.fields["path"] = path;
        problem.fields["problem"] = text;
        problems.push_back(std::move(problem));
    }
}

}  // namespace rootlock::check::detail
