// Environment discovery: probe the system locations, walk the given paths a few levels deep, then
// read each dist-info; broken metadata is a problem of the environment, never a failed scan.
#include "python/environment.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <tuple>
#include <utility>

#include "fs/path_resolve.hpp"
#include "python/metadata.hpp"

namespace rootlock::python {

namespace {

constexpr std::array<std::string_view, 2> k_lib_names = {"lib", "lib64"};
constexpr std::array<std::string_view, 2> k_packages_names = {"site-packages", "dist-packages"};
// Never walked into: kernel and runtime trees, and big trees that hold no environments.
constexpr std::array<std::string_view, 7> k_pruned_paths = {
    "/proc", "/sys", "/dev", "/run", "/usr/share", "/usr/include", "/usr/src"};
// Never walked into, wherever they are: an environment is never found inside one.
constexpr std::array<std::string_view, 5> k_pruned_names = {"site-packages", "dist-packages",
                                                            "__pycache__", "node_modules", ".git"};

template <size_t N>
bool contains(const std::array<std::string_view, N>& names, std::string_view name) {
    return std::find(names.begin(), names.end(), name) != names.end();
}

bool is_digits(std::string_view text) {
    return !text.empty() &&
           std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// "python3" or "python3.N": the directory that holds a site-packages, or an interpreter name.
bool is_python_name(std::string_view name) {
    if (name == "python3")
        return true;
    return name.size() > 8 && name.substr(0, 8) == "python3." && is_digits(name.substr(8));
}

// "3.N" for "python3.N"; empty for "python3", which names no minor version.
std::string version_of(std::string_view python_name) {
    if (python_name.size() <= 8)
        return {};
    return std::string(python_name.substr(6));
}

// "3.11" from "3.11.7" or "3.11.7.final.0".
std::string major_minor(std::string_view version) {
    const size_t first = version.find('.');
    if (first == std::string_view::npos)
        return {};
    const size_t second = version.find('.', first + 1);
    return std::string(version.substr(0, second));
}

std::string_view trim(std::string_view text) {
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t' || text.front() == '\r'))
        text.remove_prefix(1);
    while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r'))
        text.remove_suffix(1);
    return text;
}

std::string lowercase(std::string_view text) {
    std::string out(text);
    for (char& c : out) {
        if (c >= 'A' && c <= 'Z')
            c = static_cast<char>(c - 'A' + 'a');
    }
    return out;
}

std::string child(const std::string& dir, std::string_view name) {
    return dir == "/" ? "/" + std::string(name) : dir + "/" + std::string(name);
}

bool is_directory(const fs::FileTree& tree, const std::string& path) {
    auto resolved = fs::resolve(tree, path);
    return resolved && resolved->stat.kind == fs::NodeKind::directory;
}

// The canonical path of the regular file `path` resolves to.
std::optional<std::string> resolve_regular(const fs::FileTree& tree, const std::string& path) {
    auto resolved = fs::resolve(tree, path);
    if (!resolved || resolved->stat.kind != fs::NodeKind::regular)
        return std::nullopt;
    return resolved->path;
}

// The text of the regular file `path` resolves to; the error names `path` as spelled.
util::Result<std::string> read_text(const fs::FileTree& tree, const std::string& path) {
    auto resolved = fs::resolve(tree, path);
    if (!resolved)
        return util::make_error(path, "missing");
    if (resolved->stat.kind != fs::NodeKind::regular)
        return util::make_error(path, "not a regular file");
    return tree.read_file(resolved->path);
}

// Candidate site-packages paths as spelled (the layout gives prefix and version), keyed by
// their canonical form so that lib64 -> lib and other aliases are read once.
using Candidates = std::map<std::string, std::string>;

void add_candidate(const fs::FileTree& tree, Candidates& candidates, const std::string& spelled) {
    auto resolved = fs::resolve(tree, spelled);
    if (!resolved || resolved->stat.kind != fs::NodeKind::directory)
        return;
    candidates.emplace(resolved->path, spelled);
}

// The site-packages and dist-packages of every python3* directory in the lib directory `lib`.
void examine_lib(const fs::FileTree& tree, Candidates& candidates, const std::string& lib) {
    auto resolved = fs::resolve(tree, lib);
    if (!resolved || resolved->stat.kind != fs::NodeKind::directory)
        return;
    auto entries = tree.list(resolved->path);
    if (!entries)
        return;
    for (const fs::DirEntry& entry : *entries) {
        if (!is_python_name(entry.name))
            continue;
        for (std::string_view packages : k_packages_names) {
            add_candidate(tree, candidates, child(child(lib, entry.name), packages));
        }
    }
}

// True when `path` has the layout PREFIX/lib*/python3*/{site,dist}-packages.
bool is_packages_layout(const std::string& path) {
    const std::string python_dir = fs::dirname(path);
    const std::string lib_dir = fs::dirname(python_dir);
    return contains(k_packages_names, fs::basename(path)) &&
           is_python_name(fs::basename(python_dir)) && contains(k_lib_names, fs::basename(lib_dir));
}

void search(const fs::FileTree& tree, Candidates& candidates, const std::string& dir, int depth) {
    if (depth > 0 && contains(k_pruned_paths, dir))  // unless the user named it
        return;
    auto entries = tree.list(dir);
    if (!entries)
        return;
    const std::string name = fs::basename(dir);
    const bool is_lib = contains(k_lib_names, name);
    if (is_lib)
        examine_lib(tree, candidates, dir);
    for (const fs::DirEntry& entry : *entries) {
        if (entry.name == "pyvenv.cfg") {
            // A venv: its lib is read directly, however deep it sits, and nothing else in it
            // can hold an environment.
            for (std::string_view lib : k_lib_names) {
                examine_lib(tree, candidates, child(dir, lib));
            }
            return;
        }
    }
    if (depth >= k_environment_search_depth)
        return;
    for (const fs::DirEntry& entry : *entries) {
        // Symlinked directories are not entered: the walk must end, and what they point to is
        // reached by its own name.
        if (entry.kind != fs::NodeKind::directory)
            continue;
        if (contains(k_pruned_names, entry.name))
            continue;
        if (is_lib && is_python_name(entry.name))
            continue;  // examined above; the stdlib is big
        search(tree, candidates, child(dir, entry.name), depth + 1);
    }
}

bool covered_by(const std::string& path, const std::vector<std::string>& roots) {
    return std::any_of(roots.begin(), roots.end(), [&](const std::string& root) {
        return root == "/" || path == root ||
               (path.size() > root.size() && path.compare(0, root.size(), root) == 0 &&
                path[root.size()] == '/');
    });
}

// The interpreter that runs the environment, or nullopt when none resolves inside the root.
std::optional<std::string> find_interpreter(const fs::FileTree& tree,
                                            const PythonEnvironment& env) {
    std::vector<std::string> names;
    if (!env.version.empty())
        names.push_back("python" + env.version);
    names.emplace_back("python3");
    std::vector<std::string> dirs = {child(env.prefix, "bin")};
    if (env.is_venv) {
        // A venv's bin/python3 links to its base interpreter; pyvenv.cfg's home is where venv
        // looked for it, so it is the fallback when the link is gone or dangling.
        if (env.pyvenv && !env.pyvenv->home.empty())
            dirs.push_back(fs::normalize(env.pyvenv->home));
    } else if (env.prefix != "/usr") {
        dirs.emplace_back("/usr/bin");  // Debian's /usr/local/lib/python3.N runs on /usr/bin
    }
    for (const std::string& dir : dirs) {
        for (const std::string& name : names) {
            if (auto found = resolve_regular(tree, child(dir, name)))
                return found;
        }
    }
    return std::nullopt;
}

// "3.N" from whatever the root says when the site-packages directory is plain "python3".
std::string guess_version(const fs::FileTree& tree, const PythonEnvironment& env) {
    if (env.pyvenv && !env.pyvenv->version.empty())
        return major_minor(env.pyvenv->version);
    for (const std::string& python :
         {child(env.prefix, "bin/python3"), std::string("/usr/bin/python3")}) {
        if (auto found = resolve_regular(tree, python)) {
            const std::string name = fs::basename(*found);
            if (is_python_name(name))
                return version_of(name);
        }
    }
    return {};
}

// name and version from "name-version.dist-info", for a dist whose METADATA is unusable. The
// directory name escapes '-' in the name as '_', so the first '-' ends the name.
void names_from_directory(std::string_view directory, Distribution& dist) {
    std::string_view stem =
        directory.substr(0, directory.size() - std::string_view(".dist-info").size());
    const size_t dash = stem.find('-');
    dist.display_name = std::string(stem.substr(0, dash));
    dist.version =
        dash == std::string_view::npos ? std::string() : std::string(stem.substr(dash + 1));
    dist.name = normalize_name(dist.display_name);
}

Distribution read_distribution(const fs::FileTree& tree, PythonEnvironment& env,
                               const std::string& dist_info, std::string_view directory) {
    Distribution dist;
    dist.dist_info_path = dist_info;

    const std::string metadata_path = child(dist_info, "METADATA");
    auto metadata_text = read_text(tree, metadata_path);
    auto metadata = metadata_text ? parse_metadata(*metadata_text, metadata_path)
                                  : util::Result<Metadata>(metadata_text.error());
    if (metadata) {
        dist.display_name = metadata->name;
        dist.name = normalize_name(metadata->name);
        dist.version = metadata->version;
        dist.requires_dist = std::move(metadata->requires_dist);
        dist.requires_python = std::move(metadata->requires_python);
    } else {
        env.problems.push_back(metadata.error().text());
        names_from_directory(directory, dist);
    }

    if (auto installer = read_text(tree, child(dist_info, "INSTALLER"))) {
        const std::string_view text = *installer;
        dist.installer = std::string(trim(text.substr(0, text.find('\n'))));
    }

    const std::string record_path = child(dist_info, "RECORD");
    auto record_text = read_text(tree, record_path);
    if (!record_text) {
        env.problems.push_back(record_text.error().text() +
                               " (pip cannot uninstall the distribution, nor can its files be "
                               "checked)");
        return dist;
    }
    auto record = parse_record(*record_text, record_path);
    if (!record) {
        env.problems.push_back(record.error().text());
        return dist;
    }
    dist.has_record = true;
    dist.record = std::move(record.value());
    dist.installed_paths.reserve(dist.record.size());
    for (const RecordEntry& entry : dist.record) {
        dist.installed_paths.push_back(fs::join(env.site_packages, entry.path));
    }
    return dist;
}

}  // namespace

PyvenvConfig parse_pyvenv_cfg(std::string_view text) {
    PyvenvConfig config;
    std::string version_info;
    size_t pos = 0;
    while (pos < text.size()) {
        size_t end = text.find('\n', pos);
        if (end == std::string_view::npos)
            end = text.size();
        const std::string_view line = text.substr(pos, end - pos);
        pos = end + 1;
        const size_t equals = line.find('=');
        if (equals == std::string_view::npos)
            continue;
        const std::string key = lowercase(trim(line.substr(0, equals)));
        const std::string_view value = trim(line.substr(equals + 1));
        if (key == "home") {
            config.home = std::string(value);
        } else if (key == "version") {
            config.version = std::string(value);
        } else if (key == "version_info") {
            version_info = std::string(value);
        } else if (key == "include-system-site-packages") {
            config.include_system_site_packages = lowercase(value) == "true";
        }
    }
    if (config.version.empty())
        config.version = version_info;
    return config;
}

PythonEnvironment read_environment(const fs::FileTree& tree, const std::string& site_packages) {
    PythonEnvironment env;
    const std::string spelled = fs::normalize(site_packages);
    auto resolved = fs::resolve(tree, spelled);
    if (!resolved || resolved->stat.kind != fs::NodeKind::directory) {
        env.site_packages = spelled;
        env.problems.push_back(spelled + ": not a directory");
        return env;
    }
    env.site_packages = resolved->path;
    const std::string python_dir = fs::dirname(spelled);
    const std::string prefix = fs::dirname(fs::dirname(python_dir));
    auto resolved_prefix = fs::resolve(tree, prefix);
    env.prefix = resolved_prefix ? resolved_prefix->path : prefix;
    env.managed_by_distro = env.site_packages == "/usr/lib/python3/dist-packages";

    const std::string cfg_path = child(env.prefix, "pyvenv.cfg");
    if (auto cfg = read_text(tree, cfg_path)) {
        env.is_venv = true;
        env.pyvenv = parse_pyvenv_cfg(*cfg);
    }
    env.version = version_of(fs::basename(python_dir));
    if (env.version.empty())
        env.version = guess_version(tree, env);
    env.interpreter = find_interpreter(tree, env);
    if (env.is_venv && !env.interpreter) {
        env.problems.push_back(child(env.prefix, "bin/python3") +
                               ": the venv's interpreter does not resolve inside the root");
    }

    auto entries = tree.list(env.site_packages);
    if (!entries) {
        env.problems.push_back(entries.error().text());
        return env;
    }
    constexpr std::string_view k_suffix = ".dist-info";
    for (const fs::DirEntry& entry : *entries) {
        const std::string_view name = entry.name;
        if (name.size() <= k_suffix.size() ||
            name.substr(name.size() - k_suffix.size()) != k_suffix)
            continue;
        auto dist_info = fs::resolve(tree, child(env.site_packages, name));
        if (!dist_info || dist_info->stat.kind != fs::NodeKind::directory)
            continue;
        env.distributions.push_back(read_distribution(tree, env, dist_info->path, name));
    }
    std::sort(env.distributions.begin(), env.distributions.end(),
              [](const Distribution& a, const Distribution& b) {
                  return std::tie(a.name, a.dist_info_path) < std::tie(b.name, b.dist_info_path);
              });
    // Two dist-info directories of one project (a half-done upgrade): importlib and pip see only
    // one of them, so the other's files are nobody's.
    for (size_t i = 1; i < env.distributions.size(); ++i) {
        const Distribution& first = env.distributions[i - 1];
        const Distribution& second = env.distributions[i];
        if (first.name != second.name)
            continue;
        env.problems.push_back(env.site_packages + ": " + first.name +
                               " is installed twice: " + fs::basename(first.dist_info_path) + ", " +
                               fs::basename(second.dist_info_path));
    }
    return env;
}

util::Result<std::vector<PythonEnvironment>> find_environments(
    const fs::FileTree& tree, const std::vector<std::string>& paths) {
    std::vector<std::string> roots;
    for (const std::string& path : paths) {
        auto resolved = fs::resolve(tree, path);
        if (!resolved)
            return util::make_error(path, "no such file or directory");
        roots.push_back(resolved->path);
    }

    Candidates candidates;
    for (std::string_view prefix : {"/usr", "/usr/local"}) {
        for (std::string_view lib : k_lib_names) {
            examine_lib(tree, candidates, std::string(prefix) + "/" + std::string(lib));
        }
    }
    for (const std::string& root : roots) {
        // A path inside a site-packages (a package the user named) finds that environment.
        bool inside_packages = false;
        for (std::string dir = root; dir != "/"; dir = fs::dirname(dir)) {
            if (is_packages_layout(dir)) {
                add_candidate(tree, candidates, dir);
                inside_packages = true;
            }
        }
        if (!inside_packages && is_directory(tree, root))
            search(tree, candidates, root, 0);
    }

    std::vector<PythonEnvironment> environments;
    for (const auto& [canonical, spelled] : candidates) {
        // The probed system locations count only where a given path covers them; a path inside
        // a site-packages covers its environment.
        const bool wanted = covered_by(canonical, roots) ||
                            std::any_of(roots.begin(), roots.end(), [&](const std::string& root) {
                                return covered_by(root, {canonical});
                            });
        if (wanted)
            environments.push_back(read_environment(tree, spelled));
    }
    return environments;
}

const Distribution* find_distribution(const PythonEnvironment& environment, std::string_view name) {
    const std::string wanted = normalize_name(name);
    for (const Distribution& dist : environment.distributions) {
        if (dist.name == wanted)
            return &dist;
    }
    return nullptr;
}

}  // namespace rootlock::python
