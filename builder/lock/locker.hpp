// The lock pipeline: recipe -> base facts (the declared target) -> resolution over the recipe's
// indexes -> the chosen wheels downloaded and scanned -> the closure check of base plus wheels ->
// a canonical PEP 751 lock. The library decides nothing about printing or exit codes.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "check/closure_check.hpp"
#include "index/http_client.hpp"
#include "pylock/pylock.hpp"
#include "recipe/recipe.hpp"
#include "resolve/resolver.hpp"
#include "util/result.hpp"

namespace rootlock::lock {

struct LockOptions {
    std::string recipe_path;    // where the recipe is; relative tarball paths start from its folder
    std::string recipe_record;  // how the lock names it: relative to the lock's folder
    std::string recipe_text;    // its bytes (the digest is of these)
    std::string cache_dir;      // the content store, page cache, scans and bases
    bool offline = false;
    bool upgrade_all = false;
    std::set<std::string> upgrade;              // normalised names to re-resolve
    std::optional<pylock::Lock> previous;       // the existing lock: its versions are preferred
    std::optional<uint64_t> source_date_epoch;  // SOURCE_DATE_EPOCH when the user set it
    index::HttpOptions http;
    int threads = 2;
};

struct LockStats {
    size_t packages = 0;
    size_t resolver_steps = 0;
    size_t backtracks = 0;
    size_t pages_fetched = 0;
    size_t pages_revalidated = 0;
    size_t pages_from_cache = 0;
    size_t metadata_fetched = 0;
    size_t wheels_downloaded = 0;
    size_t wheels_scanned = 0;
    size_t scans_from_cache = 0;
    uint64_t http_requests = 0;
    // Wall time of each step in milliseconds, for --json and the benchmark (never in the lock).
    double base_ms = 0;
    double resolve_ms = 0;
    double fetch_ms = 0;
    double check_ms = 0;
};

// A yanked wheel the resolution chose, because an exact pin selects only yanked releases.
struct YankedChoice {
    std::string name;
    std::string version;
    std::string reason;             // the index's, "" when it gave none
    std::vector<std::string> pins;  // "torch 2.8.0 requires nvidia-nccl-cu12==2.27.3"
};

struct LockOutcome {
    pylock::Lock lock;
    std::string text;           // write_pylock(lock)
    check::CheckReport report;  // the closure check of base plus wheels (CUDA findings added)
    std::vector<YankedChoice> yanked;            // by name; each also recorded in the lock
    std::vector<resolve::Downgrade> downgrades;  // direct requirements not at their newest
    LockStats stats;
    std::string
        target_summary;  // "CPython 3.11.2, glibc 2.36, x86_64, CUDA 12.8, driver 570.133.07"
};

// The indexes a recipe uses: its own, or with none, the torch build's PyTorch index (for torch,
// triton and nvidia-*) followed by the default public index.
std::vector<recipe::IndexSection> effective_indexes(const recipe::Recipe& recipe);

// The root requirements: `torch==V+cuXY` for a [torch] table, then [packages] requires.
util::Result<std::vector<std::string>> root_requirements(const recipe::Recipe& recipe);

// The sha256 of the recipe's bytes: what `lock --check` compares.
std::string recipe_digest(std::string_view recipe_text);

// Runs the whole pipeline. Errors are input errors (exit 2) or network errors (exit 3); a closure
// that fails is not an error: the outcome's report says so, and the caller decides. The recipe
// names one architecture (recipe::expand_architectures makes such recipes of one naming several;
// one naming several is an input error here).
util::Result<LockOutcome> make_lock(const recipe::Recipe& recipe, const LockOptions& options);

}  // namespace rootlock::lock
