// The wire limit options; see wire_limits.hpp.
#include "cli/wire_limits.hpp"

#include <chrono>

#include <CLI/CLI.hpp>

namespace rootlock::cli {

void add_wire_limit_options(CLI::App& command, WireLimits& limits) {
    command.add_option("--min-rate", limits.min_rate,
                       "Bytes per second a transfer must average over each --timeout window, or "
                       "it fails like a silent one (default: 1024; 0: no minimum)");
    command
        .add_option("--deadline", limits.deadline,
                    "Seconds the whole run may take on the network; past them every transfer "
                    "fails with exit 3 (default: none)")
        ->check(CLI::NonNegativeNumber);
}

void apply_wire_limits(const WireLimits& limits, index::HttpOptions& http) {
    http.min_rate = limits.min_rate;
    if (limits.deadline > 0)
        http.deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(static_cast<int64_t>(limits.deadline * 1000));
}

}  // namespace rootlock::cli
