// resolve(): runs the PubGrub solver over a PackageSource and turns its decisions into the
// resolution (one version per project, extras, edges, the pins behind a yanked choice, the
// direct requirements that did not get their newest version) or its failure into an explanation.
#include "resolve/resolver.hpp"

#include <map>
#include <memory>
#include <set>
#include <utility>

#include "resolve/solver.hpp"

namespace rootlock::resolve {

namespace {

// The source's answers, kept for the whole call: the downgrade questions solve again over the
// same projects, and no (name, version) is asked of the source twice.
class CachingSource final : public PackageSource {
  public:
    explicit CachingSource(PackageSource& source) : m_source(source) {}

    util::Result<std::vector<CandidateVersion>> versions(const std::string& name) override {
        if (auto found = m_versions.find(name); found != m_versions.end())
            return found->second;
        ROOTLOCK_TRY(listed, m_source.versions(name));
        return m_versions.emplace(name, std::move(listed)).first->second;
    }
    util::Result<std::vector<python::Requirement>> dependencies(
        const std::string& name, const python::Version& version) override {
        const auto key = std::make_pair(name, python::to_string(version));
        if (auto found = m_dependencies.find(key); found != m_dependencies.end())
            return found->second;
        ROOTLOCK_TRY(listed, m_source.dependencies(name, version));
        return m_dependencies.emplace(key, std::move(listed)).first->second;
    }
    void prefetch(const std::vector<std::pair<std::string, python::Version>>& wanted) override {
        std::vector<std::pair<std::string, python::Version>> missing;
        for (const auto& [name, version] : wanted)
            if (m_dependencies.count({name, python::to_string(version)}) == 0)
                missing.emplace_back(name, version);
        if (!missing.empty())
            m_source.prefetch(missing);
    }

  private:
    PackageSource& m_source;
    std::map<std::string, std::vector<CandidateVersion>> m_versions;
    std::map<std::pair<std::string, std::string>, std::vector<python::Requirement>> m_dependencies;
};

}  // namespace

namespace {

// Passes after the first, each with the permits of every pin met so far; a pass is taken when
// it admits a yanked version pip would (every one pinned by a decided requirement). Three are
// plenty: each pass only adds what the graph it explored pins.
constexpr int k_yank_passes = 3;

void merge_into(detail::YankPermits& into, const detail::YankPermits& from) {
    for (const auto& [name, versions] : from)
        into[name].insert(versions.begin(), versions.end());
}

}  // namespace

util::Result<Resolution> resolve(const std::vector<python::Requirement>& roots,
                                 PackageSource& source_in, const ResolveOptions& options) {
    CachingSource source(source_in);
    auto solver = std::make_unique<detail::Solver>(source, options);
    ROOTLOCK_TRY(solved_first, solver->solve(roots));
    bool solved = solved_first;
    // pip merges every requirement on a project before it applies PEP 592, so a range beside an
    // exact pin to a yanked release takes that release; per-requirement sets cannot say so
    // (resolver.hpp), so the solve runs again with the pinned yanked versions allowed to ranges.
    detail::YankPermits permits = solver->yank_pins();
    for (int pass = 0; pass < k_yank_passes && !permits.empty(); ++pass) {
        auto again = std::make_unique<detail::Solver>(source, options, permits);
        ROOTLOCK_TRY(solved_again, again->solve(roots));
        if (solved_again && again->chose_yanked() && again->every_yanked_choice_pinned()) {
            solver = std::move(again);
            solved = true;
            break;
        }
        detail::YankPermits grown = permits;
        merge_into(grown, again->yank_pins());
        if (grown == permits)
            break;
        permits = std::move(grown);
    }
    if (!solved)
        return util::make_error("", detail::explain(solver->graph(), solver->failure()));
    Resolution resolution = detail::resolution_of(*solver, options);
    ROOTLOCK_TRY(downgrades, detail::find_downgrades(*solver, roots, source, options));
    resolution.downgrades = std::move(downgrades);
    return resolution;
}

namespace detail {

namespace {

// The requirements that admitted a yanked choice: the exact pins on it from decided dependers
// (ranges beside them allow it only because a pin does, see resolve()).
std::vector<std::string> yanked_by(const Solver& solver, size_t package) {
    const auto& graph = solver.graph();
    std::set<std::string> out;
    for (size_t id : graph.packages[package].incompatibilities) {
        const auto& incompatibility = graph.incompatibilities[id];
        if (incompatibility.kind != CauseKind::requirement || !incompatibility.exact_pin ||
            incompatibility.dependee != package || incompatibility.depender == package ||
            solver.decided(incompatibility.depender) != incompatibility.depender_version)
            continue;
        const auto& depender = graph.packages[incompatibility.depender];
        out.insert(incompatibility.depender == 0
                       ? "the recipe requires " + incompatibility.requirement
                       : depender.name + " " +
                             python::to_string(
                                 depender.candidates[incompatibility.depender_version].version) +
                             " requires " + incompatibility.requirement);
    }
    return {out.begin(), out.end()};
}

}  // namespace

Resolution resolution_of(const Solver& solver, const ResolveOptions& options) {
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
        if (packages[p].extra.empty()) {
            ids[base.name] = p;
            resolved.yanked = base.candidates[*version].yanked;
            if (resolved.yanked)
                resolved.yanked_by = yanked_by(solver, p);
        } else
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

}  // namespace detail

}  // namespace rootlock::resolve
