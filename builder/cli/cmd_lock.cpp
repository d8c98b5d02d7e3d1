// `rootlock lock RECIPE`: resolve the recipe for its declared target (one lock per architecture
// it names), prove the closure of base plus wheels, and write the PEP 751 lock atomically;
// `--check` only says whether the lock is still the recipe's. Exit codes: 0 locked, 1 closure
// failed or lock stale, 2 bad input, 3 network; over several architectures, the worst.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/report_text.hpp"
#include "cli/wire_limits.hpp"
#include "lock/locker.hpp"
#include "pylock/pylock.hpp"
#include "python/metadata.hpp"
#include "recipe/recipe.hpp"
#include "recipe/recipe_architectures.hpp"
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
    WireLimits wire;
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
void warn_about_choices(const lock::LockOutcome& outcome, const std::string& tag) {
    for (const auto& yanked : outcome.yanked) {
        std::string pins;
        for (const auto& pin : yanked.pins)
            pins += (pins.empty() ? "" : "; ") + pin;
        fmt::print(stderr, "rootlock: warning: {}{} {} is yanked ({}), chosen because {}\n", tag,
                   yanked.name, yanked.version,
                   yanked.reason.empty() ? "no reason given" : util::quote(yanked.reason),
                   pins.empty() ? "an exact pin selects it" : pins);
    }
    for (const auto& downgrade : outcome.downgrades)
        fmt::print(stderr, "rootlock: warning: {}{}: locked {}, not the newest {}: {}\n", tag,
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

// One lock to make: the recipe of one architecture and the lock's path.
struct LockJob {
    const recipe::Recipe* recipe = nullptr;
    std::string architecture;  // "" when the recipe names one: its messages then name none
    std::string output;
};

// A message about one architecture of several starts with it: "arm64: ...".
std::string tagged(const LockJob& job, const std::string& message) {
    return job.architecture.empty() ? message : job.architecture + ": " + message;
}

int fail_job(const LockJob& job, const util::Error& error) {
    const std::string text = tagged(job, error.text());
    return util::exits_as_io(error) ? fail_io(text) : fail_usage(text);
}

// The locks of a recipe: one at `output` (or the default path), or with several architectures
// one per architecture, "-ARCH" in each path, in the recipe's order.
std::vector<LockJob> lock_jobs(const std::vector<recipe::Recipe>& recipes,
                               const std::string& output) {
    const std::string path =
        output.empty() ? default_lock_path(recipes.front().image.name) : output;
    std::vector<LockJob> jobs;
    for (const auto& recipe : recipes) {
        LockJob job;
        job.recipe = &recipe;
        job.output = path;
        if (recipes.size() > 1) {
            job.architecture = recipe.base.debian->architecture;
            job.output = lock_path_for_architecture(path, job.architecture);
        }
        jobs.push_back(std::move(job));
    }
    return jobs;
}

int run_lock_check(const LockCliOptions& options, const LockJob& job,
                   const std::string& recipe_text) {
    auto text = util::read_host_file(job.output);
    if (!text.ok())
        return fail_usage(tagged(job, text.error().text() +
                                          " (no lock to check: run 'rootlock lock " +
                                          options.recipe + "')"));
    auto lock = pylock::read_pylock(*text, job.output);
    if (!lock.ok())
        return fail_usage(tagged(job, lock.error().text()));
    if (!lock->rootlock.has_value()) {
        fmt::print(stderr, "rootlock: {}\n",
                   tagged(job, job.output + " was not written by rootlock: it records no recipe"));
        return k_exit_problems;
    }
    if (lock->rootlock->recipe_sha256 != lock::recipe_digest(recipe_text)) {
        fmt::print(stderr, "rootlock: {}\n",
                   tagged(job, fmt::format("{} is stale: {} changed after it was locked (run "
                                           "'rootlock lock {}')",
                                           job.output, options.recipe, options.recipe)));
        return k_exit_problems;
    }
    fmt::print("{} is up to date with {}\n", job.output, options.recipe);
    return k_exit_ok;
}

nlohmann::ordered_json outcome_json(const LockJob& job, const lock::LockOutcome& outcome,
                                    bool written) {
    const auto& report = outcome.report;
    const auto& stats = outcome.stats;
    nlohmann::ordered_json out;
    if (!job.architecture.empty())
        out["architecture"] = job.architecture;
    out["ok"] = report.ok;
    out["written"] = written;
    out["lock"] = job.output;
    out["target"] = outcome.target_summary;
    out["packages"] = stats.packages;
    out["objects"] = report.objects;
    out["problems"] = nlohmann::ordered_json::array();
    for (const auto& problem : report.problems)
        out["problems"].push_back(check::to_json(problem));
    add_choices_json(out, outcome);
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
    return out;
}

// One architecture's lock made, written when the closure holds, and reported. With `collected`
// (--json over several architectures) the JSON goes there, an error as {"error": ...}, and the
// caller prints them all as one array.
int run_one_lock(const LockCliOptions& options, const LockJob& job, lock::LockOptions lock_options,
                 nlohmann::ordered_json* collected) {
    auto fail = [&](const util::Error& error) {
        if (collected != nullptr)
            *collected = {{"architecture", job.architecture},
                          {"ok", false},
                          {"written", false},
                          {"lock", job.output},
                          {"error", error.text()}};
        return fail_job(job, error);
    };
    lock_options.recipe_record = recipe_relative_to_lock(options.recipe, job.output);
    if (auto previous_text = util::read_host_file(job.output); previous_text.ok()) {
        auto previous = pylock::read_pylock(*previous_text, job.output);
        if (previous.ok())
            lock_options.previous = std::move(*previous);
        else
            fmt::print(stderr, "rootlock: warning: {}\n",
                       tagged(job, "ignoring the existing lock: " + previous.error().text()));
    }
    const recipe::Recipe& recipe = *job.recipe;
    auto outcome = lock::make_lock(recipe, lock_options);
    if (!outcome.ok())
        return fail(outcome.error());
    const auto& report = outcome->report;
    warn_about_choices(*outcome, job.architecture.empty() ? "" : job.architecture + ": ");
    const bool write = report.ok || options.allow_broken;
    if (write) {
        auto written = util::write_file_atomically(job.output, outcome->text);
        if (!written.ok())
            return fail(written.error());
    }

    if (options.json) {
        nlohmann::ordered_json out = outcome_json(job, *outcome, write);
        if (collected != nullptr)
            *collected = std::move(out);
        else
            fmt::print("{}\n", util::json_text(out, 2));
    } else {
        Style style(stdout);
        const std::string name = job.architecture.empty()
                                     ? recipe.image.name
                                     : recipe.image.name + " (" + job.architecture + ")";
        if (!report.ok || !report.problems.empty())
            fmt::print("{}", render_report(report, name, style));
        if (write) {
            fmt::print("{} {} packages for {} -> {}\n",
                       report.ok ? style.green("locked") : style.yellow("locked (broken)"),
                       outcome->stats.packages, outcome->target_summary, job.output);
        } else {
            fmt::print(stderr, "rootlock: {}\n",
                       tagged(job,
                              "no lock written: the closure check of base plus wheels "
                              "failed (--allow-broken writes it with the problems "
                              "recorded)"));
        }
    }
    return write ? k_exit_ok : k_exit_problems;
}

int run_lock_command(const LockCliOptions& options) {
    auto parsed = recipe::parse_recipe_file(options.recipe);
    if (!parsed.errors.empty()) {
        for (const auto& error : parsed.errors)
            fmt::print(stderr, "rootlock: {}\n", error.text());
        return k_exit_usage;
    }
    auto recipe_text = util::read_host_file(options.recipe);
    if (!recipe_text.ok())
        return fail_usage(recipe_text.error().text());
    const std::vector<recipe::Recipe> recipes = recipe::expand_architectures(*parsed.recipe);
    const std::vector<LockJob> jobs = lock_jobs(recipes, options.output);
    // Every architecture is tried; the exit code is the worst (0 < 1 < 2 < 3).
    int worst = k_exit_ok;
    if (options.check) {
        for (const auto& job : jobs)
            worst = std::max(worst, run_lock_check(options, job, *recipe_text));
        return worst;
    }

    lock::LockOptions lock_options;
    lock_options.recipe_path = options.recipe;
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
    lock_options.http.max_parallel = options.jobs;
    lock_options.http.stall_timeout_ms = static_cast<long>(options.timeout * 1000);
    apply_wire_limits(options.wire, lock_options.http);
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

    // --json over several architectures: one array, an object per architecture in order.
    const bool collect = options.json && jobs.size() > 1;
    nlohmann::ordered_json all = nlohmann::ordered_json::array();
    for (const auto& job : jobs) {
        nlohmann::ordered_json one;
        worst = std::max(worst, run_one_lock(options, job, lock_options, collect ? &one : nullptr));
        if (collect)
            all.push_back(std::move(one));
    }
    if (collect)
        fmt::print("{}\n", util::json_text(all, 2));
    return worst;
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
                        "The lock to write (default: lockfiles/pylock.<name>.toml; a recipe of "
                        "several architectures writes one each, -ARCH before .toml)");
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
    add_wire_limit_options(*command, options->wire);
    command->callback([options, &run] { run = [options] { return run_lock_command(*options); }; });
}

}  // namespace rootlock::cli
