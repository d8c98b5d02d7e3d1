// Running a helper program (mmdebstrap) without a shell: argv as given, extra environment
// variables, stdout and stderr captured (bounded) for the one-line message a failure needs.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "util/result.hpp"

namespace rootlock::util {

struct ProcessResult {
    int exit_code = 0;   // the exit status, or 128 + signal
    std::string output;  // stdout and stderr interleaved, the last 64 KiB
};

// Runs argv[0] (searched in PATH) with the current environment plus `environment`. An error only
// when it could not be started at all ("mmdebstrap: not found; install it with apt-get").
Result<ProcessResult> run_process(
    const std::vector<std::string>& argv,
    const std::vector<std::pair<std::string, std::string>>& environment);

// The last non-empty line of `output`, for one-line messages.
std::string last_line(const std::string& output);

}  // namespace rootlock::util
