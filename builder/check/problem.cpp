// Problem serialisation and the stable order reports print problems in.
#include "check/problem.hpp"
#include "util/json_text.hpp"

#include <algorithm>
#include <iterator>

namespace rootlock::check {

std::string_view severity_name(Severity severity) {
    return severity == Severity::error ? "error" : "warning";
}

nlohmann::ordered_json to_json(const Problem& problem) {
    nlohmann::ordered_json out;
    out["kind"] = problem.kind;
    out["severity"] = severity_name(problem.severity);
    for (const auto& [key, value] : problem.fields.items())
        out[key] = value;
    return out;
}

namespace {
// Reports lead with what stops a program from starting, then what is broken on disk, then
// hazards; kinds not listed sort after these, by name.
char kind_rank(const std::string& kind) {
    static const char* const k_order[] = {
        "missing-soname",          "missing-version",      "undefined-symbol",
        "preload-failed",          "wrong-provider",       "bad-object",
        "cuda-major-mix",          "cuda-major-mismatch",  "driver-too-old",
        "driver-library-in-image", "stubs-on-search-path", "missing-record-file",
        "broken-environment",      "unsafe-path",          "preload-only",
        "missing-dlopen",          "cuda-unloaded-major",  "shared-path"};
    for (size_t i = 0; i < std::size(k_order); ++i) {
        if (kind == k_order[i])
            return static_cast<char>('a' + i);
    }
    return 'z';
}
}  // namespace

void sort_problems(std::vector<Problem>& problems) {
    std::vector<std::pair<std::string, Problem>> keyed;
    keyed.reserve(problems.size());
    for (auto& problem : problems) {
        std::string key = std::string(1, kind_rank(problem.kind)) + problem.kind + '\n' +
                          (problem.severity == Severity::error ? "0" : "1") +
                          util::json_text(problem.fields);
        keyed.emplace_back(std::move(key), std::move(problem));
    }
    std::sort(keyed.begin(), keyed.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    problems.clear();
    for (auto& [key, problem] : keyed)
        problems.push_back(std::move(problem));
}

}  // namespace rootlock::check
