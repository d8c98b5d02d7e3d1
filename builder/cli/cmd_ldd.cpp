// `rootlock ldd`: what `ld.so --list FILE` would print inside the root, with how each object
// was found; text like ld.so's, or the JSON of docs/cli.md.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "check/gpu_coverage.hpp"
#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "loader/dst.hpp"
#include "loader/root_model.hpp"
#include "loader/session.hpp"
#include "loader/versions.hpp"
#include "util/json_text.hpp"

namespace rootlock::cli {

namespace {
struct LddOptions {
    std::string root = "/";
    bool json = false;
    std::string ld_library_path;
    std::string hwcaps;
    std::string platform;
    std::vector<std::string> host_provides;
    bool no_default_host_provides = false;
    std::vector<std::string> files;
};

std::string describe_via(const loader::LoadSession& session, const loader::LoadedObject& object) {
    if (object.via == loader::Via::rpath && object.via_object >= 0) {
        return "rpath of " + session.objects()[static_cast<size_t>(object.via_object)].name;
    }
    return std::string(loader::via_name(object.via));
}

int run_ldd(const LddOptions& options) {
    auto tree = open_root(options.root);
    if (!tree)
        return fail_usage(tree.error().text());
    loader::ModelOptions model_options;
    model_options.simulate_missing_cache = false;  // ld.so itself searches without a cache
    if (!options.ld_library_path.empty()) {
        model_options.ld_library_path = loader::split_path_list(options.ld_library_path, true);
    }
    model_options.overrides.hwcaps = split_list(options.hwcaps);
    if (!options.platform.empty())
        model_options.overrides.platform = options.platform;
    model_options.extra_host_provided = options.host_provides;
    model_options.no_default_host_provided = options.no_default_host_provides;
    auto model = loader::open_root_model(*tree.value(), model_options);
    if (!model)
        return fail_usage(model.error().text());

    Style style(stdout);
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    bool broken = false;
    for (const auto& file : options.files) {
        loader::LoadSession session(*model->context);
        nlohmann::ordered_json entry;
        entry["file"] = file;
        entry["loaded"] = nlohmann::ordered_json::array();
        entry["problems"] = nlohmann::ordered_json::array();
        if (!session.load_main(file, false)) {
            broken = true;
            entry["problems"].push_back(
                {{"kind", "bad-object"}, {"path", file}, {"problem", session.main_error()}});
            if (!options.json)
                fmt::print("{}:\n\t{}\n", style.bold(file), style.red(session.main_error()));
            out.push_back(entry);
            continue;
        }
        if (!options.json)
            fmt::print("{}:\n", style.bold(file));
        for (int index : session.list_order()) {
            const auto& object = session.objects()[static_cast<size_t>(index)];
            nlohmann::ordered_json item;
            item["soname"] = object.first_request;
            bool found = !object.faked && object.via != loader::Via::host_provided;
            item["path"] = found ? nlohmann::ordered_json(object.name) : nlohmann::ordered_json();
            item["via"] = loader::via_name(object.via);
            if (object.via == loader::Via::rpath && object.via_object >= 0) {
                item["via_object"] = session.objects()[static_cast<size_t>(object.via_object)].name;
            }
            if (!object.fatal.empty())
                item["error"] = object.fatal;
            // The GPU architectures its fatbin holds: what `--gpu` coverage is judged by.
            std::string architectures;
            if (found) {
                if (auto code =
                        check::device_code_of(*tree.value(), loader::canonical_of(object))) {
                    item["device_code"] = check::device_code_json(*code);
                    architectures = " [" + check::device_code_text(*code) + "]";
                }
            }
            entry["loaded"].push_back(item);
            if (object.faked) {
                broken = true;
                nlohmann::ordered_json problem;
                problem["kind"] = object.fatal.empty() ? "missing-soname" : "bad-object";
                problem["soname"] = object.first_request;
                if (!object.fatal.empty()) {
                    problem["path"] = object.fatal_path;
                    problem["problem"] = object.fatal;
                }
                problem["needed_by"] = nlohmann::ordered_json::array(
                    {object.loader >= 0 ? session.objects()[static_cast<size_t>(object.loader)].name
                                        : file});
                entry["problems"].push_back(problem);
            }
            if (options.json)
                continue;
            if (object.faked) {
                std::string why = object.fatal.empty() ? "not found" : object.fatal;
                fmt::print("\t{} => {}\n", object.first_request, style.red(why));
            } else if (object.via == loader::Via::host_provided) {
                fmt::print("\t{} => {}\n", object.first_request, style.yellow("host-provided"));
            } else if (object.first_request == object.name) {
                fmt::print("\t{} {}{}\n", object.name,
                           style.dim("(" + describe_via(session, object) + ")"), architectures);
            } else {
                fmt::print("\t{} => {} {}{}\n", object.first_request, object.name,
                           style.dim("(" + describe_via(session, object) + ")"), architectures);
            }
        }
        for (const auto& gap : loader::version_gaps(session)) {
            broken = true;
            const auto& needer = session.objects()[static_cast<size_t>(gap.object)];
            const auto& provider = session.objects()[static_cast<size_t>(gap.provider)];
            entry["problems"].push_back(
                {{"kind", "missing-version"},
                 {"soname", gap.file},
                 {"version", gap.version},
                 {"needed_by", nlohmann::ordered_json::array({needer.name})},
                 {"provider", provider.name}});
            if (!options.json) {
                fmt::print("\t{}\n",
                           style.red(fmt::format("version `{}' not found (required by {})",
                                                 gap.version, needer.name)));
            }
        }
        out.push_back(entry);
    }
    if (options.json)
        fmt::print("{}\n", util::json_text(out, 2));
    for (const auto& note : model->context->notes())
        fmt::print(stderr, "note: {}\n", note);
    for (const auto& note : model->notes)
        fmt::print(stderr, "note: {}\n", note);
    return broken ? k_exit_problems : k_exit_ok;
}
}  // namespace

void register_ldd(CLI::App& app, std::function<int()>& run) {
    auto options = std::make_shared<LddOptions>();
    CLI::App* cmd = app.add_subcommand("ldd", "What glibc would load for FILE inside the root");
    cmd->add_option("--root", options->root, "Root directory or rootfs tarball")
        ->capture_default_str();
    cmd->add_flag("--json", options->json, "Machine-readable output");
    cmd->add_option("--ld-library-path", options->ld_library_path, "Model LD_LIBRARY_PATH");
    cmd->add_option(
        "--hwcaps", options->hwcaps,
        "glibc-hwcaps levels the target CPU supports, highest first (x86-64-v3,x86-64-v2)");
    cmd->add_option("--platform", options->platform, "AT_PLATFORM of the target CPU ($PLATFORM)");
    cmd->add_option("--host-provides", options->host_provides,
                    "A soname the host supplies at run time (repeatable)")
        ->allow_extra_args(false);
    cmd->add_flag(
        "--no-default-host-provides", options->no_default_host_provides,
        "Do not count the NVIDIA driver's libraries (libcuda.so.1, ...) as host-provided");
    cmd->add_option("FILE", options->files, "Paths inside the root")->required();
    cmd->callback([options, &run] { run = [options] { return run_ldd(*options); }; });
}

}  // namespace rootlock::cli
