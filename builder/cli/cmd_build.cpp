// `rootlock build LOCK|RECIPE`: the image for a lock (a recipe means its lock, one per
// architecture it names, each up to date), with its sha256, SBOM and check report beside it.
// Exit codes: 0 built, 1 the closure check failed (no image), 2 bad input or pct would refuse the
// image, 3 network; over several architectures, the worst.
#include <unistd.h>
#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <optional>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/report_text.hpp"
#include "image/image_build.hpp"
#include "lock/locker.hpp"
#include "pylock/pylock.hpp"
#include "recipe/recipe.hpp"
#include "recipe/recipe_architectures.hpp"
#include "util/atomic_file.hpp"
#include "util/json_text.hpp"

namespace rootlock::cli {

namespace {

struct BuildCliOptions {
    std::string input;
    std::string output;
    std::string cache_dir;
    bool offline = false;
    bool allow_broken = false;
    bool json = false;
    int jobs = 2;
    std::string format;                      // "", "tarball" or "oci"
    std::string layer_compression = "gzip";  // OCI layers: gzip or zstd
};

bool has_suffix(const std::string& text, std::string_view suffix) {
    return text.size() >= suffix.size() &&
           text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The output an explicit --format asks for: "NAME.tar.zst" becomes "NAME.oci.tar" for oci.
std::string output_for_format(const std::string& output, const std::string& format) {
    const bool is_oci = has_suffix(output, ".oci.tar") || has_suffix(output, ".oci");
    if (format != "oci" || is_oci)
        return output;
    std::string stem = output;
    for (std::string_view suffix : {".tar.zst", ".tar.xz", ".tar.gz", ".tar"})
        if (has_suffix(stem, suffix)) {
            stem.resize(stem.size() - suffix.size());
            break;
        }
    return stem + ".oci.tar";
}

// On Ctrl-C or kill: the partial file goes (and an OCI build's layer files, PARTIAL.layer-N),
// the image's name never held anything partial. Only async-signal-safe calls here.
extern "C" void remove_partial_and_exit(int signal_number) {
    const char* partial = image::build_temporary_path();
    if (partial != nullptr && partial[0] != '\0') {
        ::unlink(partial);
        static char layer[4200];
        size_t length = 0;
        while (partial[length] != '\0' && length < sizeof layer - 16) {
            layer[length] = partial[length];
            ++length;
        }
        const char suffix[] = ".layer-";
        for (size_t i = 0; i + 1 < sizeof suffix; ++i)
            layer[length + i] = suffix[i];
        for (char n = '0'; n <= '9'; ++n) {
            layer[length + sizeof suffix - 1] = n;
            layer[length + sizeof suffix] = '\0';
            ::unlink(layer);
        }
    }
    ::_exit(128 + signal_number);
}

// PEP 751 makes lock-version the one required top-level key of a lock; no recipe has it. So a
// lock under any name (a frozen one written with -o) is taken for what it is.
bool looks_like_lock(const std::string& path) {
    auto text = util::read_host_file(path);
    if (!text.ok())
        return false;
    std::string_view rest = *text;
    while (!rest.empty()) {
        const size_t end = rest.find('\n');
        std::string_view line = rest.substr(0, end);
        if (line.rfind("lock-version", 0) == 0)
            return true;
        if (end == std::string_view::npos)
            break;
        rest.remove_prefix(end + 1);
    }
    return false;
}

// One image to build: a lock, and the image's path when -o named one.
struct BuildJob {
    std::string lock_path;
    std::string output;        // "" for the lock's own
    std::string architecture;  // set only for one of a recipe's several architectures
};

std::string tagged(const BuildJob& job, const std::string& message) {
    return job.architecture.empty() ? message : job.architecture + ": " + message;
}

// A recipe means its lock, which must have been made from the recipe as it is now: why the
// job's lock is not that, or nullopt.
std::optional<std::string> recipe_lock_problem(const std::string& recipe, const BuildJob& job) {
    auto recipe_text = util::read_host_file(recipe);
    auto lock_text = util::read_host_file(job.lock_path);
    if (!lock_text.ok())
        return lock_text.error().text() + " (run 'rootlock lock " + recipe + "' first)";
    auto existing = pylock::read_pylock(*lock_text, job.lock_path);
    if (!existing.ok())
        return existing.error().text();
    if (!existing->rootlock.has_value() || !recipe_text.ok() ||
        existing->rootlock->recipe_sha256 != lock::recipe_digest(*recipe_text))
        return job.lock_path + " is stale: " + recipe +
               " changed after it was locked (run 'rootlock lock " + recipe + "')";
    return std::nullopt;
}

// The images an input asks for: a lock's, or a recipe's lock's, or one per architecture of a
// recipe that names several (their locks and an -o image named with "-ARCH"). Empty when the
// recipe does not parse (the errors printed).
std::vector<BuildJob> build_jobs(const BuildCliOptions& options, bool& is_recipe) {
    is_recipe = false;
    BuildJob job;
    job.lock_path = options.input;
    job.output = options.output;
    const std::string input_name = options.input.substr(options.input.rfind('/') + 1);
    if (input_name.rfind("pylock.", 0) == 0 || looks_like_lock(options.input))
        return {job};
    is_recipe = true;
    auto parsed = recipe::parse_recipe_file(options.input);
    if (!parsed.errors.empty()) {
        for (const auto& error : parsed.errors)
            fmt::print(stderr, "rootlock: {}\n", error.text());
        return {};
    }
    job.lock_path = default_lock_path(parsed.recipe->image.name);
    const auto& debian = parsed.recipe->base.debian;
    if (!debian.has_value() || debian->architectures.size() <= 1)
        return {job};
    std::vector<BuildJob> jobs;
    for (const auto& architecture : debian->architectures) {
        BuildJob one;
        one.lock_path = lock_path_for_architecture(job.lock_path, architecture);
        if (!options.output.empty())
            one.output = recipe::image_output_for_architecture(options.output, architecture);
        one.architecture = architecture;
        jobs.push_back(std::move(one));
    }
    return jobs;
}

// One image built, reported as text or JSON; with `collected` (--json over several
// architectures) the JSON goes there and the caller prints them all as one array.
int build_one(const BuildCliOptions& options_in, const BuildJob& job,
              nlohmann::ordered_json* collected) {
    BuildCliOptions options = options_in;
    options.output = job.output;
    const std::string& lock_path = job.lock_path;
    auto fail = [&](int code, const std::string& message) {
        if (collected != nullptr)
            *collected = {
                {"architecture", job.architecture}, {"lock", lock_path}, {"error", message}};
        print_cache_damage();
        fmt::print(stderr, "rootlock: {}\n", tagged(job, message));
        return code;
    };
    auto lock = pylock::read_pylock_file(lock_path);
    if (!lock.ok())
        return fail(k_exit_usage, lock.error().text());
    if (options.output.empty() && lock->rootlock.has_value())
        options.output = lock->rootlock->output;
    if (options.output.empty())
        return fail(k_exit_usage, lock_path + ": the lock names no output; give -o IMAGE");
    options.output = output_for_format(options.output, options.format);
    if (options.format == "tarball" &&
        (has_suffix(options.output, ".oci.tar") || has_suffix(options.output, ".oci")))
        return fail(k_exit_usage, options.output + ": an OCI name, but --format tarball");

    image::BuildOptions build_options;
    build_options.lock_path = lock_path;
    build_options.output = options.output;
    build_options.cache_dir = options.cache_dir.empty() ? default_cache_dir() : options.cache_dir;
    build_options.offline = options.offline;
    build_options.allow_broken = options.allow_broken;
    build_options.threads = options.jobs;
    build_options.oci_zstd = options.layer_compression == "zstd";
    build_options.http.user_agent = std::string("rootlock/") + ROOTLOCK_VERSION;
    std::signal(SIGINT, remove_partial_and_exit);
    std::signal(SIGTERM, remove_partial_and_exit);
    std::signal(SIGHUP, remove_partial_and_exit);

    auto outcome = image::build_image(*lock, build_options);
    if (!outcome.ok())
        return fail(util::exits_as_io(outcome.error()) ? k_exit_io : k_exit_usage,
                    outcome.error().text());
    nlohmann::ordered_json report = check::summary_json(outcome->report);
    Style style(stdout);
    if (!outcome->built) {
        if (collected != nullptr) {
            *collected = {{"architecture", job.architecture}};
            collected->update(report);
        } else if (options.json)
            fmt::print("{}\n", util::json_text(report, 2));
        else
            fmt::print("{}", render_report(outcome->report, options.output, style));
        fmt::print(stderr, "rootlock: {}\n",
                   tagged(job,
                          "no image written: the closure check of the final tree failed "
                          "(--allow-broken builds it anyway)"));
        return k_exit_problems;
    }
    if (options.json) {
        nlohmann::ordered_json out;
        out["image"] = outcome->image_path;
        out["sha256"] = outcome->sha256;
        out["architecture"] = outcome->architecture;  // read from the image's /bin/sh
        if (!outcome->manifest_digest.empty()) {
            out["manifest"] = outcome->manifest_digest;
            out["layers"] = outcome->layers;
            out["layers_reused"] = outcome->layers_reused;
            out["sbom_manifest"] = outcome->sbom_digest;
        }
        out["size"] = outcome->size;
        out["entries"] = outcome->entries;
        out["compiled"] = outcome->compiled;
        if (outcome->frames > 0)
            out["frames"] = {{"written", outcome->frames},
                             {"reused", outcome->frames_reused},
                             {"cloned", outcome->frames_cloned}};
        out["unchanged"] = outcome->unchanged;
        out["sbom"] = outcome->sbom_path;
        out["check"] = report;
        if (collected != nullptr)
            *collected = std::move(out);
        else
            fmt::print("{}\n", util::json_text(out, 2));
        return k_exit_ok;
    }
    for (const auto& finding : outcome->pct)
        fmt::print("{} {}: {}\n", style.yellow("note:"), finding.path, finding.problem);
    fmt::print("{} {} ({}, {:.1f} MiB, {} entries)\n  sha256 {}\n  closure: {} ELF objects, {}\n",
               style.green("built"), outcome->image_path, outcome->architecture,
               static_cast<double>(outcome->size) / (1 << 20), outcome->entries, outcome->sha256,
               outcome->report.objects,
               outcome->report.ok ? "every library and version found" : "BROKEN (--allow-broken)");
    if (outcome->unchanged)
        fmt::print(
            "  unchanged: the image there was built from the same {} frames and is "
            "untouched since, so it was kept\n",
            outcome->frames);
    else if (outcome->frames_cloned > 0)
        fmt::print(
            "  frames: {} of {} from the cache ({} sharing its blocks, not copied), the rest "
            "compressed\n",
            outcome->frames_reused, outcome->frames, outcome->frames_cloned);
    else if (outcome->frames > 0)
        fmt::print("  frames: {} of {} copied from the cache, the rest compressed\n",
                   outcome->frames_reused, outcome->frames);
    if (outcome->compiled > 0)
        fmt::print("  bytecode: {} .pyc files, unchecked-hash (PEP 552)\n", outcome->compiled);
    fmt::print("  beside it: {}, {}, {}\n", outcome->sha256_path, outcome->sbom_path,
               outcome->report_path);
    if (!outcome->manifest_digest.empty()) {
        fmt::print("  manifest {}\n", outcome->manifest_digest);
        for (const auto& layer : outcome->layers)
            fmt::print("  layer: {}\n", layer);
        fmt::print("  layers: {} of {} copied from the cache, the rest written\n",
                   outcome->layers_reused, outcome->layers.size());
        fmt::print("  sbom artifact {} (subject: the manifest)\n", outcome->sbom_digest);
        const bool layout = has_suffix(outcome->image_path, ".oci");
        fmt::print("  inspect: skopeo inspect {}:{}\n", layout ? "oci" : "oci-archive",
                   outcome->image_path);
        return k_exit_ok;
    }
    fmt::print(
        "  on Proxmox: copy it to /var/lib/vz/template/cache/ and run\n"
        "    pct create <vmid> local:vztmpl/{} --unprivileged 1\n",
        outcome->image_path.substr(outcome->image_path.rfind('/') + 1));
    // pct takes the container's architecture from /bin/sh and runs it natively.
    if (outcome->architecture != "amd64")
        fmt::print("  pct reads {0} from /bin/sh: create it on an {0} Proxmox host\n",
                   outcome->architecture);
    return k_exit_ok;
}

int run_build_command(const BuildCliOptions& options) {
    bool is_recipe = false;
    const std::vector<BuildJob> jobs = build_jobs(options, is_recipe);
    if (jobs.empty())
        return k_exit_usage;
    // Every architecture is tried; the exit code is the worst (0 < 1 < 2 < 3).
    const bool collect = options.json && jobs.size() > 1;
    nlohmann::ordered_json all = nlohmann::ordered_json::array();
    int worst = k_exit_ok;
    for (const auto& job : jobs) {
        nlohmann::ordered_json one;
        int code = k_exit_ok;
        if (auto problem = is_recipe ? recipe_lock_problem(options.input, job) : std::nullopt) {
            if (collect)
                one = {{"architecture", job.architecture},
                       {"lock", job.lock_path},
                       {"error", *problem}};
            code = fail_usage(tagged(job, *problem));
        } else {
            code = build_one(options, job, collect ? &one : nullptr);
        }
        worst = std::max(worst, code);
        if (collect)
            all.push_back(std::move(one));
    }
    if (collect)
        fmt::print("{}\n", util::json_text(all, 2));
    return worst;
}

}  // namespace

void register_build(CLI::App& app, std::function<int()>& run) {
    auto options = std::make_shared<BuildCliOptions>();
    CLI::App* command = app.add_subcommand(
        "build", "Build the bit-reproducible rootfs image of a lock (or of a recipe's lock)");
    command->add_option("input", options->input, "A lock (pylock.NAME.toml) or a recipe")
        ->required();
    command->add_option("-o,--output", options->output,
                        "The image (.tar.zst, .tar.xz, .tar.gz, .tar; .oci.tar an OCI archive, "
                        ".oci an OCI layout directory; default: the recipe's; a recipe of "
                        "several architectures builds one each, -ARCH before the suffix)");
    command
        ->add_option("--format", options->format,
                     "tarball, or oci (the output named NAME.oci.tar unless it is .oci)")
        ->check(CLI::IsMember({"tarball", "oci"}));
    command
        ->add_option("--layer-compression", options->layer_compression,
                     "OCI layers: gzip (default; every runtime takes it) or zstd")
        ->check(CLI::IsMember({"gzip", "zstd"}));
    command->add_option("--cache-dir", options->cache_dir, "Download cache (as for lock)");
    command->add_flag("--offline", options->offline, "Use the cache only; no network request");
    command->add_flag("--allow-broken", options->allow_broken,
                      "Build even when the closure check fails");
    command->add_flag("--json", options->json, "Print the outcome as JSON");
    command->add_option("-j,--jobs", options->jobs, "Compression threads (default: 2)")
        ->check(CLI::Range(1, 64));
    command->callback([options, &run] { run = [options] { return run_build_command(*options); }; });
}

}  // namespace rootlock::cli
