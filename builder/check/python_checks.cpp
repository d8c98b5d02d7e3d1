// Python environment checks for the closure checker; see python_checks.hpp.
#include "check/python_checks.hpp"

#include <algorithm>
#include <map>
#include <optional>

#include <fmt/format.h>

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
