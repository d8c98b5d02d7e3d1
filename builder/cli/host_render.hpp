// A host's GPU facts as text and as JSON: `rootlock host` prints them, `check --host-root` and
// `pct-config` put them in their own JSON reports.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "cli/common.hpp"
#include "host/host_facts.hpp"

namespace rootlock::cli {

nlohmann::ordered_json host_facts_json(const host::HostFacts& facts);
std::string render_host_facts(const host::HostFacts& facts, const Style& style);

}  // namespace rootlock::cli
