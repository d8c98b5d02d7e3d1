// `rootlock check`: the closure check of a root directory, tarball or OCI image, every problem at
// once, as text or as the JSON contract of docs/cli.md.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "assemble/cached_builds.hpp"
#include "check/closure_check.hpp"
#include "check/cuda_rules.hpp"
#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/container_check.hpp"
#include "cli/host_render.hpp"
#include "cli/image_input.hpp"
#include "cli/report_text.hpp"
#include "freeze/freeze.hpp"
#include "freeze/lock_verify.hpp"
#include "fs/path_resolve.hpp"
#include "gpu/compute_capability.hpp"
#include "loader/dst.hpp"
#include "pylock/pylock.hpp"
#include "util/json_text.hpp"

namespace rootlock::cli {

namespace {
struct CheckCliOptions {
    std::string root = "/";
    bool json = false;
    std::vector<std::string> without;
    std::vector<std::string> host_provides;
    bool no_default_host_provides = false;
    std::string ld_library_path;
    std::string hwcaps;
    std::vector<std::string> paths;
    std::string lock;               // --lock: verify the environment at PATH against it instead
    std::string cuda;               // --cuda X.Y: the CUDA toolkit the image targets
    std::string driver;             // --driver: the host's driver, a branch or a full release
    std::string platform;           // --image-platform: which image of a multi-arch OCI index
    bool insecure = false;          // --insecure: a docker:// registry over plain HTTP
    std::string host_root;          // --host-root: check the container as it will run on this host
    std::vector<std::string> cdi;   // --cdi: the host described by these CDI specs
    std::vector<std::string> gpus;  // --gpu X.Y: GPUs the image must run on
};

// `check --lock LOCK PATH`: the live environment at PATH against the lock, every RECORD
// verified. Exit 0 when it is what the lock says, 1 when not.
int run_lock_verification(const CheckCliOptions& options, const fs::FileTree& tree) {
    if (options.paths.size() != 1)
        return fail_usage("--lock needs exactly one PATH: the environment to verify");
    // Verifying installs nothing: uv's `hashes = {}` is a warning per artifact here.
    auto read = pylock::read_pylock_file_lenient(options.lock);
    if (!read.ok())
        return fail_usage(read.error().text());
    for (const auto& warning : read->warnings)
        fmt::print(stderr, "{} {}\n", Style(stderr).yellow("warning:"), warning);
    const pylock::Lock* lock = &read->lock;
    freeze::FreezeOptions freeze_options;
    freeze_options.venv = fs::normalize(options.paths.front());
    auto live = freeze::freeze_environment(tree, freeze_options);
    if (!live.ok())
        return fail_usage(live.error().text());
    const auto mismatches = freeze::compare_with_lock(*live, *lock);
    if (options.json) {
        nlohmann::ordered_json out;
        out["ok"] = mismatches.empty();
        out["lock"] = options.lock;
        out["environment"] = freeze_options.venv;
        out["distributions"] = live->lock.packages.size();
        out["files_verified"] = live->files_hashed;
        out["mismatches"] = nlohmann::ordered_json::array();
        for (const auto& mismatch : mismatches)
            out["mismatches"].push_back({{"distribution", mismatch.distribution},
                                         {"kind", mismatch.kind},
                                         {"detail", mismatch.detail}});
        fmt::print("{}\n", util::json_text(out, 2));
    } else {
        Style style(stdout);
        for (const auto& mismatch : mismatches)
            fmt::print("{} {}: {}\n", style.red(mismatch.kind + ":"), mismatch.distribution,
                       mismatch.detail);
        fmt::print("{} {} against {}: {} distributions, {} files verified, {}\n",
                   mismatches.empty() ? style.green("ok") : style.red("differs"),
                   freeze_options.venv, options.lock, live->lock.packages.size(),
                   live->files_hashed,
                   mismatches.empty() ? "exactly what the lock says"
                                      : std::to_string(mismatches.size()) + " mismatches");
    }
    return mismatches.empty() ? k_exit_ok : k_exit_problems;
}

int run_check_command(const CheckCliOptions& options) {
    // Both are checked before the root is read: a typo should not cost a scan.
    if (!options.cuda.empty()) {
        if (auto cuda = check::parse_cuda_target(options.cuda, ""); !cuda.ok())
            return fail_usage("--cuda: " + cuda.error().text());
    }
    if (!options.driver.empty()) {
        if (auto driver = check::parse_driver_version(options.driver); !driver.ok())
            return fail_usage("--driver: " + driver.error().text());
    }
    check::CheckOptions check_options;
    for (const auto& text : options.gpus) {
        auto capability = gpu::parse_compute_capability(text);
        if (!capability)
            return fail_usage("--gpu: " + capability.error().text());
        check_options.gpus.push_back(check::GpuTarget{*capability, "--gpu " + text});
    }
    if (!options.cdi.empty() && options.host_root.empty())
        return fail_usage("--cdi describes a host: give --host-root too (/ for this one)");
    InputOptions input_options;
    input_options.platform = options.platform;
    input_options.insecure = options.insecure;
    // A tarball or image is read once: its device code is read then, when coverage may be
    // judged (a GPU named, a host's GPUs, or --json's device_code).
    check::StreamedDeviceCode streamed;
    if (!options.gpus.empty() || !options.host_root.empty() || options.json)
        input_options.observe_elf = streamed.observer();
    auto input = open_input(options.root, input_options);
    if (!input)
        return fail_with(input.error());
    std::shared_ptr<const fs::FileTree> image(std::move(input->tree));
    if (!options.lock.empty())
        return run_lock_verification(options, *image);
    std::optional<ContainerCheck> container;
    if (!options.host_root.empty()) {
        auto opened = open_container(image, ContainerInput{options.host_root, options.cdi, true});
        if (!opened)
            return fail_with(opened.error());
        container = std::move(*opened);
    }
    const fs::FileTree& tree = container ? *container->view.tree : *image;
    check_options.device_code = options.json;
    check_options.known_device_code = streamed.found();
    if (!options.paths.empty()) {
        check_options.paths.clear();
        for (const auto& path : options.paths)
            check_options.paths.push_back(fs::normalize(path));
    }
    check_options.without = options.without;
    check_options.model.extra_host_provided = options.host_provides;
    check_options.model.no_default_host_provided = options.no_default_host_provides;
    if (!options.ld_library_path.empty()) {
        check_options.model.ld_library_path =
            loader::split_path_list(options.ld_library_path, true);
    }
    check_options.model.overrides.hwcaps = split_list(options.hwcaps);
    check_options.cuda = options.cuda;
    check_options.driver = options.driver;
    if (container)
        apply_host_to_check(container->facts, check_options);
    auto report = check::run_check(tree, check_options);
    if (!report)
        return fail_usage(report.error().text());
    for (auto& note : streamed.notes())
        report->notes.push_back(std::move(note));
    if (container) {
        add_host_problems(container->facts, *report);
        report->notes.insert(report->notes.end(), container->view.notes.begin(),
                             container->view.notes.end());
    }

    for (auto& problem : check::tree_problems(tree)) {
        report->problems.push_back(std::move(problem));
        report->ok = false;
    }
    // Which torch an extension was built against, when rootlock has scanned that torch before.
    assemble::add_cached_builds(default_cache_dir(), report->problems);
    check::sort_problems(report->problems);

    if (options.json) {
        nlohmann::ordered_json out;
        out["ok"] = report->ok;
        out["objects"] = report->objects;
        out["symbols"] = report->symbols;
        out["root"] = options.root;
        out["problems"] = nlohmann::ordered_json::array();
        for (const auto& problem : report->problems)
            out["problems"].push_back(check::to_json(problem));
        out["notes"] = report->notes;
        if (!options.without.empty())
            out["without_hidden"] = report->without_hidden.size();
        out["device_code"] = nlohmann::ordered_json::object();
        for (const auto& [path, code] : report->device_code)
            out["device_code"][path] = check::device_code_json(code);
        if (container)
            out["host"] = host_facts_json(container->facts);
        fmt::print("{}\n", util::json_text(out, 2));
    } else {
        fmt::print("{}", render_report(report.value(), options.root, Style(stdout)));
    }
    return report->ok ? k_exit_ok : k_exit_problems;
}
}  // namespace

void register_check(CLI::App& app, std::function<int()>& run) {
    auto options = std::make_shared<CheckCliOptions>();
    CLI::App* cmd = app.add_subcommand(
        "check", "Prove that every ELF object finds every library and symbol version it needs");
    cmd->add_option("--root", options->root,
                    "Root directory, rootfs tarball or OCI image (layout or archive, "
                    "PATH:REF or PATH@sha256:DIGEST)")
        ->capture_default_str();
    cmd->add_flag("--insecure", options->insecure,
                  "A docker:// root's registry over plain HTTP (no TLS)");
    cmd->add_option("--image-platform", options->platform,
                    "The image of a multi-arch OCI index to check (default linux/amd64)");
    cmd->add_flag("--json", options->json, "Machine-readable report");
    cmd->add_option("--without", options->without,
                    "Check as if DIST were uninstalled the way pip does it (repeatable)")
        ->allow_extra_args(false);
    cmd->add_option(
           "--host-provides", options->host_provides,
           "A soname the host supplies at run time, beyond the NVIDIA driver's (repeatable)")
        ->allow_extra_args(false);
    cmd->add_flag(
        "--no-default-host-provides", options->no_default_host_provides,
        "Do not count the NVIDIA driver's libraries (libcuda.so.1, ...) as host-provided");
    cmd->add_option("--ld-library-path", options->ld_library_path,
                    "Model an LD_LIBRARY_PATH set in the container");
    cmd->add_option("--hwcaps", options->hwcaps, "glibc-hwcaps levels the target CPU supports");
    cmd->add_option("--cuda", options->cuda,
                    "The CUDA toolkit the image targets (X.Y): every CUDA library must be of "
                    "its major");
    cmd->add_option("--driver", options->driver,
                    "The host's NVIDIA driver (580 or 580.65.06): new enough for the CUDA "
                    "found, and the only driver libraries the image may carry");
    cmd->add_option("--lock", options->lock,
                    "Verify the environment at PATH against this lock instead (missing, extra "
                    "and other versions; files that differ from RECORD)");
    cmd->add_option("--host-root", options->host_root,
                    "Check the container as it will run on this host (a directory laid out as "
                    "one, or /): its driver's files injected, its GPUs' architectures");
    cmd->add_option("--cdi", options->cdi,
                    "A CDI spec describing the host (repeatable; default: the host's own)")
        ->allow_extra_args(false);
    cmd->add_option("--gpu", options->gpus,
                    "A GPU (compute capability X.Y) every library's device code must run on "
                    "(repeatable)")
        ->allow_extra_args(false);
    cmd->add_option("PATH", options->paths, "Paths inside the root to check (default: all of it)");
    cmd->callback([options, &run] { run = [options] { return run_check_command(*options); }; });
}

}  // namespace rootlock::cli
