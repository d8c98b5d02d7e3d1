// Reading an environment's Python version from its files (see python_version.hpp): patchlevel.h
// and conda-meta records, with the interpreter's prefix found through its canonical path.
#include "freeze/python_version.hpp"

#include <algorithm>

#include "fs/path_resolve.hpp"

namespace rootlock::freeze {

namespace {

bool is_digits(std::string_view text) {
    return !text.empty() &&
           std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// "3.11.7", "3.13.0rc1", "3.12.1+": three dot-separated numbers, then at most a pre-release
// (a, b, rc and digits) and CPython's "+" of an unreleased build.
bool is_cpython_version(std::string_view text) {
    if (!text.empty() && text.back() == '+')
        text.remove_suffix(1);
    std::size_t end = text.size();
    for (std::string_view tag : {"rc", "a", "b"}) {
        const std::size_t at = text.find(tag);
        if (at != std::string_view::npos) {
            if (!is_digits(text.substr(at + tag.size())))
                return false;
            end = at;
            break;
        }
    }
    const std::string_view release = text.substr(0, end);
    const std::size_t first = release.find('.');
    const std::size_t second =
        first == std::string_view::npos ? first : release.find('.', first + 1);
    if (second == std::string_view::npos)
        return false;
    return is_digits(release.substr(0, first)) &&
           is_digits(release.substr(first + 1, second - first - 1)) &&
           is_digits(release.substr(second + 1));
}

bool starts_with(std::string_view text, std::string_view prefix) {
    return text.substr(0, prefix.size()) == prefix;
}

std::string child(const std::string& dir, std::string_view name) {
    return dir == "/" ? "/" + std::string(name) : dir + "/" + std::string(name);
}

std::string parent(const std::string& path) {
    const std::size_t slash = path.rfind('/');
    return slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
}

// The prefix's headers: include/python3.N, or include/python3.Nt (free-threaded), or the
// abiflags spellings of older builds (python3.7m).
std::optional<EnvironmentPython> from_headers(const fs::FileTree& tree, const std::string& prefix,
                                              const std::string& minor) {
    const auto resolved = fs::resolve(tree, child(prefix, "include"));
    if (!resolved || resolved->stat.kind != fs::NodeKind::directory)
        return std::nullopt;
    const std::string& include = resolved->path;
    auto entries = tree.list(include);
    if (!entries.ok())
        return std::nullopt;
    for (const fs::DirEntry& entry : *entries) {
        if (!starts_with(entry.name, "python" + minor))
            continue;
        const std::string rest = entry.name.substr(6 + minor.size());
        if (!rest.empty() &&
            !std::all_of(rest.begin(), rest.end(), [](char c) { return c >= 'a' && c <= 'z'; }))
            continue;  // python3.1 must not take python3.11's headers
        const std::string file = child(child(include, entry.name), "patchlevel.h");
        const auto header = fs::resolve(tree, file);
        if (!header || header->stat.kind != fs::NodeKind::regular)
            continue;
        auto text = tree.read_file(header->path, 1U << 20);
        if (!text.ok())
            continue;
        if (auto version = parse_patchlevel(*text); version && starts_with(*version, minor + "."))
            return EnvironmentPython{prefix, *version, file};
    }
    return std::nullopt;
}

std::optional<EnvironmentPython> from_conda_meta(const fs::FileTree& tree,
                                                 const std::string& prefix,
                                                 const std::string& minor) {
    const std::string meta = child(prefix, "conda-meta");
    auto entries = tree.list(meta);
    if (!entries.ok())
        return std::nullopt;
    for (const fs::DirEntry& entry : *entries) {
        if (auto version = conda_python_version(entry.name, minor))
            return EnvironmentPython{prefix, *version, child(meta, entry.name)};
    }
    return std::nullopt;
}

}  // namespace

std::optional<std::string> parse_patchlevel(std::string_view text) {
    std::size_t at = 0;
    while (at < text.size()) {
        std::size_t end = text.find('\n', at);
        if (end == std::string_view::npos)
            end = text.size();
        std::string_view line = text.substr(at, end - at);
        at = end + 1;
        const std::size_t hash = line.find_first_not_of(" \t");
        if (hash == std::string_view::npos || line[hash] != '#')
            continue;
        line.remove_prefix(hash + 1);
        line.remove_prefix(std::min(line.find_first_not_of(" \t"), line.size()));
        if (!starts_with(line, "define"))
            continue;
        line.remove_prefix(6);
        const std::size_t name = line.find_first_not_of(" \t");
        if (name == std::string_view::npos || name == 0)
            continue;
        line.remove_prefix(name);
        if (!starts_with(line, "PY_VERSION") ||
            (line.size() > 10 && line[10] != ' ' && line[10] != '\t'))
            continue;
        line.remove_prefix(10);
        const std::size_t open = line.find('"');
        const std::size_t close = open == std::string_view::npos ? open : line.find('"', open + 1);
        if (close == std::string_view::npos)
            return std::nullopt;
        const std::string_view value = line.substr(open + 1, close - open - 1);
        if (!is_cpython_version(value))
            return std::nullopt;
        return std::string(value);
    }
    return std::nullopt;
}

std::optional<std::string> conda_python_version(std::string_view file_name,
                                                std::string_view minor) {
    // conda names each record NAME-VERSION-BUILD.json; the package name "python" is followed
    // directly by its version, so "python-dateutil-2.9.0-..." never matches "python-3.".
    const std::string head = "python-" + std::string(minor) + ".";
    if (!starts_with(file_name, head) || file_name.size() < 5 ||
        file_name.substr(file_name.size() - 5) != ".json")
        return std::nullopt;
    std::string_view rest = file_name.substr(7, file_name.size() - 7 - 5);
    const std::size_t dash = rest.find('-');
    if (dash == std::string_view::npos)
        return std::nullopt;
    const std::string_view version = rest.substr(0, dash);
    if (!is_cpython_version(version))
        return std::nullopt;
    return std::string(version);
}

EnvironmentPython environment_python(const fs::FileTree& tree,
                                     const python::PythonEnvironment& env) {
    EnvironmentPython out;
    if (env.interpreter)
        out.prefix = parent(parent(*env.interpreter));
    if (env.version.empty())
        return out;
    if (env.pyvenv && is_cpython_version(env.pyvenv->version) &&
        starts_with(env.pyvenv->version, env.version + ".")) {
        out.version = env.pyvenv->version;
        out.source = child(env.prefix, "pyvenv.cfg");
        return out;
    }
    if (out.prefix.empty())
        return out;
    if (auto found = from_headers(tree, out.prefix, env.version))
        return *found;
    if (auto found = from_conda_meta(tree, out.prefix, env.version))
        return *found;
    return out;
}

}  // namespace rootlock::freeze
