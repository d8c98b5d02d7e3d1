// What the closure checker reports: one Problem per finding, with a kind from the JSON contract
// (docs/cli.md), a severity, and the kind's fields as ordered JSON so that the CLI can print
// both the machine form and the human form from one value.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace rootlock::check {

enum class Severity : uint8_t { error, warning };

struct Problem {
    std::string kind;  // "missing-soname", "missing-version", ...
    Severity severity = Severity::error;
    nlohmann::ordered_json fields;  // the kind's fields, in contract order
};

std::string_view severity_name(Severity severity);

// The whole problem as the JSON contract spells it: kind, severity, then the fields.
nlohmann::ordered_json to_json(const Problem& problem);

// Sorts problems by kind (what stops a program first, hazards last), errors before warnings,
// then by their serialised fields, so output never depends on the order objects were visited.
void sort_problems(std::vector<Problem>& problems);

}  // namespace rootlock::check
