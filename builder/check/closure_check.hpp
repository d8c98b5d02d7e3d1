// The closure checker: every ELF object under the given paths loaded the way it really is
// (programs as programs, Python extensions from the root's interpreter, libraries in the context
// of whoever loads them), every problem collected at once: missing sonames and symbol versions,
// unloadable candidates, CUDA major mixes, and broken Python environments.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "check/gpu_coverage.hpp"
#include "check/problem.hpp"
#include "fs/file_tree.hpp"
#include "loader/root_model.hpp"
#include "loader/session.hpp"
#include "util/result.hpp"

namespace rootlock::check {

struct CheckOptions {
    std::vector<std::string> paths{"/"};  // inside the root
    std::vector<std::string> without;     // distributions to uninstall first, as pip would
    loader::ModelOptions model;
    // The target's CUDA toolkit ("13.0"; empty: not declared) and the host's driver
    // ("580.65.06" or a branch such as "580"; empty: not declared), from the recipe or the CLI.
    std::string cuda;
    std::string driver;
    // Keep every resolution made in CheckReport::edges (what `why` reads). Off by default: a
    // torch root makes 30,000 of them, each six strings, for 5,500 distinct edges.
    bool record_edges = false;
    // GPUs the image must run on (the host's, --gpu, the recipe's): each object's device code
    // is judged for each (gpu_coverage.hpp).
    std::vector<GpuTarget> gpus;
    // Read every object's device code into CheckReport::device_code even without a GPU to
    // judge it for (`check --json` shows each library's architectures).
    bool device_code = false;
    // Device code read before, by canonical path, for objects whose bytes the tree does not hold
    // (a wheel member's, read as the wheel was scanned): `lock` judges coverage with it.
    std::map<std::string, gpu::FatbinSummary> known_device_code;
};

// One resolved DT_NEEDED edge, as some load context resolved it.
struct Edge {
    std::string requester;   // canonical path
    std::string name;        // the DT_NEEDED string
    std::string provider;    // canonical path; empty when not found or host-provided
    std::string path;        // the path as ld.so names it
    std::string via;         // via_name()
    std::string via_object;  // for rpath: whose DT_RPATH

    auto operator<=>(const Edge&) const = default;
};

struct CheckReport {
    bool ok = true;
    size_t objects = 0;  // ELF objects checked
    size_t symbols = 0;  // undefined symbol references bound (each object once per scope)
    std::vector<Problem> problems;   // sorted
    std::vector<std::string> notes;  // sorted, unique
    std::set<Edge> edges;            // every resolution made, with CheckOptions::record_edges
    std::map<std::string, std::vector<std::string>> providers;  // soname -> files providing it
    std::vector<std::string> without_hidden;                    // paths hidden by --without, sorted
    std::map<std::string, DeviceCode> device_code;  // objects with device code, when read
};

util::Result<CheckReport> run_check(const fs::FileTree& tree, const CheckOptions& options);

// {ok, objects, problems, notes}: the report as `build` writes it beside an image
// (IMAGE.check.json) and prints it under --json.
nlohmann::ordered_json summary_json(const CheckReport& report);

// The problems of the tree itself: unsafe tarball entries ("../", absolute names, escaping
// links) as `unsafe-path` errors; none for trees that cannot have them.
std::vector<Problem> tree_problems(const fs::FileTree& tree);

}  // namespace rootlock::check
