// Python environment checks for the closure checker; see python_checks.hpp.
#include "check/python_checks.hpp"

#include <algorithm>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "fs/path_resolve.hpp"
#include "python/integrity.hpp"
#include "python/metadata.hpp"

namespace rootlock::check {

util::Result<EnvironmentSet> load_environments(const fs::FileTree& tree,
                                               const std::vector<std::string>& paths) {
    auto found = python::find_environments(tree, paths);
    if (!found)
        return found.error();
    EnvironmentSet set;
    for (auto& environment : found.value()) {
        set.site_dirs.push_back(environment.site_packages);
        set.environments.push_back(std::move(environment));
    }
    return set;
}

void add_environment_problems(const fs::FileTree& tree, const EnvironmentSet& environments,
                              std::vector<Problem>& problems) {
    for (const auto& environment : environments.environments) {
        for (const auto& missing : python::find_missing_files(tree, environment)) {
            // Losing only empty files (the nvidia/__init__.py every cu12 wheel ships and any
            // of their uninstalls deletes) leaves a working namespace package: a warning.
            std::map<std::string, std::optional<uint64_t>> sizes;
            if (const auto* dist = python::find_distribution(environment, missing.dist)) {
                for (size_t i = 0; i < dist->installed_paths.size(); ++i) {
                    sizes[dist->installed_paths[i]] = dist->record[i].size;
                }
            }
            bool only_empty = std::all_of(missing.paths.begin(), missing.paths.end(),
                                          [&](const std::string& path) {
                                              auto it = sizes.find(path);
                                              return it != sizes.end() && it->second == 0U;
                                          });
            Problem problem{
                "missing-record-file", only_empty ? Severity::warning : Severity::error, {}};
            problem.fields["dist"] = missing.dist;
            problem.fields["version"] = missing.version;
            problem.fields["paths"] = missing.paths;
            problem.fields["environment"] = environment.site_packages;
            problems.push_back(std::move(problem));
        }
        for (const auto& shared : python::find_shared_paths(environment)) {
            Problem problem{"shared-path", Severity::warning, {}};
            problem.fields["path"] = shared.path;
            problem.fields["dists"] = shared.dists;
            problems.push_back(std::move(problem));
        }
        for (const auto& text : environment.problems) {
            Problem problem{"broken-environment", Severity::error, {}};
            problem.fields["environment"] = environment.site_packages;
            problem.fields["problem"] = text;
            problems.push_back(std::move(problem));
        }
    }
}

namespace {

struct Owned {
    const python::PythonEnvironment* environment = nullptr;
    const python::Distribution* dist = nullptr;
    std::string path;  // as installed (canonical, root-absolute)
};

// The command a user pastes into the root to get the files back.
std::string remedy_of(const fs::FileTree& tree, const Owned& owned) {
    if (owned.dist->installer == "rootlock")
        return "rebuild the image from its lock: rootlock build LOCK";
    // The environment's own pip; else its python by the environment's path (the resolved
    // interpreter of a venv is the base's, and would install into the base).
    const std::string& prefix = owned.environment->prefix;
    std::string pip = prefix + "/bin/pip";
    if (!tree.lstat(pip)) {
        const bool python3 = tree.lstat(prefix + "/bin/python3").has_value();
        pip = prefix + (python3 ? "/bin/python3" : "/bin/python") + " -m pip";
    }
    return fmt::format("{} install --force-reinstall --no-deps {}=={}", pip, owned.dist->name,
                       owned.dist->version);
}

bool under(const std::string& path, const std::string& directory) {
    return path.size() > directory.size() && path.compare(0, directory.size(), directory) == 0 &&
           path[directory.size()] == '/';
}

}  // namespace

void add_owners(const fs::FileTree& tree, const EnvironmentSet& environments,
                std::vector<Problem>& problems) {
    // File name -> every RECORD entry of that name; installed path -> its distribution.
    std::map<std::string, std::vector<Owned>> by_name;
    std::map<std::string, const python::Distribution*> by_path;
    for (const auto& environment : environments.environments) {
        if (environment.managed_by_distro)
            continue;  // dpkg's files: their RECORDs list build-time paths
        for (const auto& dist : environment.distributions) {
            for (const auto& path : dist.installed_paths) {
                by_name[fs::basename(path)].push_back(Owned{&environment, &dist, path});
                by_path.emplace(path, &dist);
            }
        }
    }
    for (auto& problem : problems) {
        if (problem.kind == "cuda-unloaded-major") {
            std::set<std::pair<std::string, std::string>> dists;
            for (const auto& library : problem.fields["libraries"]) {
                if (auto it = by_path.find(library.get<std::string>()); it != by_path.end())
                    dists.emplace(it->second->name, it->second->version);
            }
            auto& list = problem.fields["distributions"];
            for (const auto& [name, version] : dists)
                list.push_back({{"dist", name}, {"version", version}});
            continue;
        }
        const bool missing_dlopen =
            problem.kind == "missing-dlopen" && !problem.fields.contains("provider");
        if (problem.kind != "missing-soname" && !missing_dlopen)
            continue;
        auto found = by_name.find(problem.fields["soname"].get<std::string>());
        if (found == by_name.end())
            continue;
        // The entry whose file is gone, preferably in the environment of whoever needs it.
        const auto& needers = problem.fields[missing_dlopen ? "opened_by" : "needed_by"];
        const Owned* best = nullptr;
        bool best_near = false;
        for (const auto& owned : found->second) {
            if (tree.lstat(owned.path))
                continue;
            bool near = false;
            for (const auto& needer : needers)
                near = near || under(needer.get<std::string>(), owned.environment->site_packages);
            if (best == nullptr || (near && !best_near)) {
                best = &owned;
                best_near = near;
            }
        }
        if (best == nullptr)
            continue;
        problem.fields["owner"] = {{"dist", best->dist->name},
                                   {"version", best->dist->version},
                                   {"path", best->path},
                                   {"environment", best->environment->site_packages}};
        problem.fields["remedy"] = remedy_of(tree, *best);
    }
}

util::Result<std::set<std::string>> uninstall_set(const fs::FileTree& tree,
                                                  const EnvironmentSet& environments,
                                                  const std::vector<std::string>& dists) {
    std::set<std::string> hidden;
    for (const auto& name : dists) {
        bool found = false;
        for (const auto& environment : environments.environments) {
            const python::Distribution* dist = python::find_distribution(environment, name);
            if (dist == nullptr)
                continue;
            found = true;
            auto paths = python::uninstall_paths(tree, environment, *dist);
            hidden.insert(paths.begin(), paths.end());
        }
        if (!found) {
            return util::make_error("--without", fmt::format("no distribution named '{}' in the "
                                                             "Python environments checked",
                                                             name));
        }
    }
    return hidden;
}

}  // namespace rootlock::check
