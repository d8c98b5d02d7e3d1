// Internal to the resolver: PubGrub over finite sets of states (each candidate of a package, plus
// "not selected"), the package table that ties it to a PackageSource, and the explainer's input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "resolve/package_source.hpp"
#include "resolve/resolver.hpp"
#include "util/result.hpp"

namespace rootlock::resolve::detail {

// A subset of one package's states: bit i is its i-th newest candidate, the last bit is "not
// selected". Version sets are explicit because every candidate is known, which makes the term
// algebra of PubGrub (intersection, complement) exact for PEP 440's irregular specifiers.
class StateSet {
  public:
    StateSet() = default;
    static StateSet all(size_t versions);
    static StateSet nothing(size_t versions);
    static StateSet single(size_t versions, size_t index);

    size_t versions() const { return m_versions; }
    bool test(size_t bit) const;
    void set(size_t bit);
    bool may_be_unselected() const { return test(m_versions); }
    bool empty() const;
    bool is_all() const;
    bool subset_of(const StateSet& other) const;
    bool intersects(const StateSet& other) const;
    StateSet intersect(const StateSet& other) const;
    StateSet complement() const;
    size_t count_versions() const;
    std::vector<size_t> version_indices() const;  // ascending index: newest first
    std::optional<size_t> first_version() const;  // the newest in the set

  private:
    size_t m_versions = 0;
    std::vector<uint64_t> m_words;
};

// "package is in one of these states".
struct Term {
    size_t package = 0;
    StateSet states;
};

enum class CauseKind {
    root,         // the recipe must be selected
    requirement,  // depender at one version requires dependee (the recipe's requirements too)
    extra_base,   // foo[bar] V requires foo V
    derived,      // from two others by conflict resolution
};

// Terms that cannot all hold at once (at most one term per package, sorted by package).
struct Incompatibility {
    std::vector<Term> terms;
    CauseKind kind = CauseKind::root;
    size_t depender = 0;          // requirement, extra_base
    size_t depender_version = 0;  // candidate index
    size_t dependee = 0;
    std::string requirement;  // "tokenizers<0.22,>=0.21", without marker
    bool exact_pin = false;   // requirement: "==" without ".*", or "===" (it may admit yanked)
    size_t left = 0;          // derived: the two causes
    size_t right = 0;
};

struct Package {
    std::string name;                          // "foo", "foo[bar]", or "<recipe>" for the root
    size_t base = 0;                           // foo's id for foo[bar]; its own id otherwise
    std::string extra;                         // "" except for foo[bar]
    std::vector<CandidateVersion> candidates;  // newest first, yanked ones included
    std::vector<size_t> incompatibilities;     // ids that mention it
};

struct Graph {
    std::vector<Package> packages;  // 0 is the root
    std::vector<Incompatibility> incompatibilities;
};

// Yanked versions that an exact pin somewhere in the graph selects, by normalised project name:
// the second pass lets every requirement on such a project allow them (see resolver.hpp).
using YankPermits = std::map<std::string, std::set<std::string>>;

// The search itself: PubGrub (Natalie Weizenbaum's, as pub and uv use it) with unit propagation,
// conflict resolution that learns derived incompatibilities, and backjumping. Dependencies are
// fetched when a version is first decided and cached, so no (name, version) is asked twice.
class Solver {
  public:
    Solver(PackageSource& source, const ResolveOptions& options, YankPermits permits = {});
    // true: every required package is decided; false: failure() proves there is no solution.
    util::Result<bool> solve(const std::vector<python::Requirement>& roots);

    const Graph& graph() const { return m_graph; }
    size_t failure() const { return m_failure; }
    size_t steps() const { return m_steps; }
    size_t backtracks() const { return m_backtracks; }
    std::optional<size_t> decided(size_t package) const { return m_decided[package]; }
    // The states a requirement with these specifiers allows of a package (the pre-release and
    // yanked rules applied, see resolver.hpp); "not selected" is not among them.
    StateSet matching(size_t package, const python::SpecifierSet& specifiers) const;
    // The id of a package already in the graph ("foo", "foo[bar]").
    std::optional<size_t> find_package(const std::string& key) const;
    // The cached Requires-Dist of a base package's candidate (nullptr when never fetched).
    const std::vector<python::Requirement>* cached_dependencies(size_t package,
                                                                size_t version) const;
    const std::vector<python::Requirement>& roots() const { return m_roots; }
    // The yanked versions this solver may admit beyond its own pins, and the ones the exact pins
    // it met select (the next pass's permits).
    const YankPermits& permits() const { return m_permits; }
    const YankPermits& yank_pins() const { return m_yank_pins; }
    // Whether a decided requirement that is an exact pin selects `version` of `package` (or of
    // one of its extras): what pip asks before it takes a yanked version.
    bool pinned_by_decided(size_t package, size_t version) const;
    // pip's condition on a finished resolution: every yanked version decided has such a pin.
    bool every_yanked_choice_pinned() const;
    bool chose_yanked() const;

  private:
    struct Assignment {
        size_t package = 0;
        StateSet states;
        size_t level = 0;
        bool decision = false;
        size_t cause = 0;
    };
    enum class Relation { satisfied, almost, contradicted, inconclusive };

    // Source glue (solver_packages.cpp).
    util::Result<size_t> package_id(const std::string& name, const std::string& extra);
    util::Result<std::vector<size_t>> add_dependencies(size_t package, size_t version);
    util::Status add_requirement(size_t package, size_t version,
                                 const python::Requirement& requirement,
                                 std::vector<size_t>& added);
    util::Result<const std::vector<python::Requirement>*> fetch_dependencies(size_t package,
                                                                             size_t version);
    std::string display(size_t package, size_t version) const;
    std::optional<size_t> preferred_version(size_t package) const;
    size_t version_to_try(size_t package) const;
    void hint_prefetch(size_t chosen, size_t version);

    // PubGrub (solver.cpp).
    size_t store(Incompatibility incompatibility);
    void index(size_t id);
    Relation relation(const Incompatibility& incompatibility, size_t& unsatisfied) const;
    util::Result<bool> propagate(size_t package);
    std::optional<size_t> resolve_conflict(size_t id);
    util::Result<std::optional<size_t>> choose();
    void assign(size_t package, StateSet states, bool decision, size_t cause);
    void backtrack(size_t level);
    bool is_failure(const Incompatibility& incompatibility) const;

    PackageSource& m_source;
    const ResolveOptions& m_options;
    YankPermits m_permits;
    YankPermits m_yank_pins;
    Graph m_graph;
    std::map<std::string, size_t> m_ids;  // "foo", "foo[bar]"
    std::map<std::pair<size_t, size_t>, std::vector<python::Requirement>> m_dependencies;
    std::map<std::pair<size_t, size_t>, std::vector<size_t>> m_expanded;
    std::set<std::pair<size_t, size_t>> m_prefetched;
    std::vector<python::Requirement> m_roots;  // those whose marker holds
    std::vector<Assignment> m_assignments;
    std::vector<StateSet> m_accumulated;  // per package: every assignment intersected
    std::vector<std::optional<size_t>> m_decided;
    std::vector<std::optional<size_t>> m_hinted;  // the version last named in a prefetch hint
    size_t m_level = 0;
    size_t m_steps = 0;
    size_t m_backtracks = 0;
    size_t m_failure = 0;
};

// The resolution a solver that succeeded decided (resolver.cpp); downgrades left empty.
Resolution resolution_of(const Solver& solver, const ResolveOptions& options);

// The root requirements' projects that did not get the newest version the root requirements on
// them allow, each with why (downgrades.cpp; the rule is in resolver.hpp).
util::Result<std::vector<Downgrade>> find_downgrades(const Solver& solved,
                                                     const std::vector<python::Requirement>& roots,
                                                     PackageSource& source,
                                                     const ResolveOptions& options);

// The conflict message for a failure incompatibility (see explain.cpp).
std::string explain(const Graph& graph, size_t failure);

// True for a set pip calls pinned: a "===" clause, or "==" without ".*".
bool is_exact_pin(const python::SpecifierSet& specifiers);

// "tokenizers<0.22,>=0.21", "foo[bar]>=1": the requirement without its marker.
std::string requirement_text(const python::Requirement& requirement);

}  // namespace rootlock::resolve::detail
