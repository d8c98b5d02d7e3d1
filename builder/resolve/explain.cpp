// Words for a failed resolution: the external facts (who requires what) that the derivation of
// the final conflict used, grouped around the package whose requirements cannot all hold.
#include <fmt/format.h>
#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "resolve/solver.hpp"

namespace rootlock::resolve::detail {

namespace {

struct Group {
    size_t depender = 0;
    size_t dependee = 0;
    std::string requirement;
    std::vector<size_t> versions;  // candidate indices, newest first
    bool unmatched = false;        // no candidate of the dependee matches the requirement
};

// The requirement leaves of the derivation, in the order a depth-first walk meets them.
std::vector<size_t> leaves_of(const Graph& graph, size_t failure) {
    std::vector<size_t> leaves;
    std::vector<bool> seen(graph.incompatibilities.size(), false);
    std::vector<size_t> stack{failure};
    while (!stack.empty()) {
        const size_t id = stack.back();
        stack.pop_back();
        if (seen[id])
            continue;
        seen[id] = true;
        const auto& incompatibility = graph.incompatibilities[id];
        if (incompatibility.kind == CauseKind::derived) {
            stack.push_back(incompatibility.right);
            stack.push_back(incompatibility.left);
        } else if (incompatibility.kind == CauseKind::requirement) {
            leaves.push_back(id);
        }
    }
    return leaves;
}

std::string version_list(const Package& package, const std::vector<size_t>& versions, size_t from) {
    std::string out;
    for (size_t i = from; i < versions.size(); ++i)
        out += (i == from ? "" : ", ") + python::to_string(package.candidates[versions[i]].version);
    return out;
}

std::string available(const Package& package) {
    if (package.candidates.empty())
        return "available: none";
    std::string out = "available: ";
    for (size_t i = package.candidates.size(); i-- > 0;)
        out += python::to_string(package.candidates[i].version) +
               (package.candidates[i].yanked ? " (yanked)" : "") + (i == 0 ? "" : ", ");
    return out;
}

// The package the most groups of leaves require, preferring one that requires nothing in the
// proof (the end of the chain).
size_t conflict_package(const Graph& graph, const std::vector<Group>& groups) {
    std::map<size_t, size_t> counts;
    std::set<size_t> dependers;
    for (const auto& group : groups) {
        ++counts[group.dependee];
        dependers.insert(group.depender);
    }
    auto key = [&](size_t package) {
        // Larger is better: more groups, then a sink, then the smaller name.
        return std::make_tuple(counts[package], dependers.count(package) == 0);
    };
    size_t best = counts.begin()->first;
    for (const auto& entry : counts) {
        const size_t package = entry.first;
        if (key(package) > key(best) ||
            (key(package) == key(best) && graph.packages[package].name < graph.packages[best].name))
            best = package;
    }
    return best;
}

void render_section(const Graph& graph, const std::vector<Group>& groups, std::string& out,
                    std::set<std::string>& written) {
    auto emit = [&](const std::string& line) {
        if (written.insert(line).second)
            out += "\n  " + line;
    };
    for (const auto& group : groups) {
        const auto& depender = graph.packages[group.depender];
        std::string line =
            group.depender == 0
                ? "the recipe requires " + group.requirement
                : fmt::format("{} {} requires {}", depender.name,
                              python::to_string(depender.candidates[group.versions[0]].version),
                              group.requirement);
        if (group.unmatched)
            line += fmt::format(", which no version of {} matches ({})",
                                graph.packages[group.dependee].name,
                                available(graph.packages[group.dependee]));
        emit(line);
    }
    for (const auto& group : groups) {
        if (group.versions.size() < 2)
            continue;
        const auto& depender = graph.packages[group.depender];
        // Yanked versions that nothing pinned were never candidates: "every other" leaves them out.
        bool every = true;
        for (size_t i = 0; i < depender.candidates.size(); ++i)
            every = every && (depender.candidates[i].yanked ||
                              std::find(group.versions.begin(), group.versions.end(), i) !=
                                  group.versions.end());
        if (every)
            emit(fmt::format("and every other version of {} ({}) also requires {}", depender.name,
                             version_list(depender, group.versions, 1), group.requirement));
        else
            emit(fmt::format("and {} {} also require {}", depender.name,
                             version_list(depender, group.versions, 1), group.requirement));
    }
}

}  // namespace

std::string explain(const Graph& graph, size_t failure) {
    const auto leaves = leaves_of(graph, failure);
    if (leaves.empty())
        return "no resolution satisfies every requirement";

    // One group per (depender, dependee, requirement text): the versions that say the same.
    std::vector<Group> groups;
    for (size_t id : leaves) {
        const auto& leaf = graph.incompatibilities[id];
        auto found = std::find_if(groups.begin(), groups.end(), [&](const Group& group) {
            return group.depender == leaf.depender && group.dependee == leaf.dependee &&
                   group.requirement == leaf.requirement;
        });
        if (found == groups.end()) {
            groups.push_back(Group{leaf.depender, leaf.dependee, leaf.requirement, {}, false});
            found = groups.end() - 1;
        }
        found->versions.push_back(leaf.depender_version);
        const bool has_dependee_term =
            std::any_of(leaf.terms.begin(), leaf.terms.end(),
                        [&](const Term& term) { return term.package == leaf.dependee; });
        found->unmatched = leaf.dependee != leaf.depender && !has_dependee_term;
    }
    for (auto& group : groups) {
        std::sort(group.versions.begin(), group.versions.end());
        group.versions.erase(std::unique(group.versions.begin(), group.versions.end()),
                             group.versions.end());
    }

    // Within a section: packages by name, then the recipe.
    std::stable_sort(groups.begin(), groups.end(), [&](const Group& a, const Group& b) {
        if ((a.depender == 0) != (b.depender == 0))
            return b.depender == 0;
        if (a.depender != b.depender)
            return graph.packages[a.depender].name < graph.packages[b.depender].name;
        return a.versions.front() < b.versions.front();  // newest first
    });

    // The conflict first, then outward along the requirers: why each of them is there.
    const size_t conflict = conflict_package(graph, groups);
    std::string out =
        fmt::format("no version of {} satisfies every requirement:", graph.packages[conflict].name);
    std::set<std::string> written;
    std::vector<bool> done(groups.size(), false);
    std::vector<size_t> queue{conflict};
    std::set<size_t> queued{conflict};
    for (size_t q = 0; q < queue.size(); ++q) {
        std::vector<Group> section;
        for (size_t g = 0; g < groups.size(); ++g) {
            if (done[g] || groups[g].dependee != queue[q])
                continue;
            done[g] = true;
            section.push_back(groups[g]);
            const size_t depender = groups[g].depender;
            for (size_t next : {depender, graph.packages[depender].base})
                if (next != 0 && queued.insert(next).second)
                    queue.push_back(next);
        }
        render_section(graph, section, out, written);
    }
    std::vector<Group> rest;
    for (size_t g = 0; g < groups.size(); ++g)
        if (!done[g])
            rest.push_back(groups[g]);
    render_section(graph, rest, out, written);
    return out;
}

}  // namespace rootlock::resolve::detail
