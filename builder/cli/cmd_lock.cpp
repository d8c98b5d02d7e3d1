// `rootlock lock RECIPE`: resolve the recipe for its declared target, prove the closure of base
// plus wheels, and write the PEP 751 lock atomically; `--check` only says whether the lock is
// still the recipe's. Exit codes: 0 locked, 1 closure failed or lock stale, 2 bad input, 3 network.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/report_text.hpp"
#include "lock/locker.hpp"
#include "pylock/pylock.hpp"
#include "python/metadata.hpp"
#include "recipe/recipe.hpp"
#include "util/atomic_file.hpp"
#include "util/json_text.hpp"
#include "util/quote.hpp"

namespace rootlock::cli {

namespace {

struct LockCliOptions {
    std::string recipe;
    std::string output;
    std::string cache_dir;
    bool offline = false;
    bool upgrade = false;
    std::vector<std::string> upgrade_packages;
    bool allow_broken = false;
    bool check = false;
    bool json = false;
    int jobs = 8;
    double timeout = 30;
};

// The recipe as seen from the lock's folder ("../recipes/demo.toml"), so that the lock's bytes do
// not depend on the directory rootlock ran in.
std::string recipe_relative_to_lock(const std::string& recipe, const std::string& lock) {
    std::error_code error;
    const auto recipe_path =
        std::filesystem::weakly_canonical(std::filesystem::absolute(recipe), error);
    const auto lock_dir =
        std::filesystem::weakly_canonical(std::filesystem::absolute(lock).parent_path(), error);
    if (error)
        return recipe;
    const auto relative = recipe_path.lexically_relative(lock_dir);
    return relative.empty() ? recipe : relative.generic_string();
}

// One line per yanked wheel chosen and per direct requirement that is not at its newest: a
// lock never takes a yanked file or an older version than asked in silence.
void warn_about_choices(const lock::LockOutcome& outcome) {
    for (const auto& yanked : outcome.yanked) {
        std::string pins;
        for (const auto& pin : yanked.pins)
            pins += (pins.empty() ? "" : "; ") + pin;
        fmt::print(stderr, "rootlock: warning: {} {} is yanked ({}), chosen because {}\n",
                   yanked.name, yanked.version,
                   yanked.reason.empty() ? "no reason given" : util::quote(yanked.reason),
                   pins.empty() ? "an exact pin selects it" : pins);
    }
    for (const auto& downgrade : outcome.downgrades)
        fmt::print(stderr, "rootlock: warning: {}: locked {}, not the newest {}: {}\n",
                   downgrade.name, python::to_string(downgrade.chosen),
                   python::to_string(downgrade.newest), downgrade.why);
}

void add_choices_json(nlohmann::ordered_json& out, const lock::LockOutcome& outcome) {
    out["yanked"] = nlohmann::ordered_json::array();
    for (const auto& yanked : outcome.yanked)
        out["yanked"].push_back(
            {{"name", yanked.name},
             {"version", yanked.version},
             {"reason", yanked.reason.empty() ? nlohmann::ordered_json()
                                              : nlohmann::ordered_json(yanked.reason)},
             {"required_by", yanked.pins}});
    out["downgrades"] = nlohmann::ordered_json::array();
    for (const auto& downgrade : outcome.downgrades)
        out["downgrades"].push_back({{"name", downgrade.name},
                                     {"chosen", python::to_string(downgrade.chosen)},
                                     {"newest", python::to_string(downgrade.newest)},
                                     {"why", downgrade.why}});
}

int run_lock_check(const LockCliOptions& options, const std::string& recipe_text) {
    auto text = util::read_host_file(options.output);
    if (!text.ok())
        return fail_usage(text.error().text() + " (no lock to check: run 'rootlock lock " +
                          options.recipe + "')");
    auto lock = pylock::read_pylock(*text, options.output);
    if (!lock.ok())
        return fail_usage(lock.error().text());
    if (!lock->rootlock.has_value()) {
        fmt::print(stderr, "rootlock: {} was not written by rootlock: it records no recipe\n",
                   options.output);
        return k_exit_problems;
    }
    if (lock->rootlock->recipe_sha256 != lock::recipe_digest(recipe_text)) {
        fmt::print(
            stderr,
            "rootlock: {} is stale: {} changed after it was locked (run 'rootlock lock {}')\n",
            options.output, options.recipe, options.recipe);
        return k_exit_problems;
    }
    fmt::print("{} is up to date with {}\n", options.output, options.recipe);
    return k_exit_ok;
}

int run_lock_command(const LockCliOptions& options_in) {
    LockCliOptions options = options_in;
    auto parsed = recipe::parse_recipe_file(options.recipe);
    if (!parsed.errors.empty()) {
        for (const auto& error : parsed.errors)
            fmt::print(stderr, "rootlock: {}\n", error.text());
        return k_exit_usage;
    }
    const recipe::Recipe& recipe = *parsed.recipe;
    auto recipe_text = util::read_host_file(options.recipe);
    if (!recipe_text.ok())
        return fail_usage(recipe_text.error().text());
    if (options.output.empty())
        options.output = "lockfiles/pylock." + recipe.image.name + ".toml";
    if (options.check)
        return run_lock_check(options, *recipe_text);

    lock::LockOptions lock_options;
    lock_options.recipe_path = options.recipe;
    lock_options.recipe_record = recipe_relative_to_lock(options.recipe, options.output);
    lock_options.recipe_text = *recipe_text;
    lock_options.cache_dir = options.cache_dir.empty() ? default_cache_dir() : options.cache_dir;
    lock_options.offline = options.offline;
    lock_options.upgrade_all = options.upgrade;
    for (const auto& name : options.upgrade_packages)
        lock_options.upgrade.insert(python::normalize_name(name));
    if (const char* epoch = std::getenv("SOURCE_DATE_EPOCH"); epoch != nullptr && *epoch != '\0') {
        char* end = nullptr;
        const unsigned long long value = std::strtoull(epoch, &end, 10);
        if (end == nullptr || *end != '\0')
            return fail_usage(std::string("SOURCE_DATE_EPOCH: not a number of seconds: ") + epoch);
        lock_options.source_date_epoch = value;
    }
    if (auto previous_text = util::read_host_file(options.output); previous_text.ok()) {
        auto previous = pylock::read_pylock(*previous_text, options.output);
        if (previous.ok())
            lock_options.previous = std::move(*previous);
        else
            fmt::print(stderr, "rootlock: warning: ignoring the existing lock: {}\n",
                       previous.error().text());
    }
    lock_options.http.max_parallel = options.jobs;
    lock_options.http.stall_timeout_ms = static_cast<long>(options.timeout * 1000);
    lock_options.http.user_agent = std::string("rootlock/") + ROOTLOCK_VERSION;
    const bool tty = ::isatty(2) != 0 && !options.json;
    if (tty) {
        lock_options.http.progress = [](const index::Progress& progress) {
            fmt::print(stderr, "\r\033[Kdownloading {}/{} files, {} of {}", progress.files_done,
                       progress.files_total, human_size(progress.bytes_done),
                       human_size(progress.bytes_total));
            if (progress.files_done == progress.files_total)
                fmt::print(stderr, "\r\033[K");
            std::fflush(stderr);
        };
    }

    auto outcome = lock::make_lock(recipe, lock_options);
    if (!outcome.ok())
        return fail_with(outcome.error());
    const auto& report = outcome->report;
    warn_about_choices(*outcome);
    const bool write = report.ok || options.allow_broken;
    if (write) {
        auto written = util::write_file_atomically(options.output, outcome->text);
        if (!written.ok())
            return fail_usage(written.error().text());
    }

    const auto& stats = outcome->stats;
    if (options.json) {
        nlohmann::ordered_json out;
        out["ok"] = report.ok;
        out["written"] = write;
        out["lock"] = options.output;
        out["target"] = outcome->target_summary;
        out["packages"] = stats.packages;
        out["objects"] = report.objects;
        out["problems"] = nlohmann::ordered_json::array();
        for (const auto& problem : report.problems)
            out["problems"].push_back(check::to_json(problem));
        add_choices_json(out, *outcome);
        out["stats"] = {{"resolver_steps", stats.resolver_steps},
                        {"backtracks", stats.backtracks},
                        {"pages_fetched", stats.pages_fetched},
                        {"pages_revalidated", stats.pages_revalidated},
                        {"pages_from_cache", stats.pages_from_cache},
                        {"metadata_fetched", stats.metadata_fetched},
                        {"wheels_downloaded", stats.wheels_downloaded},
                        {"wheels_scanned", stats.wheels_scanned},
                        {"scans_from_cache", stats.scans_from_cache},
                        {"http_requests", stats.http_requests}};
        out["timings_ms"] = {{"base", stats.base_ms},
                             {"resolve", stats.resolve_ms},
                             {"fetch", stats.fetch_ms},
                             {"check", stats.check_ms}};
        fmt::print("{}\n", util::json_text(out, 2));
    } else {
        Style style(stdout);
        if (!report.ok || !report.problems.empty())
            fmt::print("{}", render_report(report, recipe.image.name, style));
        if (write) {
            fmt::print("{} {} packages for {} -> {}\n",
                       report.ok ? style.green("locked") : style.yellow("locked (broken)"),
                       stats.packages, outcome->target_summary, options.output);
        } else {
            fmt::print(stderr,
                       "rootlock: no lock written: the closure check of base plus wheels failed "
                       "(--allow-broken writes it with the problems recorded)\n");
        }
    }
    return write ? k_exit_ok : k_exit_problems;
}

}  // namespace

void register_lock(CLI::App& app, std::function<int()>& run) {
    auto options = std::make_shared<LockCliOptions>();
    CLI::App* command = app.add_subcommand(
        "lock",
        "Resolve a recipe for its declared target and write its PEP 751 lock, after "
        "proving the closure of base plus wheels");
    command->add_option("recipe", options->recipe, "The recipe (TOML)")->required();
    command->add_option("-o,--output", options->output,
                        "The lock to write (default: lockfiles/pylock.<name>.toml)");
    command->add_option("--cache-dir", options->cache_dir,
                        "Download cache (default: $ROOTLOCK_CACHE_DIR, $XDG_CACHE_HOME/rootlock "
                        "or ~/.cache/rootlock)");
    command->add_flag("--offline", options->offline, "Use the cache only; no network request");
    command->add_flag("--upgrade", options->upgrade, "Ignore the versions of the existing lock");
    command->add_option("--upgrade-package", options->upgrade_packages,
                        "Re-resolve this package, keep the others (repeatable)");
    command->add_flag("--allow-broken", options->allow_broken,
                      "Write the lock even when the closure check fails, problems recorded");
    command->add_flag("--check", options->check,
                      "Only check that the lock was made from the recipe as it is now");
    command->add_flag("--json", options->json, "Print the outcome as JSON");
    command->add_option("-j,--jobs", options->jobs, "Parallel downloads (default: 8)")
        ->check(CLI::Range(1, 64));
    command
        ->add_option("--timeout", options->timeout,
                     "Seconds without data before a download fails (default: 30)")
        ->check(CLI::PositiveNumber);
    command->callback([options, &run] { run = [options] { return run_lock_command(*options); }; });
}

}  // namespace rootlock::cli
