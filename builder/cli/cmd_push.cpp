// `rootlock push IMAGE REF`: an OCI layout or archive into a registry (registry/push.hpp),
// progress on a terminal, one summary line or the --json contract of docs/cli.md.
#include <unistd.h>

#include <cstdio>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/wire_limits.hpp"
#include "registry/credentials.hpp"
#include "registry/image_reference.hpp"
#include "registry/push.hpp"
#include "util/json_text.hpp"

namespace rootlock::cli {

namespace {

struct PushCliOptions {
    std::string image;
    std::string reference;
    std::string select;  // --image: which image of the layout
    bool insecure = false;
    bool json = false;
    std::string authfile;
    std::vector<std::string> mount_from;
    uint64_t chunk_mib = 64;
    int retries = 4;
    double timeout = 30;
    WireLimits wire;
    std::string cache_dir;
};

const char* outcome_name(registry::BlobOutcome outcome) {
    switch (outcome) {
        case registry::BlobOutcome::present:
            return "present";
        case registry::BlobOutcome::mounted:
            return "mounted";
        case registry::BlobOutcome::uploaded:
            return "uploaded";
    }
    return "present";
}

int run_push_command(const PushCliOptions& options) {
    auto reference = registry::parse_image_reference(options.reference);
    if (!reference)
        return fail_usage(reference.error().text());
    auto source = oci::ImageSource::open(options.image);
    if (!source)
        return fail_usage(source.error().text());
    auto credentials =
        registry::find_credentials(registry::CredentialSources::from_environment(options.authfile),
                                   reference->host, reference->name);
    if (!credentials)
        return fail_usage(credentials.error().text());

    index::HttpOptions http;
    http.user_agent = std::string("rootlock/") + ROOTLOCK_VERSION;
    http.retries = options.retries;
    http.stall_timeout_ms = static_cast<long>(options.timeout * 1000);
    apply_wire_limits(options.wire, http);
    index::HttpClient client(http);
    registry::RegistryOptions registry_options;
    registry_options.insecure = options.insecure;
    registry_options.chunk_size = options.chunk_mib << 20;
    registry_options.upload_attempts = options.retries + 1;
    registry_options.credentials = *credentials;
    registry::RegistryClient registry_client(client, *reference, registry_options);

    registry::PushOptions push_options;
    push_options.image = options.select;
    push_options.mount_from = options.mount_from;
    push_options.record_dir =
        (options.cache_dir.empty() ? default_cache_dir() : options.cache_dir) + "/registry";
    const bool tty = ::isatty(2) != 0 && !options.json;
    if (tty) {
        push_options.progress = [](const registry::PushProgress& progress) {
            fmt::print(stderr, "\r\033[Kpushing {}/{} blobs, {} of {} sent", progress.blobs_done,
                       progress.blobs_total, human_size(progress.bytes_sent),
                       human_size(progress.bytes_total));
            if (progress.blobs_done == progress.blobs_total)
                fmt::print(stderr, "\r\033[K");
            std::fflush(stderr);
        };
    }
    auto pushed = registry::push_image(*source, registry_client, push_options);
    if (!pushed)
        return fail_with(pushed.error());

    size_t counts[3] = {0, 0, 0};
    for (const auto& blob : pushed->blobs)
        ++counts[static_cast<int>(blob.outcome)];
    if (options.json) {
        nlohmann::ordered_json out;
        out["reference"] = pushed->reference;
        out["digest"] = pushed->manifest_digest;
        out["uploaded"] = counts[static_cast<int>(registry::BlobOutcome::uploaded)];
        out["mounted"] = counts[static_cast<int>(registry::BlobOutcome::mounted)];
        out["skipped"] = counts[static_cast<int>(registry::BlobOutcome::present)];
        out["bytes_uploaded"] = pushed->bytes_uploaded;
        out["requests"] = pushed->requests;
        out["blobs"] = nlohmann::ordered_json::array();
        for (const auto& blob : pushed->blobs) {
            nlohmann::ordered_json item;
            item["digest"] = blob.descriptor.digest;
            item["media_type"] = blob.descriptor.media_type;
            item["size"] = blob.descriptor.size;
            item["outcome"] = outcome_name(blob.outcome);
            if (!blob.mounted_from.empty())
                item["mounted_from"] = blob.mounted_from;
            out["blobs"].push_back(item);
        }
        out["artifacts"] = nlohmann::ordered_json::array();
        for (const auto& artifact : pushed->artifacts)
            out["artifacts"].push_back(artifact.digest);
        if (!pushed->referrers_tag.empty())
            out["referrers_tag"] = pushed->referrers_tag;
        fmt::print("{}\n", util::json_text(out, 2));
        return k_exit_ok;
    }
    Style style(stdout);
    fmt::print("{} {}@{}: {} blobs, {} uploaded ({}), {} already there, {} mounted{}\n",
               style.green("pushed"), pushed->reference, pushed->manifest_digest,
               pushed->blobs.size(), counts[static_cast<int>(registry::BlobOutcome::uploaded)],
               human_size(pushed->bytes_uploaded),
               counts[static_cast<int>(registry::BlobOutcome::present)],
               counts[static_cast<int>(registry::BlobOutcome::mounted)],
               pushed->artifacts.empty()
                   ? std::string()
                   : fmt::format(", {} artifact{} attached", pushed->artifacts.size(),
                                 pushed->artifacts.size() == 1 ? "" : "s"));
    return k_exit_ok;
}

}  // namespace

void register_push(CLI::App& app, std::function<int()>& run) {
    auto options = std::make_shared<PushCliOptions>();
    CLI::App* command = app.add_subcommand(
        "push", "Push an OCI image (layout or archive) to a registry, sending only what it lacks");
    command->add_option("image", options->image, "An OCI layout directory or an .oci.tar archive")
        ->required();
    command
        ->add_option("reference", options->reference,
                     "host[:port]/name[:tag] or docker://host[:port]/name[:tag]")
        ->required();
    command->add_option("--image", options->select,
                        "Which image of the layout: its ref.name or manifest digest");
    command->add_flag("--insecure", options->insecure, "Plain HTTP (no TLS) to the registry");
    command->add_option("--authfile", options->authfile,
                        "Credentials file (auth.json or docker config.json)");
    command->add_option("--mount-from", options->mount_from,
                        "A repository of the same registry to mount blobs from (repeatable)");
    command
        ->add_option("--chunk-size", options->chunk_mib,
                     "MiB: bigger blobs are sent in chunks of this size (default 64)")
        ->check(CLI::Range(1, 4096));
    command->add_option("--retries", options->retries, "Attempts after a failure (default 4)")
        ->check(CLI::Range(0, 20));
    command
        ->add_option("--timeout", options->timeout,
                     "Seconds without progress before an attempt fails (default 30)")
        ->check(CLI::PositiveNumber);
    add_wire_limit_options(*command, options->wire);
    command->add_option("--cache-dir", options->cache_dir,
                        "Where pushes are remembered for mounts (default: the download cache)");
    command->add_flag("--json", options->json, "Print the outcome as JSON");
    command->callback([options, &run] { run = [options] { return run_push_command(*options); }; });
}

}  // namespace rootlock::cli
