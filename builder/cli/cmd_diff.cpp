// `rootlock diff A B`: two PEP 751 locks compared by meaning (diff/lock_diff.hpp), printed for a
// terminal, as JSON or as Markdown; exit 0 when they mean the same, 1 when they differ, 2 when
// either cannot be read, as diff(1) does.
#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "diff/lock_diff.hpp"
#include "pylock/pylock.hpp"

namespace rootlock::cli {

namespace {

struct DiffOptions {
    std::string before;
    std::string after;
    bool json = false;
    std::string format = "text";
};

// Read leniently: diff installs nothing, so uv's `hashes = {}` (find-links wheels) is one
// warning line per artifact on stderr, and the rest of the lock is still compared.
util::Result<pylock::Lock> read_lock(const std::string& path) {
    ROOTLOCK_TRY(read, pylock::read_pylock_file_lenient(path));
    const Style style(stderr);
    for (const auto& warning : read.warnings)
        fmt::print(stderr, "{} {}\n", style.yellow("warning:"), warning);
    return std::move(read.lock);
}

int run_diff_command(const DiffOptions& options) {
    const std::string format = options.json ? "json" : options.format;
    auto before = read_lock(options.before);
    if (!before.ok())
        return fail_usage(before.error().text());
    auto after = read_lock(options.after);
    if (!after.ok())
        return fail_usage(after.error().text());
    const diff::LockDiff diff = diff::diff_locks(*before, *after);
    if (format == "json")
        fmt::print("{}", diff::render_diff_json(diff));
    else if (format == "markdown")
        fmt::print("{}", diff::render_diff_markdown(diff));
    else
        fmt::print("{}", diff::render_diff_text(diff, Style(stdout).colour()));
    return diff.same() ? k_exit_ok : k_exit_problems;
}

}  // namespace

void register_diff(CLI::App& app, std::function<int()>& run) {
    auto options = std::make_shared<DiffOptions>();
    CLI::App* command =
        app.add_subcommand("diff", "Compare two locks by meaning (exit 0 same, 1 different)");
    command->add_option("before", options->before, "The older lock")->required();
    command->add_option("after", options->after, "The newer lock")->required();
    command->add_flag("--json", options->json, "The same as --format json");
    command->add_option("--format", options->format, "text (default), json or markdown")
        ->check(CLI::IsMember({"text", "json", "markdown"}));
    command->callback([options, &run] { run = [options] { return run_diff_command(*options); }; });
}

}  // namespace rootlock::cli
