// The subcommands: each registers its options on the CLI11 app and runs when chosen. Only this
// folder prints, reads the environment or picks an exit code.
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

namespace rootlock::cli {

// Registers the subcommand and returns where its exit code will be written when it runs.
void register_check(CLI::App& app, std::function<int()>& run);
void register_ldd(CLI::App& app, std::function<int()>& run);
void register_why(CLI::App& app, std::function<int()>& run);
void register_lock(CLI::App& app, std::function<int()>& run);
void register_build(CLI::App& app, std::function<int()>& run);
void register_diff(CLI::App& app, std::function<int()>& run);
void register_freeze(CLI::App& app, std::function<int()>& run);
void register_push(CLI::App& app, std::function<int()>& run);
void register_host(CLI::App& app, std::function<int()>& run);
void register_pct_config(CLI::App& app, std::function<int()>& run);
void register_cache(CLI::App& app, std::function<int()>& run);

}  // namespace rootlock::cli
