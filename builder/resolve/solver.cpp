// PubGrub's core over explicit state sets: unit propagation, conflict resolution (which learns
// the incompatibility that caused a conflict, so the same dead end is never explored twice),
// backjumping to the decision that the learnt fact blames, and choosing the next decision.
#include <fmt/format.h>
#include <algorithm>
#include <bit>
#include <stdexcept>

#include "resolve/solver.hpp"

namespace rootlock::resolve::detail {

namespace {

constexpr size_t k_word_bits = 64;

size_t word_count(size_t versions) {
    return (versions + 1 + k_word_bits - 1) / k_word_bits;
}

}  // namespace

StateSet StateSet::nothing(size_t versions) {
    StateSet set;
    set.m_versions = versions;
    set.m_words.assign(word_count(versions), 0);
    return set;
}

StateSet StateSet::all(size_t versions) {
    return nothing(versions).complement();
}

StateSet StateSet::single(size_t versions, size_t index) {
    StateSet set = nothing(versions);
    set.set(index);
    return set;
}

bool StateSet::test(size_t bit) const {
    return bit <= m_versions && bit / k_word_bits < m_words.size() &&
           ((m_words[bit / k_word_bits] >> (bit % k_word_bits)) & 1U) != 0;
}

void StateSet::set(size_t bit) {
    if (bit <= m_versions)
        m_words[bit / k_word_bits] |= uint64_t{1} << (bit % k_word_bits);
}

bool StateSet::empty() const {
    return std::all_of(m_words.begin(), m_words.end(), [](uint64_t word) { return word == 0; });
}

bool StateSet::is_all() const {
    return complement().empty();
}

bool StateSet::subset_of(const StateSet& other) const {
    for (size_t i = 0; i < m_words.size() && i < other.m_words.size(); ++i)
        if ((m_words[i] & ~other.m_words[i]) != 0)
            return false;
    return true;
}

bool StateSet::intersects(const StateSet& other) const {
    for (size_t i = 0; i < m_words.size() && i < other.m_words.size(); ++i)
        if ((m_words[i] & other.m_words[i]) != 0)
            return true;
    return false;
}

StateSet StateSet::intersect(const StateSet& other) const {
    StateSet out = *this;
    for (size_t i = 0; i < out.m_words.size(); ++i)
        out.m_words[i] &= i < other.m_words.size() ? other.m_words[i] : 0;
    return out;
}

StateSet StateSet::complement() const {
    StateSet out = *this;
    for (auto& word : out.m_words)
        word = ~word;
    const size_t used = (m_versions + 1) % k_word_bits;
    if (used != 0 && !out.m_words.empty())
        out.m_words.back() &= (uint64_t{1} << used) - 1;
    return out;
}

size_t StateSet::count_versions() const {
    size_t count = 0;
    for (auto word : m_words)
        count += static_cast<size_t>(std::popcount(word));
    return may_be_unselected() ? count - 1 : count;
}

std::vector<size_t> StateSet::version_indices() const {
    std::vector<size_t> out;
    for (size_t i = 0; i < m_versions; ++i)
        if (test(i))
            out.push_back(i);
    return out;
}

std::optional<size_t> StateSet::first_version() const {
    for (size_t w = 0; w < m_words.size(); ++w) {
        if (m_words[w] == 0)
            continue;
        const size_t bit = w * k_word_bits + static_cast<size_t>(std::countr_zero(m_words[w]));
        return bit < m_versions ? std::optional<size_t>(bit) : std::nullopt;
    }
    return std::nullopt;
}

size_t Solver::store(Incompatibility incompatibility) {
    // One term per package (terms on the same package must all hold, so they intersect), and no
    // term that every state satisfies: it constrains nothing.
    auto& terms = incompatibility.terms;
    std::stable_sort(terms.begin(), terms.end(),
                     [](const Term& a, const Term& b) { return a.package < b.package; });
    std::vector<Term> merged;
    for (auto& term : terms) {
        if (!merged.empty() && merged.back().package == term.package)
            merged.back().states = merged.back().states.intersect(term.states);
        else
            merged.push_back(std::move(term));
    }
    std::erase_if(merged, [](const Term& term) { return term.states.is_all(); });
    terms = std::move(merged);
    m_graph.incompatibilities.push_back(std::move(incompatibility));
    return m_graph.incompatibilities.size() - 1;
}

void Solver::index(size_t id) {
    for (const auto& term : m_graph.incompatibilities[id].terms)
        m_graph.packages[term.package].incompatibilities.push_back(id);
}

Solver::Relation Solver::relation(const Incompatibility& incompatibility,
                                  size_t& unsatisfied) const {
    bool found = false;
    for (size_t i = 0; i < incompatibility.terms.size(); ++i) {
        const auto& term = incompatibility.terms[i];
        const auto& accumulated = m_accumulated[term.package];
        if (!accumulated.intersects(term.states))
            return Relation::contradicted;
        if (accumulated.subset_of(term.states))
            continue;
        if (found)
            return Relation::inconclusive;
        found = true;
        unsatisfied = i;
    }
    return found ? Relation::almost : Relation::satisfied;
}

void Solver::assign(size_t package, StateSet states, bool decision, size_t cause) {
    m_accumulated[package] = m_accumulated[package].intersect(states);
    if (decision)
        m_decided[package] = states.first_version();
    m_assignments.push_back(Assignment{package, std::move(states), m_level, decision, cause});
}

void Solver::backtrack(size_t level) {
    while (!m_assignments.empty() && m_assignments.back().level > level)
        m_assignments.pop_back();
    m_level = level;
    for (size_t p = 0; p < m_graph.packages.size(); ++p) {
        m_accumulated[p] = StateSet::all(m_graph.packages[p].candidates.size());
        m_decided[p].reset();
    }
    for (const auto& assignment : m_assignments) {
        m_accumulated[assignment.package] =
            m_accumulated[assignment.package].intersect(assignment.states);
        if (assignment.decision)
            m_decided[assignment.package] = assignment.states.first_version();
    }
}

bool Solver::is_failure(const Incompatibility& incompatibility) const {
    const auto& terms = incompatibility.terms;
    return terms.empty() ||
           (terms.size() == 1 && terms[0].package == 0 && !terms[0].states.may_be_unselected());
}

util::Result<bool> Solver::propagate(size_t package) {
    std::vector<size_t> changed{package};
    while (!changed.empty()) {
        const size_t current = changed.back();
        changed.pop_back();
        // Newest first: learnt incompatibilities are the most informative.
        for (size_t k = m_graph.packages[current].incompatibilities.size(); k-- > 0;) {
            const size_t id = m_graph.packages[current].incompatibilities[k];
            size_t unsatisfied = 0;
            const auto rel = relation(m_graph.incompatibilities[id], unsatisfied);
            if (rel == Relation::satisfied) {
                auto cause = resolve_conflict(id);
                if (!cause)
                    return false;
                const auto& learnt = m_graph.incompatibilities[*cause];
                if (relation(learnt, unsatisfied) != Relation::almost)
                    throw std::logic_error(
                        "resolver: a learnt incompatibility is not almost "
                        "satisfied after backjumping");
                const Term& term = learnt.terms[unsatisfied];
                assign(term.package, term.states.complement(), false, *cause);
                changed.assign(1, term.package);
                break;
            }
            if (rel == Relation::almost) {
                const Term& term = m_graph.incompatibilities[id].terms[unsatisfied];
                const size_t target = term.package;
                assign(target, term.states.complement(), false, id);
                if (std::find(changed.begin(), changed.end(), target) == changed.end())
                    changed.push_back(target);
            }
        }
    }
    return true;
}

std::optional<size_t> Solver::resolve_conflict(size_t id) {
    bool learnt = false;
    while (true) {
        const Incompatibility current = m_graph.incompatibilities[id];
        if (is_failure(current)) {
            m_failure = id;
            return std::nullopt;
        }
        // The satisfier: the earliest assignment after which every term holds.
        std::vector<StateSet> seen;
        for (const auto& term : current.terms)
            seen.push_back(StateSet::all(term.states.versions()));
        auto all_hold = [&] {
            for (size_t t = 0; t < current.terms.size(); ++t)
                if (!seen[t].subset_of(current.terms[t].states))
                    return false;
            return true;
        };
        auto term_of = [&](size_t package) -> std::optional<size_t> {
            for (size_t t = 0; t < current.terms.size(); ++t)
                if (current.terms[t].package == package)
                    return t;
            return std::nullopt;
        };
        size_t satisfier = m_assignments.size();
        for (size_t a = 0; a < m_assignments.size(); ++a) {
            auto t = term_of(m_assignments[a].package);
            if (!t)
                continue;
            seen[*t] = seen[*t].intersect(m_assignments[a].states);
            if (all_hold()) {
                satisfier = a;
                break;
            }
        }
        if (satisfier == m_assignments.size())
            throw std::logic_error("resolver: a conflict without a satisfier");
        const Assignment sat = m_assignments[satisfier];
        const size_t sat_term = *term_of(sat.package);

        // The previous satisfier: the earliest assignment that, with the satisfier, makes every
        // term hold; its level is where the learnt fact becomes useful again.
        for (size_t t = 0; t < current.terms.size(); ++t)
            seen[t] = StateSet::all(current.terms[t].states.versions());
        seen[sat_term] = sat.states;
        size_t previous_level = 1;
        if (!all_hold()) {
            for (size_t a = 0; a < satisfier; ++a) {
                auto t = term_of(m_assignments[a].package);
                if (!t)
                    continue;
                seen[*t] = seen[*t].intersect(m_assignments[a].states);
                if (all_hold()) {
                    previous_level = std::max<size_t>(1, m_assignments[a].level);
                    break;
                }
            }
        }

        if (sat.decision || previous_level != sat.level) {
            if (learnt)
                index(id);
            backtrack(previous_level);
            ++m_backtracks;
            return id;
        }

        // Resolve with the satisfier's cause: the terms of both, without the satisfier's
        // package, plus what the satisfier left of it when it alone does not satisfy the term.
        Incompatibility prior;
        prior.kind = CauseKind::derived;
        prior.left = id;
        prior.right = sat.cause;
        for (const auto& term : current.terms)
            if (term.package != sat.package)
                prior.terms.push_back(term);
        for (const auto& term : m_graph.incompatibilities[sat.cause].terms)
            if (term.package != sat.package)
                prior.terms.push_back(term);
        const Term& term = current.terms[sat_term];
        if (!sat.states.subset_of(term.states))
            prior.terms.push_back(
                Term{sat.package, sat.states.intersect(term.states.complement()).complement()});
        id = store(std::move(prior));
        learnt = true;
    }
}

util::Result<std::optional<size_t>> Solver::choose() {
    std::optional<size_t> best;
    size_t best_count = 0;
    for (size_t p = 0; p < m_graph.packages.size(); ++p) {
        if (m_decided[p] || m_accumulated[p].may_be_unselected())
            continue;
        const size_t count = m_accumulated[p].count_versions();
        if (!best || count < best_count ||
            (count == best_count && m_graph.packages[p].name < m_graph.packages[*best].name)) {
            best = p;
            best_count = count;
        }
    }
    if (!best)
        return std::optional<size_t>{};
    const size_t package = *best;
    const size_t version = version_to_try(package);

    if (++m_steps > m_options.max_steps)
        return util::make_error(
            "", fmt::format("gave up after {} steps without finding a resolution (max_steps)",
                            m_options.max_steps));
    hint_prefetch(package, version);
    ROOTLOCK_TRY(ids, add_dependencies(package, version));
    // A version whose own dependencies already contradict the partial solution is not decided:
    // propagation derives that it is excluded, with the dependency as the reason.
    bool conflict = false;
    for (size_t id : ids) {
        bool all = true;
        for (const auto& term : m_graph.incompatibilities[id].terms)
            if (term.package != package && !m_accumulated[term.package].subset_of(term.states))
                all = false;
        conflict = conflict || all;
    }
    if (!conflict) {
        ++m_level;
        assign(package, StateSet::single(m_graph.packages[package].candidates.size(), version),
               true, 0);
    }
    return std::optional<size_t>{package};
}

util::Result<bool> Solver::solve(const std::vector<python::Requirement>& roots) {
    for (const auto& requirement : roots)
        if (python::applies(requirement, m_options.environment))
            m_roots.push_back(requirement);
    Incompatibility root;
    root.kind = CauseKind::root;
    root.terms.push_back(Term{0, StateSet::single(1, 1)});  // "the recipe is not selected"
    index(store(std::move(root)));
    size_t next = 0;
    while (true) {
        ROOTLOCK_TRY(propagated, propagate(next));
        if (!propagated)
            return false;
        ROOTLOCK_TRY(chosen, choose());
        if (!chosen)
            return true;
        next = *chosen;
    }
}

}  // namespace rootlock::resolve::detail
