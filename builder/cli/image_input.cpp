// open_input: the one place that tells an OCI image from a rootfs directory or tarball, so every
// command reads the same input the same way.
#include "cli/image_input.hpp"

#include <sys/stat.h>

#include "cli/common.hpp"
#include "fs/directory_tree.hpp"
#include "index/content_store.hpp"
#include "index/http_client.hpp"
#include "oci/image_select.hpp"
#include "registry/credentials.hpp"
#include "registry/image_reference.hpp"
#include "registry/pull.hpp"

namespace rootlock::cli {

namespace {

constexpr std::string_view k_registry_prefix = "docker://";

// The image at a registry reference: the manifest and blobs pulled into the content store
// (nothing already there is fetched again), then read like a layout.
util::Result<oci::OciSource> pull(const std::string& text, const oci::Platform& platform,
                                  const InputOptions& options) {
    ROOTLOCK_TRY(reference, registry::parse_image_reference(text));
    ROOTLOCK_TRY(credentials,
                 registry::find_credentials(registry::CredentialSources::from_environment(""),
                                            reference.host, reference.name));
    index::HttpOptions http_options;
    http_options.user_agent = "rootlock";
    index::HttpClient http(http_options);
    registry::RegistryOptions registry_options;
    registry_options.insecure = options.insecure;
    registry_options.credentials = credentials;
    registry_options.pull_only = true;
    registry::RegistryClient client(http, reference, registry_options);
    index::ContentStore store(options.cache_dir.empty() ? default_cache_dir() : options.cache_dir);
    return registry::pull_image(client, http, store, platform);
}

}  // namespace

bool is_image_input(const std::string& text) {
    if (text.rfind(k_registry_prefix, 0) == 0)
        return true;
    return oci::is_oci_image(oci::split_image_spec(text).path);
}

util::Result<OpenedInput> open_input(const std::string& text, const InputOptions& options) {
    OpenedInput out;
    fs::TarOptions tar_options{.symbols = options.symbols, .retained_patterns = options.retained};
    tar_options.observe_elf = options.observe_elf;
    if (is_image_input(text)) {
        oci::Platform platform;
        if (!options.platform.empty()) {
            ROOTLOCK_TRY(parsed, oci::parse_platform(options.platform));
            platform = parsed;
        }
        auto source = text.rfind(k_registry_prefix, 0) == 0
                          ? pull(text, platform, options)
                          : oci::open_oci_path(oci::split_image_spec(text), platform);
        if (!source)
            return source.error();
        ROOTLOCK_TRY(image, oci::open_oci_tree(*source, tar_options));
        out.venv = oci::env_value(image.config, "VIRTUAL_ENV");
        out.tree = std::move(image.tree);
        out.image = true;
        return out;
    }
    struct stat st {};
    if (::stat(text.c_str(), &st) != 0)
        return util::make_error(text, "no such file or directory");
    if (S_ISDIR(st.st_mode)) {
        ROOTLOCK_TRY(directory, fs::DirectoryTree::create(text));
        out.tree = std::move(directory);
        return out;
    }
    if (!S_ISREG(st.st_mode))
        return util::make_error(text, "not a directory, a tarball or an OCI image");
    ROOTLOCK_TRY(tar, fs::TarTree::open(text, tar_options));
    out.tree = std::move(tar);
    return out;
}

}  // namespace rootlock::cli
