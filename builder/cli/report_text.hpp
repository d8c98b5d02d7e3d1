// The human form of a check report: problems grouped by kind, each group headed by a count, the
// objects that need something listed under it, then the notes and a one-line verdict.
#pragma once

#include <string>

#include "check/closure_check.hpp"
#include "cli/common.hpp"

namespace rootlock::cli {

std::string render_report(const check::CheckReport& report, const std::string& root,
                          const Style& style);

}  // namespace rootlock::cli
