// What the closure checker gathers from each load session before it becomes problems: edges,
// missing sonames and versions, CUDA majors, symbols, providers, dlopen edges and the preload,
// each merged across sessions; and the problems made from them. Internal to check/.
#pragma once

#include <map>
#include <set>
#include <string>
#include <tuple>
#include <unordered_set>
#include <utility>
#include <vector>

#include "check/closure_check.hpp"
#include "check/cuda_rules.hpp"
#include "check/object_scan.hpp"
#include "check/provider_check.hpp"
#include "check/symbol_binding.hpp"
#include "check/symbol_report.hpp"

namespace rootlock::check::detail {

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
    // CUDA majors mixed among the libraries one process really loads: (family, majors) ->
    // objects, and the failures in such a process that involve its CUDA libraries (a missing
    // soname, version or symbol, two copies of one soname), which make the mix an error.
    std::map<std::pair<std::string, std::set<int>>, std::set<std::string>> cuda_mix;
    std::map<std::pair<std::string, std::set<int>>, std::set<std::string>> cuda_mix_failures;
    // CUDA libraries some process of the tree loads (canonical path -> CUDA major). The others
    // are loaded only by sessions of libraries nothing loads: they never make a process mix.
    std::map<std::string, int> cuda_loaded;
    std::map<std::string, std::set<std::string>> interpreters;  // missing PT_INTERP -> programs
    std::unordered_set<std::string> checked;  // objects whose needs were checked (canonical)
    bool record_edges = false;                // fill `edges` (CheckOptions::record_edges)
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
    // torch's preload fails on a required row: global deps -> (torch version, missing globs).
    std::map<std::string, std::pair<std::string, std::vector<std::string>>> preload_failed;
    CudaMajors cuda_majors;  // CUDA major -> libraries of it in closures something loads
};

using loader::canonical_of;

// Where a session copied from a base starts to differ: its own requests and objects.
struct Since {
    size_t requests = 0;
    size_t objects = 0;
};

Since since(const loader::LoadSession& base);

// Everything one session shows: its edges, what it misses, its CUDA majors, its symbols bound
// in `plan`'s scopes, its providers and its known dlopen edges. merge_session(bind_session()).
void collect_session(const loader::LoadSession& session, Collector& out, const ScopePlan& plan,
                     Since from = {});

// collect_session() in two halves, so that binding (the costly half) can run on another thread
// while the next session loads. bind_session touches only out.tree, out.indexes and out.memo,
// one call at a time; merge_session does the rest, sessions merged in the order they are to
// count (the order collect_session would have taken them in).
BindResult bind_session(const loader::LoadSession& session, Collector& out, const ScopePlan& plan,
                        Since from);
void merge_session(const loader::LoadSession& session, Collector& out, const ScopePlan& plan,
                   Since from, BindResult bound);

// The objects whose needs `session` checked (each requester of its requests from `from`
// on), as merging it adds them to Collector::checked: known once the session is loaded.
void add_requesters(const loader::LoadSession& session, Since from,
                    std::unordered_set<std::string>& checked);

// The problems of the merged findings (symbols and providers emit their own).
void emit_problems(const Collector& in, const Scan& scan, std::vector<Problem>& problems);

}  // namespace rootlock::check::detail
