// Environment integrity: missing RECORD files, paths claimed twice, and the uninstall plan,
// the last one a rule-by-rule model of pip's req_uninstall.py over a FileTree.
#include "python/integrity.hpp"

#include <algorithm>
#include <functional>
#include <map>

#include "fs/path_resolve.hpp"

namespace rootlock::python {

namespace {

bool ends_with(std::string_view text, std::string_view suffix) {
    return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

bool starts_with(std::string_view text, std::string_view prefix) {
    return text.size() >= prefix.size() && text.substr(0, prefix.size()) == prefix;
}

// A .pyc inside a __pycache__ directory: bytecode that Python rebuilds when it is missing.
bool is_cached_bytecode(const std::string& path) {
    return ends_with(path, ".pyc") && fs::basename(fs::dirname(path)) == "__pycache__";
}

// True when `path` is `dir` or lies below it.
bool is_within(const std::string& path, const std::string& dir) {
    return path == dir || (starts_with(path, dir) && path.size() > dir.size() &&
                           (dir == "/" || path[dir.size()] == '/'));
}

std::string child(const std::string& dir, std::string_view name) {
    return dir == "/" ? "/" + std::string(name) : dir + "/" + std::string(name);
}

// str(pathlib.Path(entry)), which pip applies to every RECORD path: empty and "." components
// dropped, ".." kept for the kernel (here: resolve) to interpret after symlinks.
std::string pathlib_normal(std::string_view entry) {
    std::string out;
    size_t pos = 0;
    while (pos <= entry.size()) {
        size_t end = entry.find('/', pos);
        if (end == std::string_view::npos)
            end = entry.size();
        const std::string_view part = entry.substr(pos, end - pos);
        pos = end + 1;
        if (part.empty() || part == ".")
            continue;
        if (!out.empty())
            out.push_back('/');
        out.append(part);
    }
    return out;
}

// The console_scripts and gui_scripts names in entry_points.txt, read the way
// importlib.metadata's Sectioned does: stripped lines, '#' comments, "[group]" headers,
// "name = value" pairs. importlib fails on a pair without '='; here such a line is skipped.
std::vector<std::string> script_names(std::string_view text) {
    std::vector<std::string> names;
    auto strip = [](std::string_view s) {
        while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r'))
            s.remove_prefix(1);
        while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
            s.remove_suffix(1);
        return s;
    };
    std::string_view group;
    bool in_group = false;
    size_t pos = 0;
    while (pos < text.size()) {
        size_t end = text.find('\n', pos);
        if (end == std::string_view::npos)
            end = text.size();
        const std::string_view line = strip(text.substr(pos, end - pos));
        pos = end + 1;
        if (line.empty() || line.front() == '#')
            continue;
        if (line.front() == '[' && line.back() == ']') {
            group = line;
            while (!group.empty() && (group.front() == '[' || group.front() == ']'))
                group.remove_prefix(1);
            while (!group.empty() && (group.back() == '[' || group.back() == ']'))
                group.remove_suffix(1);
            in_group = group == "console_scripts" || group == "gui_scripts";
            continue;
        }
        const size_t equals = line.find('=');
        if (!in_group || equals == std::string_view::npos)
            continue;
        const std::string_view name = strip(line.substr(0, equals));
        if (!name.empty())
            names.emplace_back(name);
    }
    return names;
}

// pip's UninstallPathSet.add() and compress_for_rename() over a FileTree.
class UninstallPlanner {
  public:
    UninstallPlanner(const fs::FileTree& tree, const PythonEnvironment& env)
        : m_tree(tree), m_env(env), m_resolver(tree) {
        auto prefix = fs::resolve(tree, env.prefix);
        m_real_prefix = prefix ? prefix->path : env.prefix;
        std::string digits;
        for (char c : env.version) {
            if (c != '.')
                digits.push_back(c);
        }
        if (!digits.empty())
            m_cache_tag = "cpython-" + digits;
    }

    // `path` is root-absolute but may hold ".." and symlinks in its directory part.
    void add(const std::string& path) {
        const size_t slash = path.rfind('/');
        const std::string head = slash == 0 ? "/" : path.substr(0, slash);
        const std::string tail = path.substr(slash + 1);
        // realpath(head), as pip normalises the head but not the tail: a symlink listed in
        // RECORD is removed itself, never its target.
        auto real_head = m_resolver.resolve(head);
        if (!real_head || real_head->stat.kind != fs::NodeKind::directory)
            return;
        const std::string full = child(real_head->path, tail);
        if (!m_resolver.resolve(full))
            return;  // os.path.exists follows the last link
        // _permitted(): inside a venv, a plain string prefix test against the real sys.prefix.
        if (m_env.is_venv && !starts_with(full, m_real_prefix))
            return;
        if (!m_paths.insert(full).second)
            return;
        // __pycache__ files can appear after RECORD was written (pip: "due to imports").
        if (ends_with(tail, ".py") && !m_cache_tag.empty()) {
            const std::string stem = tail.substr(0, tail.size() - 3);
            if (stem.find_first_not_of('.') != std::string::npos) {  // os.path.splitext's rule
                add(child(real_head->path, "__pycache__/" + stem + "." + m_cache_tag + ".pyc"));
            }
        }
    }

    std::set<std::string> compress() const {
        std::set<std::string> remaining = m_paths;
        std::vector<std::string> roots;
        for (const std::string& path : m_paths)
            roots.push_back(fs::dirname(path));
        std::sort(roots.begin(), roots.end());
        roots.erase(std::unique(roots.begin(), roots.end()), roots.end());
        std::stable_sort(
            roots.begin(), roots.end(),
            [](const std::string& a, const std::string& b) { return a.size() < b.size(); });
        std::vector<std::string> wildcards;
        for (const std::string& root : roots) {
            const bool handled =
                std::any_of(wildcards.begin(), wildcards.end(),
                            [&](const std::string& w) { return is_within(root, w) && root != w; });
            if (handled)
                continue;
            std::vector<std::string> files;
            if (!all_files_in(root, remaining, files))
                continue;
            for (const std::string& file : files)
                remaining.erase(file);
            wildcards.push_back(root);
        }
        // compact(): a path under a removed directory goes with it.
        std::set<std::string> result(wildcards.begin(), wildcards.end());
        for (const std::string& path : remaining) {
            const bool covered =
                std::any_of(wildcards.begin(), wildcards.end(),
                            [&](const std::string& w) { return is_within(path, w); });
            if (!covered)
                result.insert(path);
        }
        return result;
    }

  private:
    // os.walk(dir) without following links: true when every non-directory below `dir` is in
    // `remaining` (collected into `files`). A symlink to a directory counts as a directory, is
    // not entered, and so never blocks removal. Stops at the first foreign file.
    bool all_files_in(const std::string& dir, const std::set<std::string>& remaining,
                      std::vector<std::string>& files) const {
        auto entries = m_tree.list(dir);
        if (!entries)
            return true;  // os.walk skips what it cannot list
        for (const fs::DirEntry& entry : *entries) {
            const std::string path = child(dir, entry.name);
            if (entry.kind == fs::NodeKind::directory) {
                if (!all_files_in(path, remaining, files))
                    return false;
                continue;
            }
            if (entry.kind == fs::NodeKind::symlink) {
                auto target = m_resolver.resolve(path);
                if (target && target->stat.kind == fs::NodeKind::directory)
                    continue;
            }
            if (remaining.count(path) == 0)
                return false;
            files.push_back(path);
        }
        return true;
    }

    const fs::FileTree& m_tree;
    const PythonEnvironment& m_env;
    fs::Resolver m_resolver;  // one RECORD names the same few directories thousands of times
    std::string m_real_prefix;
    std::string m_cache_tag;  // "cpython-311"; empty when the version is unknown
    std::set<std::string> m_paths;
};

}  // namespace

std::vector<MissingFiles> find_missing_files(const fs::FileTree& tree,
                                             const PythonEnvironment& environment,
                                             const MissingFilesOptions& options) {
    std::vector<MissingFiles> result;
    if (environment.managed_by_distro && !options.include_distro_managed)
        return result;
    fs::Resolver resolver(tree);
    for (const Distribution& dist : environment.distributions) {
        const std::string own_record = child(dist.dist_info_path, "RECORD");
        std::set<std::string> missing;
        for (const std::string& path : dist.installed_paths) {
            if (path == own_record || is_cached_bytecode(path))
                continue;
            if (!resolver.resolve(path, /*follow_last=*/false))
                missing.insert(path);
        }
        if (missing.empty())
            continue;
        result.push_back(MissingFiles{dist.name, dist.version,
                                      std::vector<std::string>(missing.begin(), missing.end())});
    }
    return result;
}

std::vector<SharedPath> find_shared_paths(const PythonEnvironment& environment,
                                          const SharedPathOptions& options) {
    struct Claims {
        std::set<std::string> dists;
        bool all_empty = true;
    };
    std::map<std::string, Claims> claims;
    for (const Distribution& dist : environment.distributions) {
        for (size_t i = 0; i < dist.record.size() && i < dist.installed_paths.size(); ++i) {
            const RecordEntry& entry = dist.record[i];
            const std::string& path = dist.installed_paths[i];
            if (ends_with(entry.path, "/") || is_within(path, dist.dist_info_path) ||
                is_cached_bytecode(path)) {
                continue;
            }
            Claims& claim = claims[path];
            claim.dists.insert(dist.name);
            if (entry.size != 0U)
                claim.all_empty = false;
        }
    }
    std::vector<SharedPath> result;
    for (auto& [path, claim] : claims) {
        if (claim.dists.size() < 2)
            continue;
        if (claim.all_empty && !options.include_empty_files)
            continue;
        result.push_back(
            SharedPath{path, std::vector<std::string>(claim.dists.begin(), claim.dists.end())});
    }
    return result;
}

std::set<std::string> uninstall_paths(const fs::FileTree& tree,
                                      const PythonEnvironment& environment,
                                      const Distribution& dist) {
    if (!dist.has_record)
        return {};  // pip: "Cannot uninstall ..., RECORD file not found."
    UninstallPlanner planner(tree, environment);
    // uninstallation_paths(): every RECORD entry, plus the legacy .pyc/.pyo beside each .py.
    for (const RecordEntry& entry : dist.record) {
        const std::string relative = pathlib_normal(entry.path);
        if (relative.empty())
            continue;
        const std::string path = environment.site_packages + "/" + relative;
        planner.add(path);
        if (ends_with(path, ".py")) {
            const std::string base = path.substr(0, path.size() - 3);
            planner.add(base + ".pyc");
            planner.add(base + ".pyo");
        }
    }
    const std::string bin = child(environment.prefix, "bin");
    if (auto scripts = tree.list(child(dist.dist_info_path, "scripts"))) {
        for (const fs::DirEntry& entry : *scripts)
            planner.add(child(bin, entry.name));
    }
    if (auto resolved = fs::resolve(tree, child(dist.dist_info_path, "entry_points.txt"))) {
        if (auto text = tree.read_file(resolved->path)) {
            for (const std::string& name : script_names(*text))
                planner.add(child(bin, name));
        }
    }
    return planner.compress();
}

}  // namespace rootlock::python
