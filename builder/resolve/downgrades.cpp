// Why a direct requirement did not get its newest version: the resolution is asked again with
// that version required, and its conflict (or what its answer gives up) is the reason, so that
// no root requirement is ever downgraded in silence.
#include <fmt/format.h>
#include <algorithm>
#include <map>

#include "resolve/solver.hpp"

namespace rootlock::resolve::detail {

namespace {

// name -> chosen version, for every base package a successful solver decided.
std::map<std::string, python::Version> decided_versions(const Solver& solver) {
    std::map<std::string, python::Version> out;
    const auto& packages = solver.graph().packages;
    for (size_t p = 1; p < packages.size(); ++p) {
        if (packages[p].base != p || !solver.decided(p))
            continue;
        out.emplace(packages[p].name, packages[p].candidates[*solver.decided(p)].version);
    }
    return out;
}

// What a resolution that has `name` at its newest gives up against the one chosen: the packages
// it takes older, direct requirements first.
std::string what_it_gives_up(const std::map<std::string, python::Version>& chosen,
                             const std::map<std::string, python::Version>& alternative,
                             const std::vector<python::Requirement>& roots,
                             const std::string& name) {
    std::vector<std::string> direct, other;
    for (const auto& [package, version] : alternative) {
        auto found = chosen.find(package);
        if (package == name || found == chosen.end() || !(version < found->second))
            continue;
        const bool is_direct = std::any_of(roots.begin(), roots.end(), [&](const auto& root) {
            return root.normalized_name == package;
        });
        (is_direct ? direct : other)
            .push_back(fmt::format("{} {} (not {})", package, python::to_string(version),
                                   python::to_string(found->second)));
    }
    direct.insert(direct.end(), other.begin(), other.end());
    std::string out;
    for (size_t i = 0; i < direct.size(); ++i)
        out += (i == 0 ? "" : i + 1 == direct.size() ? " and " : ", ") + direct[i];
    return out;
}

}  // namespace

util::Result<std::vector<Downgrade>> find_downgrades(const Solver& solved,
                                                     const std::vector<python::Requirement>& roots,
                                                     PackageSource& source,
                                                     const ResolveOptions& options) {
    const auto& graph = solved.graph();
    // Root requirements grouped by project, in the order the recipe names them.
    std::vector<std::string> names;
    for (const auto& root : solved.roots())
        if (std::find(names.begin(), names.end(), root.normalized_name) == names.end())
            names.push_back(root.normalized_name);
    const auto chosen_versions = decided_versions(solved);

    std::vector<Downgrade> out;
    for (const auto& name : names) {
        const auto id = solved.find_package(name);
        if (!id || !solved.decided(*id))
            continue;
        const auto& candidates = graph.packages[*id].candidates;
        StateSet allowed = StateSet::all(candidates.size());
        for (const auto& root : solved.roots())
            if (root.normalized_name == name)
                allowed = allowed.intersect(solved.matching(*id, root.specifiers));
        const auto newest = allowed.first_version();
        const size_t chosen = *solved.decided(*id);
        if (!newest || *newest == chosen)
            continue;
        Downgrade downgrade{name, candidates[chosen].version, candidates[*newest].version, ""};
        const std::string newest_text = python::to_string(downgrade.newest);

        // The same question with name==newest added; the preference for it would only get in
        // the way.
        ResolveOptions asked = options;
        asked.upgrade.insert(name);
        std::vector<python::Requirement> with_newest = roots;
        ROOTLOCK_TRY(pin, python::parse_requirement(name + "==" + newest_text));
        with_newest.push_back(std::move(pin));
        Solver again(source, asked, solved.permits());
        auto solved_again = again.solve(with_newest);
        if (!solved_again.ok()) {
            if (util::exits_as_io(solved_again.error()))
                return solved_again.error();
            downgrade.why = "asking for " + name + "==" + newest_text +
                            " failed: " + solved_again.error().text();
        } else if (!*solved_again) {
            downgrade.why = "with " + name + "==" + newest_text + ", " +
                            explain(again.graph(), again.failure());
        } else {
            const auto preference = options.preferences.find(name);
            const bool kept = preference != options.preferences.end() &&
                              preference->second == downgrade.chosen && !options.upgrade_all &&
                              options.upgrade.count(name) == 0;
            const std::string gives_up =
                what_it_gives_up(chosen_versions, decided_versions(again), roots, name);
            if (kept)
                downgrade.why = "the existing lock's version is kept (upgrading it is possible" +
                                (gives_up.empty() ? std::string() : ", with " + gives_up) + ")";
            else if (!gives_up.empty())
                downgrade.why = "a resolution with " + name + " " + newest_text +
                                " exists, but it takes " + gives_up;
            else
                downgrade.why = "a resolution with " + name + " " + newest_text +
                                " exists; the resolver decided other packages first";
        }
        out.push_back(std::move(downgrade));
    }
    return out;
}

}  // namespace rootlock::resolve::detail
