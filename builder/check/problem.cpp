// Problem serialisation and the stable order reports print problems in.
#include "check/problem.hpp"

#include <algorithm>

namespace rootlock::check {

std::string_view severity_name(Severity severity) {
    return severity == Severity::error ? "error" : "warning";
}

nlohmann::ordered_json to_json(const Problem& problem) {
    nlohmann::ordered_json out;
    out["kind"] = problem.kind;
    out["severity"] = severity_name(problem.severity);
    for (const auto& [key, value] : problem.fields.items()) out[key] = value;
    return out;
}

void sort_problems(std::vector<Problem>& problems) {
    std::vector<std::pair<std::string, Problem>> keyed;
    keyed.reserve(problems.size());
    for (auto& problem : problems) {
        std::string key = problem.kind + '\n' + problem.fields.dump();
        keyed.emplace_back(std::move(key), std::move(problem));
    }
    std::sort(keyed.begin(), keyed.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    problems.clear();
    for (auto& [key, problem] : keyed) problems.push_back(std::move(problem));
}

}  // namespace rootlock::check
