// resolve(): runs the PubGrub solver over a PackageSource and turns its decisions into the
// resolution (one version per project, extras, edges) or its failure into an explanation.
#include "resolve/resolver.hpp"

#include <map>

#include "resolve/solver.hpp"

namespace rootlock::resolve {

util::Result<Resolution> resolve(const std::vector<python::Requirement>& roots,
                                 PackageSource& source, const ResolveOptions& options) {
    detail::Solver solver(source, options);
    ROOTLOCK_TRY(solved, solver.solve(roots));
    if (!solved)
        return util::make_error("", detail::explain(solver.graph(), solver.failure()));

    const auto& packages = solver.graph().packages;
    std::map<std::string, ResolvedPackage> chosen;
    std::map<std::string, size_t> ids;
    for (size_t p = 1; p < packages.size(); ++p) {
        const auto version = solver.decided(p);
        if (!version)
            continue;
        const auto& base = packages[packages[p].base];
        auto& resolved = chosen[base.name];
        resolved.name = base.name;
        resolved.version = base.candidates[*version].version;
        if (packages[p].extra.empty())
            ids[base.name] = p;
        else
            resolved.extras.insert(packages[p].extra);
    }
    std::map<std::string, std::set<std::string>> required_by;
    for (auto& [name, resolved] : chosen) {
        static const std::vector<python::Requirement> k_none;
        const size_t id = ids.at(name);
        const auto* requirements = solver.cached_dependencies(id, *solver.decided(id));
        std::set<std::string> dependencies;
        for (const auto& requirement : requirements != nullptr ? *requirements : k_none) {
            bool active = python::applies(requirement, options.environment);
            for (const auto& extra : resolved.extras)
                active = active || python::applies(requirement, options.environment, extra);
            if (active && requirement.normalized_name != name &&
                chosen.count(requirement.normalized_name) != 0)
                dependencies.insert(requirement.normalized_name);
        }
        resolved.dependencies.assign(dependencies.begin(), dependencies.end());
        for (const auto& dependency : dependencies)
            required_by[dependency].insert(name);
    }
    for (const auto& requirement : solver.roots()) {
        auto found = chosen.find(requirement.normalized_name);
        if (found == chosen.end())
            continue;
        found->second.direct = true;
        required_by[requirement.normalized_name].insert("<recipe>");
    }
    Resolution resolution;
    for (auto& [name, resolved] : chosen) {
        const auto& by = required_by[name];
        resolved.required_by.assign(by.begin(), by.end());
        resolution.packages.push_back(std::move(resolved));
    }
    resolution.steps = solver.steps();
    resolution.backtracks = solver.backtracks();
    return resolution;
}

}  // namespace rootlock::resolve
