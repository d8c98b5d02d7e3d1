// The solver's side facing the PackageSource: candidate lists (sorted, yanked ones kept with their
// flag), per-requirement version sets with the pre-release and yanked rules, dependency
// incompatibilities.
#include <fmt/format.h>
#include <algorithm>

#include "python/metadata.hpp"
#include "resolve/solver.hpp"

namespace rootlock::resolve::detail {

namespace {

constexpr size_t k_available_shown = 20;

std::string available_text(const std::vector<CandidateVersion>& candidates) {
    if (candidates.empty())
        return "available: none";
    std::string out = "available: ";
    const size_t shown = std::min(candidates.size(), k_available_shown);
    if (shown < candidates.size())
        out += "..., ";
    // Candidates are newest first; people read version lists oldest first.
    for (size_t i = shown; i-- > 0;)
        out += python::to_string(candidates[i].version) +
               (candidates[i].yanked ? " (yanked)" : "") + (i == 0 ? "" : ", ");
    return out;
}

}  // namespace

bool is_exact_pin(const python::SpecifierSet& specifiers) {
    // pip's is_pinned (resolution/resolvelib/factory.py): any "===", or "==" without ".*".
    return std::any_of(specifiers.specifiers.begin(), specifiers.specifiers.end(),
                       [](const python::Specifier& specifier) {
                           return specifier.op == "===" ||
                                  (specifier.op == "==" && !specifier.wildcard);
                       });
}

std::string requirement_text(const python::Requirement& requirement) {
    std::string out = requirement.normalized_name;
    if (!requirement.extras.empty()) {
        out += "[";
        for (size_t i = 0; i < requirement.extras.size(); ++i)
            out += (i == 0 ? "" : ",") + requirement.extras[i];
        out += "]";
    }
    return out + python::to_string(requirement.specifiers);
}

Solver::Solver(PackageSource& source, const ResolveOptions& options, YankPermits permits)
    : m_source(source), m_options(options), m_permits(std::move(permits)) {
    Package root;
    root.name = "<recipe>";
    root.candidates.push_back(CandidateVersion{*python::parse_version("0"), false});
    m_graph.packages.push_back(std::move(root));
    m_accumulated.push_back(StateSet::all(1));
    m_decided.emplace_back();
    m_hinted.emplace_back();
}

const std::vector<python::Requirement>* Solver::cached_dependencies(size_t package,
                                                                    size_t version) const {
    auto found = m_dependencies.find({package, version});
    return found == m_dependencies.end() ? nullptr : &found->second;
}

util::Result<size_t> Solver::package_id(const std::string& name, const std::string& extra) {
    const std::string key = extra.empty() ? name : name + "[" + extra + "]";
    if (auto found = m_ids.find(key); found != m_ids.end())
        return found->second;
    Package package;
    package.name = key;
    package.extra = extra;
    if (!extra.empty()) {
        ROOTLOCK_TRY(base, package_id(name, ""));
        package.base = base;
        package.candidates = m_graph.packages[base].candidates;
    } else {
        ROOTLOCK_TRY(listed, m_source.versions(name));
        // Yanked candidates stay: whether one may be chosen depends on the requirement that
        // selects it (matching()).
        std::vector<CandidateVersion> sorted = std::move(listed);
        // Newest first whatever order the source used; equal versions ("1.0", "1.0.0") once,
        // the one that is not yanked kept.
        std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
            if (a.version != b.version)
                return b.version < a.version;
            if (a.yanked != b.yanked)
                return !a.yanked;
            return python::to_string(a.version) < python::to_string(b.version);
        });
        sorted.erase(
            std::unique(sorted.begin(), sorted.end(),
                        [](const auto& a, const auto& b) { return a.version == b.version; }),
            sorted.end());
        package.candidates = std::move(sorted);
        package.base = m_graph.packages.size();
    }
    const size_t id = m_graph.packages.size();
    m_accumulated.push_back(StateSet::all(package.candidates.size()));
    m_decided.emplace_back();
    m_hinted.emplace_back();
    m_graph.packages.push_back(std::move(package));
    m_ids.emplace(key, id);
    return id;
}

std::optional<size_t> Solver::find_package(const std::string& key) const {
    auto found = m_ids.find(key);
    return found == m_ids.end() ? std::nullopt : std::optional<size_t>(found->second);
}

StateSet Solver::matching(size_t package, const python::SpecifierSet& specifiers) const {
    const auto& candidates = m_graph.packages[package].candidates;
    StateSet set = StateSet::nothing(candidates.size());
    bool any = false;
    for (size_t i = 0; i < candidates.size(); ++i) {
        if (specifiers.contains(candidates[i].version, false)) {
            set.set(i);
            any = true;
        }
    }
    // packaging's filter() fallback, for this requirement alone (see resolver.hpp). Yanked
    // candidates count here, as in pip, whose finder filters before it looks at yanking.
    if (!any)
        for (size_t i = 0; i < candidates.size(); ++i)
            if (candidates[i].version.is_prerelease() &&
                specifiers.contains(candidates[i].version, true))
                set.set(i);
    // PEP 592 as pip applies it to every requirement: yanked candidates are dropped unless the
    // requirement is an exact pin that only yanked candidates satisfy, or (second pass) an exact
    // pin elsewhere selects them.
    const auto matched = set.version_indices();
    const bool only_yanked =
        std::all_of(matched.begin(), matched.end(), [&](size_t i) { return candidates[i].yanked; });
    if (only_yanked && is_exact_pin(specifiers))
        return set;
    const auto permitted = m_permits.find(m_graph.packages[m_graph.packages[package].base].name);
    StateSet kept = StateSet::nothing(candidates.size());
    for (size_t i : matched)
        if (!candidates[i].yanked ||
            (permitted != m_permits.end() &&
             permitted->second.count(python::to_string(candidates[i].version)) != 0))
            kept.set(i);
    return kept;
}

std::string Solver::display(size_t package, size_t version) const {
    if (package == 0)
        return "the recipe";
    return m_graph.packages[package].name + " " +
           python::to_string(m_graph.packages[package].candidates[version].version);
}

util::Result<const std::vector<python::Requirement>*> Solver::fetch_dependencies(size_t package,
                                                                                 size_t version) {
    auto found = m_dependencies.find({package, version});
    if (found != m_dependencies.end())
        return &found->second;
    const auto& info = m_graph.packages[package];
    ROOTLOCK_TRY(listed, m_source.dependencies(info.name, info.candidates[version].version));
    auto inserted = m_dependencies.emplace(std::make_pair(package, version), std::move(listed));
    return &inserted.first->second;
}

util::Status Solver::add_requirement(size_t package, size_t version,
                                     const python::Requirement& requirement,
                                     std::vector<size_t>& added) {
    if (requirement.url) {
        std::string message = "direct URL requirements are not supported";
        if (package != 0)
            message += " (required by " + display(package, version) + ")";
        return util::make_error(requirement.normalized_name + " @ " + *requirement.url, message);
    }
    ROOTLOCK_TRY(dependee, package_id(requirement.normalized_name, ""));
    const StateSet allowed = matching(dependee, requirement.specifiers);
    const bool exact_pin = is_exact_pin(requirement.specifiers);
    if (exact_pin) {
        const auto& candidates = m_graph.packages[dependee].candidates;
        const auto selected = allowed.version_indices();
        if (!selected.empty() && std::all_of(selected.begin(), selected.end(),
                                             [&](size_t i) { return candidates[i].yanked; }))
            for (size_t i : selected)
                m_yank_pins[requirement.normalized_name].insert(
                    python::to_string(candidates[i].version));
    }
    if (package == 0 && allowed.count_versions() == 0)
        return util::make_error(
            "", fmt::format("no version of {} matches {} ({})", requirement.normalized_name,
                            requirement_text(requirement),
                            available_text(m_graph.packages[dependee].candidates)));
    std::vector<size_t> targets{dependee};
    for (const auto& extra : requirement.extras) {
        ROOTLOCK_TRY(virtual_id, package_id(requirement.normalized_name, extra));
        targets.push_back(virtual_id);
    }
    const size_t versions = m_graph.packages[package].candidates.size();
    for (size_t target : targets) {
        Incompatibility incompatibility;
        incompatibility.kind = CauseKind::requirement;
        incompatibility.depender = package;
        incompatibility.depender_version = version;
        incompatibility.dependee = target;
        incompatibility.requirement = requirement_text(requirement);
        incompatibility.exact_pin = exact_pin;
        incompatibility.terms.push_back(Term{package, StateSet::single(versions, version)});
        if (target == package) {
            if (allowed.test(version))
                continue;  // a version that requires itself: always true
        } else {
            incompatibility.terms.push_back(Term{target, allowed.complement()});
        }
        const size_t id = store(std::move(incompatibility));
        index(id);
        added.push_back(id);
    }
    return util::ok_status();
}

util::Result<std::vector<size_t>> Solver::add_dependencies(size_t package, size_t version) {
    if (auto found = m_expanded.find({package, version}); found != m_expanded.end())
        return found->second;
    std::vector<size_t> added;
    const auto& info = m_graph.packages[package];
    const auto& environment = m_options.environment;
    if (package == 0) {
        for (const auto& requirement : m_roots) {
            auto status = add_requirement(0, 0, requirement, added);
            if (!status)
                return status.error();
        }
    } else if (info.extra.empty()) {
        ROOTLOCK_TRY(requirements, fetch_dependencies(package, version));
        for (const auto& requirement : *requirements) {
            if (!python::applies(requirement, environment))
                continue;
            auto status = add_requirement(package, version, requirement, added);
            if (!status)
                return status.error();
        }
    } else {
        // foo[bar] V is foo V plus the requirements that only "bar" turns on.
        const size_t base = info.base;
        const std::string extra = info.extra;
        Incompatibility same;
        same.kind = CauseKind::extra_base;
        same.depender = package;
        same.depender_version = version;
        same.dependee = base;
        const size_t versions = info.candidates.size();
        same.terms.push_back(Term{package, StateSet::single(versions, version)});
        same.terms.push_back(Term{base, StateSet::single(versions, version).complement()});
        const size_t id = store(std::move(same));
        index(id);
        added.push_back(id);
        ROOTLOCK_TRY(requirements, fetch_dependencies(base, version));
        for (const auto& requirement : *requirements) {
            if (!python::applies(requirement, environment, extra) ||
                python::applies(requirement, environment))
                continue;
            auto status = add_requirement(package, version, requirement, added);
            if (!status)
                return status.error();
        }
    }
    m_expanded.emplace(std::make_pair(package, version), added);
    return added;
}

std::optional<size_t> Solver::preferred_version(size_t package) const {
    const auto& info = m_graph.packages[package];
    const auto& allowed = m_accumulated[package];
    if (info.base != package && m_decided[info.base] && allowed.test(*m_decided[info.base]))
        return *m_decided[info.base];
    const std::string& name = m_graph.packages[info.base].name;
    if (package == 0 || m_options.upgrade_all || m_options.upgrade.count(name) != 0)
        return std::nullopt;
    auto preference = m_options.preferences.find(name);
    if (preference == m_options.preferences.end())
        return std::nullopt;
    for (size_t i = 0; i < info.candidates.size(); ++i)
        if (info.candidates[i].version == preference->second && allowed.test(i))
            return i;
    return std::nullopt;
}

bool Solver::pinned_by_decided(size_t package, size_t version) const {
    const size_t base = m_graph.packages[package].base;
    for (size_t target = 0; target < m_graph.packages.size(); ++target) {
        if (m_graph.packages[target].base != base)
            continue;
        for (size_t id : m_graph.packages[target].incompatibilities) {
            const auto& incompatibility = m_graph.incompatibilities[id];
            if (incompatibility.kind != CauseKind::requirement || !incompatibility.exact_pin ||
                incompatibility.dependee != target ||
                m_decided[incompatibility.depender] != incompatibility.depender_version)
                continue;
            // The dependee's term is what the pin excludes.
            for (const auto& term : incompatibility.terms)
                if (term.package == target && !term.states.test(version))
                    return true;
        }
    }
    return false;
}

bool Solver::every_yanked_choice_pinned() const {
    for (size_t p = 1; p < m_graph.packages.size(); ++p)
        if (m_graph.packages[p].base == p && m_decided[p] &&
            m_graph.packages[p].candidates[*m_decided[p]].yanked &&
            !pinned_by_decided(p, *m_decided[p]))
            return false;
    return true;
}

bool Solver::chose_yanked() const {
    for (size_t p = 1; p < m_graph.packages.size(); ++p)
        if (m_decided[p] && m_graph.packages[p].candidates[*m_decided[p]].yanked)
            return true;
    return false;
}

size_t Solver::version_to_try(size_t package) const {
    if (auto preferred = preferred_version(package))
        return *preferred;
    const auto allowed = m_accumulated[package].version_indices();
    // A yanked version that only a permit allows waits until a decided pin selects it: pip takes
    // a yanked release only for a pin in the requirements it holds at that moment.
    const auto& candidates = m_graph.packages[package].candidates;
    for (size_t i : allowed)
        if (!candidates[i].yanked || m_permits.empty() || pinned_by_decided(package, i))
            return i;
    return allowed.front();
}

void Solver::hint_prefetch(size_t chosen, size_t version) {
    // The chosen version is fetched next; the likely versions of the other required packages
    // soon after. A source may fetch them in parallel.
    std::vector<std::pair<size_t, size_t>> wanted{{m_graph.packages[chosen].base, version}};
    for (size_t p = 1; p < m_graph.packages.size(); ++p) {
        if (p == chosen || m_decided[p] || m_accumulated[p].may_be_unselected())
            continue;
        auto preferred = preferred_version(p);
        const size_t likely = preferred ? *preferred : *m_accumulated[p].first_version();
        if (m_hinted[p] == likely)
            continue;  // said already
        m_hinted[p] = likely;
        wanted.emplace_back(m_graph.packages[p].base, likely);
    }
    std::vector<std::pair<std::string, python::Version>> hints;
    for (const auto& [package, index] : wanted) {
        if (package == 0 || m_dependencies.count({package, index}) != 0 ||
            !m_prefetched.insert({package, index}).second)
            continue;
        const auto& info = m_graph.packages[package];
        hints.emplace_back(info.name, info.candidates[index].version);
    }
    std::sort(hints.begin(), hints.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    if (!hints.empty())
        m_source.prefetch(hints);
}

}  // namespace rootlock::resolve::detail
