// `rootlock freeze VENV`: a lock of what a live environment holds (lock/freeze.hpp), every
// RECORD verified; a damaged environment is not called known-good unless --allow-damaged.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "freeze/dpkg_freeze.hpp"
#include "freeze/freeze.hpp"
#include "freeze/freeze_match.hpp"
#include "pylock/pylock.hpp"
#include "python/environment.hpp"
#include "util/atomic_file.hpp"
#include "util/json_text.hpp"

namespace rootlock::cli {

namespace {

struct FreezeCliOptions {
    std::string venv;
    std::string root = "/";
    std::string output;                // empty: the lock goes to stdout
    std::vector<std::string> indexes;  // --index: match each distribution to its wheel
    std::string cache_dir;
    bool offline = false;
    std::string base_from;  // a lock whose base (and CUDA target) the frozen lock takes
    bool allow_damaged = false;
    bool without_os = false;  // --no-debian: the venv only, even on a root with dpkg
    bool json = false;
    int jobs = 2;
};

std::string summary(const freeze::FreezeResult& result, const std::string& venv) {
    const pylock::LockTarget& target = result.lock.rootlock->target;
    std::string where = target.python_full.empty() ? target.python : target.python_full;
    if (!target.glibc.empty())
        where += ", glibc " + target.glibc;
    if (!target.arch.empty())
        where += ", " + target.arch;
    return fmt::format("froze {} distributions from {} (Python {}): {} files, {:.1f} MB verified",
                       result.lock.packages.size(), venv, where, result.files_hashed,
                       static_cast<double>(result.bytes_hashed) / 1e6);
}

int run_freeze_command(const FreezeCliOptions& options) {
    if (options.json && options.output.empty())
        return fail_usage("--json needs -o LOCK: stdout carries the JSON");
    auto tree = open_root(options.root);
    if (!tree.ok())
        return fail_usage(tree.error().text());
    freeze::FreezeOptions freeze_options;
    freeze_options.venv = options.venv;
    freeze_options.threads = options.jobs;
    auto result = freeze::freeze_environment(**tree, freeze_options);
    if (!result.ok())
        return fail_usage(result.error().text());
    if (!options.indexes.empty()) {
        auto found = python::find_environments(**tree, {options.venv});
        if (!found.ok() || found->size() != 1)
            return fail_usage(options.venv + ": the environment cannot be read again");
        freeze::MatchOptions match;
        match.index_urls = options.indexes;
        match.cache_dir = options.cache_dir.empty() ? default_cache_dir() : options.cache_dir;
        match.offline = options.offline;
        match.http.user_agent = std::string("rootlock/") + ROOTLOCK_VERSION;
        auto matched = freeze::match_wheels(*result, found->front(), match);
        if (!matched.ok()) {
            if (util::exits_as_io(matched.error()))
                return fail_io(matched.error().text());
            return fail_usage(matched.error().text());
        }
        for (const auto& note : matched->notes)
            result->notes.push_back(note);
        result->notes.push_back(fmt::format(
            "{} of {} distributions matched to the exact wheel they were installed from",
            matched->matched.size(), result->lock.packages.size()));
    }
    if (!options.base_from.empty()) {
        // The venv's own root cannot say which tarball it was unpacked from: the lock it was
        // built from can, and with that base the frozen lock can be built again.
        // Only its base is taken, nothing is installed from it: an artifact with uv's
        // `hashes = {}` is a warning here (build still refuses the lock).
        auto read = pylock::read_pylock_file_lenient(options.base_from);
        if (!read.ok())
            return fail_usage(read.error().text());
        for (const auto& warning : read->warnings)
            fmt::print(stderr, "{} {}\n", Style(stderr).yellow("warning:"), warning);
        const auto other = &read->lock;
        if (!other->rootlock || other->rootlock->base.kind.empty())
            return fail_usage(options.base_from + ": has no [tool.rootlock.base] to take");
        pylock::LockRootlockData& data = *result->lock.rootlock;
        const pylock::LockRootlockData& from = *other->rootlock;
        data.base = from.base;
        data.target.cuda = from.target.cuda;
        data.target.driver = from.target.driver;
        data.target.torch = from.target.torch;
        data.target.gpus = from.target.gpus;
        data.host_provides = from.host_provides;
        data.source_date_epoch = from.source_date_epoch;
        data.image_name = from.image_name;
    }
    if (options.base_from.empty() && !options.without_os &&
        (*tree)->lstat("/var/lib/dpkg/status").has_value()) {
        // The root's own OS layer: its dpkg database, verified as debsums does, and pinned
        // against the archives its apt sources name, so the frozen lock rebuilds the base.
        auto dpkg = freeze::freeze_dpkg(**tree, options.jobs);
        if (!dpkg.ok())
            return fail_usage(dpkg.error().text());
        for (const auto& problem : dpkg->problems)
            result->problems.push_back(problem);
        freeze::DebMatchOptions match;
        match.cache_dir = options.cache_dir.empty() ? default_cache_dir() : options.cache_dir;
        match.offline = options.offline;
        match.http.user_agent = std::string("rootlock/") + ROOTLOCK_VERSION;
        auto base = freeze::match_debs(**tree, *dpkg, match);
        if (base.ok()) {
            result->lock.rootlock->base = std::move(*base);
            result->notes.push_back(fmt::format(
                "{} Debian packages ({} files verified against their .md5sums) pinned from {}",
                dpkg->installed.size(), dpkg->files_checked,
                result->lock.rootlock->base.archives.front().url));
        } else {
            // The venv still freezes; the lock says plainly that it cannot rebuild the base.
            result->notes.push_back(
                fmt::format("the Debian base is not pinned ({} packages, {} files verified): {}",
                            dpkg->installed.size(), dpkg->files_checked, base.error().text()));
        }
    }
    const bool damaged = !result->problems.empty();
    if (damaged) {
        // Recorded in the lock when it is written anyway, so nobody mistakes it for known-good.
        for (const auto& problem : result->problems)
            result->lock.rootlock->problems.push_back(
                {"record-mismatch", problem.distribution, problem.path + ": " + problem.problem});
        result->lock.rootlock->closure_ok = false;
    }
    Style style(stderr);
    if (options.json) {
        nlohmann::ordered_json out;
        out["venv"] = options.venv;
        out["distributions"] = result->lock.packages.size();
        out["files_hashed"] = result->files_hashed;
        out["bytes_hashed"] = result->bytes_hashed;
        out["problems"] = nlohmann::json::array();
        for (const auto& problem : result->problems)
            out["problems"].push_back({{"distribution", problem.distribution},
                                       {"path", problem.path},
                                       {"problem", problem.problem}});
        out["notes"] = result->notes;
        out["written"] = !damaged || options.allow_damaged;
        fmt::print("{}\n", util::json_text(out, 2));
    } else {
        for (const auto& note : result->notes)
            fmt::print(stderr, "{} {}\n", style.yellow("note:"), note);
        for (const auto& problem : result->problems)
            fmt::print(stderr, "{} {}: {}: {}\n", style.red("damaged:"), problem.distribution,
                       problem.path, problem.problem);
        fmt::print(stderr, "{}\n", summary(*result, options.venv));
    }
    if (damaged && !options.allow_damaged) {
        if (!options.json)
            fmt::print(stderr,
                       "{} files differ from their RECORD or .md5sums: no lock written "
                       "(--allow-damaged writes one that records them)\n",
                       result->problems.size());
        return k_exit_problems;
    }
    const std::string text = pylock::write_pylock(result->lock);
    if (options.output.empty()) {
        fmt::print("{}", text);
        return k_exit_ok;
    }
    if (auto written = util::write_file_atomically(options.output, text); !written.ok())
        return fail_usage(written.error().text());
    if (!options.json)
        fmt::print(stderr, "wrote {}\n", options.output);
    return k_exit_ok;
}

}  // namespace

void register_freeze(CLI::App& app, std::function<int()>& run) {
    auto options = std::make_shared<FreezeCliOptions>();
    CLI::App* command =
        app.add_subcommand("freeze", "Write a lock of a live environment, every RECORD verified");
    command
        ->add_option("venv", options->venv,
                     "The environment's prefix (or a site-packages), inside --root")
        ->required();
    command->add_option("--root", options->root, "The root it lives in (default: /)");
    command->add_option("-o,--output", options->output, "The lock to write (default: stdout)");
    command
        ->add_option("--index", options->indexes,
                     "Match each distribution to its wheel on this index (repeatable)")
        ->allow_extra_args(false);
    command->add_option("--cache-dir", options->cache_dir, "Download cache (as for lock)");
    command->add_flag("--offline", options->offline, "Use the cache only; no network request");
    command->add_option("--base-from", options->base_from,
                        "Take the base (and CUDA target) from this lock, so the frozen one builds");
    command->add_flag("--no-debian", options->without_os,
                      "Freeze the environment only, not the root's Debian packages");
    command->add_flag("--allow-damaged", options->allow_damaged,
                      "Write the lock even when files differ from their RECORD (recorded in it)");
    command->add_flag("--json", options->json, "Print the outcome as JSON (needs -o)");
    command->add_option("-j,--jobs", options->jobs, "Hashing threads (default: 2)")
        ->check(CLI::Range(1, 64));
    command->callback(
        [options, &run] { run = [options] { return run_freeze_command(*options); }; });
}

}  // namespace rootlock::cli
