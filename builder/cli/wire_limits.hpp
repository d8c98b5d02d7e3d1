// --min-rate and --deadline, declared once for every command that downloads or uploads.
#pragma once

#include <cstdint>

#include "index/http_client.hpp"

namespace CLI {
class App;
}

namespace rootlock::cli {

struct WireLimits {
    uint64_t min_rate = 1024;  // bytes/s over each --timeout window; 0: no minimum
    double deadline = 0;       // seconds for the whole run; 0: none
};

// Adds --min-rate and --deadline to `command`, filling `limits`.
void add_wire_limit_options(CLI::App& command, WireLimits& limits);

// Sets the client's minimum rate and, when one is given, its deadline from now.
void apply_wire_limits(const WireLimits& limits, index::HttpOptions& http);

}  // namespace rootlock::cli
