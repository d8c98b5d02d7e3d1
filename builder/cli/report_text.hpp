// The human form of a check report: problems grouped by kind, each group headed by a count, the
// objects that need something listed under it, then the notes and a one-line verdict.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "check/closure_check.hpp"
#include "cli/common.hpp"

namespace rootlock::cli {

// A group's heading, its count first: "1 set of undefined symbols", "2 other problems" for a
// kind this version does not know.
std::string group_title(std::string_view kind, size_t count);

std::string render_report(const check::CheckReport& report, const std::string& root,
                          const Style& style);

}  // namespace rootlock::cli
