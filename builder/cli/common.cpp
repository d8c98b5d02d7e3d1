// Shared CLI helpers; see common.hpp.
#include "cli/common.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

#include <fmt/format.h>

#include "cli/image_input.hpp"
#include "fs/directory_tree.hpp"
#include "fs/tar_tree.hpp"
#include "util/cache_damage.hpp"

namespace rootlock::cli {

void print_cache_damage() {
    for (const auto& line : util::take_cache_damage())
        fmt::print(stderr, "rootlock: warning: {}\n", line);
}

int fail_usage(const std::string& message) {
    print_cache_damage();
    fmt::print(stderr, "rootlock: {}\n", message);
    return k_exit_usage;
}

int fail_io(const std::string& message) {
    print_cache_damage();
    fmt::print(stderr, "rootlock: {}\n", message);
    return k_exit_io;
}

int fail_with(const util::Error& error) {
    return util::exits_as_io(error) ? fail_io(error.text()) : fail_usage(error.text());
}

std::string human_size(uint64_t bytes) {
    if (bytes >= (uint64_t{1} << 30))
        return fmt::format("{:.1f} GiB", static_cast<double>(bytes) / (1 << 30));
    if (bytes >= (uint64_t{1} << 20))
        return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1 << 20));
    return fmt::format("{:.1f} KiB", static_cast<double>(bytes) / 1024);
}

util::Result<std::unique_ptr<fs::FileTree>> open_root(const std::string& root) {
    if (is_image_input(root)) {
        ROOTLOCK_TRY(input, open_input(root, {}));
        return std::move(input.tree);
    }
    struct stat st {};
    if (::stat(root.c_str(), &st) != 0) {
        return util::make_error(root, "no such file or directory");
    }
    if (S_ISDIR(st.st_mode)) {
        auto directory = fs::DirectoryTree::create(root);
        if (!directory)
            return directory.error();
        std::unique_ptr<fs::FileTree> tree = std::move(directory.value());
        return tree;
    }
    if (S_ISREG(st.st_mode)) {
        auto tar = fs::TarTree::open(root, fs::TarOptions{.symbols = true});
        if (!tar)
            return tar.error();
        std::unique_ptr<fs::FileTree> tree = std::move(tar.value());
        return tree;
    }
    return util::make_error(root, "not a directory or a tarball");
}

std::string default_lock_path(std::string_view image_name) {
    return "lockfiles/pylock." + std::string(image_name) + ".toml";
}

std::string lock_path_for_architecture(std::string_view path, std::string_view architecture) {
    constexpr std::string_view k_suffix = ".toml";
    const std::string tag = "-" + std::string(architecture);
    if (path.size() > k_suffix.size() && path.ends_with(k_suffix)) {
        const std::string_view stem = path.substr(0, path.size() - k_suffix.size());
        if (stem.back() != '/')  // "x/.toml" is a file name, not a suffix
            return std::string(stem) + tag + std::string(k_suffix);
    }
    return std::string(path) + tag;
}

std::vector<std::string> split_list(std::string_view text) {
    std::vector<std::string> out;
    std::string current;
    for (char c : text) {
        if (c == ',' || c == ':') {
            if (!current.empty())
                out.push_back(current);
            current.clear();
        } else {
            current += c;
        }
    }
    if (!current.empty())
        out.push_back(current);
    return out;
}

std::string default_cache_dir() {
    if (const char* dir = std::getenv("ROOTLOCK_CACHE_DIR"); dir != nullptr && *dir != '\0')
        return dir;
    if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg == '/')
        return std::string(xdg) + "/rootlock";
    if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0')
        return std::string(home) + "/.cache/rootlock";
    return "/tmp/rootlock-cache";
}

Style::Style(FILE* stream)
    : m_colour(::isatty(::fileno(stream)) != 0 && std::getenv("NO_COLOR") == nullptr) {}

std::string Style::wrap(std::string_view code, std::string_view text) const {
    if (!m_colour)
        return std::string(text);
    return fmt::format("\x1b[{}m{}\x1b[0m", code, text);
}
std::string Style::bold(std::string_view text) const {
    return wrap("1", text);
}
std::string Style::red(std::string_view text) const {
    return wrap("1;31", text);
}
std::string Style::yellow(std::string_view text) const {
    return wrap("33", text);
}
std::string Style::green(std::string_view text) const {
    return wrap("32", text);
}
std::string Style::dim(std::string_view text) const {
    return wrap("2", text);
}

}  // namespace rootlock::cli
