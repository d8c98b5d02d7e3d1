// `rootlock cache verify|du|prune`: the cache checked, measured and trimmed (cache/cache_admin).
#include <fmt/format.h>

#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>

#include "cache/cache_admin.hpp"
#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "util/json_text.hpp"

namespace rootlock::cli {

namespace {

struct CacheCliOptions {
    std::string action;
    std::string cache_dir;
    std::vector<std::string> keep;
    bool all = false;
    bool json = false;
};

std::string cache_of(const CacheCliOptions& options) {
    return options.cache_dir.empty() ? default_cache_dir() : options.cache_dir;
}

nlohmann::ordered_json usage_json(const std::vector<cache::KindUsage>& usage) {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const auto& kind : usage)
        out.push_back({{"kind", kind.kind}, {"entries", kind.entries}, {"bytes", kind.bytes}});
    return out;
}

void print_usage(const std::vector<cache::KindUsage>& usage) {
    uint64_t entries = 0;
    uint64_t bytes = 0;
    for (const auto& kind : usage) {
        fmt::print("{:8} {:>8} entries {:>12}\n", kind.kind, kind.entries, human_size(kind.bytes));
        entries += kind.entries;
        bytes += kind.bytes;
    }
    fmt::print("{:8} {:>8} entries {:>12}\n", "total", entries, human_size(bytes));
}

int run_verify(const CacheCliOptions& options) {
    const auto started = std::chrono::steady_clock::now();
    auto report = cache::verify_cache(cache_of(options));
    if (!report.ok())
        return fail_with(report.error());
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    const double rate = seconds > 0 ? static_cast<double>(report->bytes_read) / 1e6 / seconds : 0;
    if (options.json) {
        nlohmann::ordered_json out;
        out["ok"] = report->damaged.empty();
        out["checked"] = usage_json(report->checked);
        out["damaged"] = report->damaged;
        out["bytes_read"] = report->bytes_read;
        out["seconds"] = seconds;
        fmt::print("{}\n", util::json_text(out, 2));
    } else {
        print_usage(report->checked);
        for (const auto& line : report->damaged)
            fmt::print("damaged, removed: {}\n", line);
        fmt::print("{}: {} read in {:.2f} s ({:.0f} MB/s), {}\n",
                   report->damaged.empty() ? "ok" : "damaged entries removed",
                   human_size(report->bytes_read), seconds, rate,
                   report->damaged.empty() ? "every entry matches its digest"
                                           : std::to_string(report->damaged.size()) + " damaged");
    }
    return report->damaged.empty() ? k_exit_ok : k_exit_problems;
}

int run_du(const CacheCliOptions& options) {
    auto usage = cache::cache_usage(cache_of(options));
    if (!usage.ok())
        return fail_with(usage.error());
    if (options.json)
        fmt::print("{}\n", util::json_text(usage_json(*usage), 2));
    else
        print_usage(*usage);
    return k_exit_ok;
}

int run_prune(const CacheCliOptions& options) {
    if (options.keep.empty() && !options.all)
        return fail_usage(
            "cache prune: name the locks whose entries to keep (--keep LOCK, "
            "repeatable), or --all to keep none");
    std::vector<pylock::Lock> keep;
    for (const auto& path : options.keep) {
        auto lock = pylock::read_pylock_file(path);
        if (!lock.ok())
            return fail_with(lock.error());
        keep.push_back(std::move(*lock));
    }
    auto report = cache::prune_cache(cache_of(options), keep);
    if (!report.ok())
        return fail_with(report.error());
    if (options.json)
        fmt::print("{}\n", util::json_text(
                               nlohmann::ordered_json{{"removed_entries", report->removed_entries},
                                                      {"removed_bytes", report->removed_bytes}},
                               2));
    else
        fmt::print("removed {} entries, {}\n", report->removed_entries,
                   human_size(report->removed_bytes));
    return k_exit_ok;
}

}  // namespace

void register_cache(CLI::App& app, std::function<int()>& run) {
    auto options = std::make_shared<CacheCliOptions>();
    CLI::App* cmd = app.add_subcommand(
        "cache", "The download and build cache: verify every entry, show its size, prune it");
    cmd->require_subcommand(1);
    auto add_common = [&](CLI::App* sub) {
        sub->add_option("--cache-dir", options->cache_dir,
                        "The cache (default: $XDG_CACHE_HOME/rootlock, ~/.cache/rootlock)");
        sub->add_flag("--json", options->json, "Machine-readable output");
    };
    CLI::App* verify = cmd->add_subcommand(
        "verify", "Check every entry against its digest; damaged ones are named and removed");
    add_common(verify);
    verify->callback([options, &run] { run = [options] { return run_verify(*options); }; });
    CLI::App* du = cmd->add_subcommand("du", "Size of the cache by kind of entry");
    add_common(du);
    du->callback([options, &run] { run = [options] { return run_du(*options); }; });
    CLI::App* prune =
        cmd->add_subcommand("prune", "Remove what no kept lock needs (safe beside other runs)");
    add_common(prune);
    prune->add_option("--keep", options->keep, "A lock whose wheels, base and .debs stay")
        ->allow_extra_args(false);
    prune->add_flag("--all", options->all, "Keep no lock's entries");
    prune->callback([options, &run] { run = [options] { return run_prune(*options); }; });
}

}  // namespace rootlock::cli
