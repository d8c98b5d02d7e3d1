// `rootlock diff A B`: two PEP 751 locks compared by meaning (diff/lock_diff.hpp), printed for a
// terminal, as JSON or as Markdown; exit 0 when they mean the same, 1 when they differ, 2 when
// either cannot be read, as diff(1) does. A side that is a root (an OCI image, a rootfs tarball
// or directory) is read as the lock of what it holds (freeze/root_lock.hpp).
#include <sys/stat.h>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/image_input.hpp"
#include "diff/lock_diff.hpp"
#include "freeze/root_lock.hpp"
#include "pylock/pylock.hpp"
#include "util/atomic_file.hpp"

namespace rootlock::cli {

namespace {

struct DiffOptions {
    std::string before;
    std::string after;
    bool json = false;
    std::string format = "text";
    std::string platform;   // --image-platform: which image of a multi-arch OCI index
    bool insecure = false;  // --insecure: docker:// registries over plain HTTP
};

// Read leniently: diff installs nothing, so uv's `hashes = {}` (find-links wheels) is one
// warning line per artifact on stderr, and the rest of the lock is still compared.
util::Result<pylock::Lock> read_lock(const std::string& path) {
    ROOTLOCK_TRY(read, pylock::read_pylock_file_lenient(path));
    const Style style(stderr);
    for (const auto& warning : read.warnings)
        fmt::print(stderr, "{} {}\n", style.yellow("warning:"), warning);
    return std::move(read.lock);
}

// A root rather than a lock: an OCI image or docker:// reference, a directory, or a file that
// starts as a tarball does (a compressor's magic, or "ustar" at offset 257). Anything else is
// read as a lock, whatever its name (locks are not always named *.toml).
bool is_root(const std::string& path) {
    if (is_image_input(path))
        return true;
    struct stat info {};
    if (::stat(path.c_str(), &info) != 0)
        return false;
    if (S_ISDIR(info.st_mode))
        return true;
    auto head = util::read_host_file_prefix(path, 512);
    if (!head)
        return false;
    const std::string_view bytes = *head;
    for (std::string_view magic :
         {std::string_view("\x28\xb5\x2f\xfd", 4), std::string_view("\xfd\x37\x7a\x58\x5a\x00", 6),
          std::string_view("\x1f\x8b", 2), std::string_view("BZh", 3)})
        if (bytes.substr(0, magic.size()) == magic)
            return true;
    return bytes.size() >= 262 && bytes.substr(257, 5) == "ustar";
}

// A lock, or a root whose venv and dpkg database are frozen into one.
util::Result<pylock::Lock> read_side(const std::string& path, const DiffOptions& options) {
    if (!is_root(path))
        return read_lock(path);
    InputOptions input_options;
    input_options.platform = options.platform;
    input_options.insecure = options.insecure;
    input_options.symbols = false;
    input_options.retained = freeze::root_lock_patterns();
    ROOTLOCK_TRY(input, open_input(path, input_options));
    freeze::RootLockOptions lock_options;
    lock_options.venv = input.venv;
    ROOTLOCK_TRY(root, freeze::lock_of_root(*input.tree, lock_options));
    return std::move(root.lock);
}

int run_diff_command(const DiffOptions& options) {
    const std::string format = options.json ? "json" : options.format;
    auto before = read_side(options.before, options);
    if (!before.ok())
        return fail_with(before.error());
    auto after = read_side(options.after, options);
    if (!after.ok())
        return fail_with(after.error());
    const diff::LockDiff diff = diff::diff_locks(*before, *after);
    if (format == "json")
        fmt::print("{}", diff::render_diff_json(diff));
    else if (format == "markdown")
        fmt::print("{}", diff::render_diff_markdown(diff));
    else
        fmt::print("{}", diff::render_diff_text(diff, Style(stdout).colour()));
    return diff.same() ? k_exit_ok : k_exit_problems;
}

}  // namespace

void register_diff(CLI::App& app, std::function<int()>& run) {
    auto options = std::make_shared<DiffOptions>();
    CLI::App* command = app.add_subcommand("diff",
                                           "Compare two locks or images by meaning (exit 0 same, 1 "
                                           "different)");
    command->add_option("before", options->before, "The older lock (.toml) or image")->required();
    command->add_option("after", options->after, "The newer lock (.toml) or image")->required();
    command->add_flag("--insecure", options->insecure,
                      "docker:// images' registries over plain HTTP (no TLS)");
    command->add_option("--image-platform", options->platform,
                        "The image of a multi-arch OCI index (default linux/amd64)");
    command->add_flag("--json", options->json, "The same as --format json");
    command->add_option("--format", options->format, "text (default), json or markdown")
        ->check(CLI::IsMember({"text", "json", "markdown"}));
    command->callback([options, &run] { run = [options] { return run_diff_command(*options); }; });
}

}  // namespace rootlock::cli
