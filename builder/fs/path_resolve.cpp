// Lexical path helpers and chroot-style resolution over a FileTree. Resolution keeps a stack of
// components still to visit, so a symlink just pushes its target's components: no recursion.
#include "fs/path_resolve.hpp"

#include <vector>

namespace rootlock::fs {

namespace {

// Calls `visit` with each non-empty component of `path`, in order.
template <class Visit>
void for_each_component(std::string_view path, Visit&& visit) {
    size_t pos = 0;
    while (pos < path.size()) {
        size_t slash = path.find('/', pos);
        if (slash == std::string_view::npos)
            slash = path.size();
        if (slash > pos)
            visit(path.substr(pos, slash - pos));
        pos = slash + 1;
    }
}

// Pushes the components of `path` onto `pending` so that the first component is popped first.
// A trailing slash (or "/.") becomes a "." component: the name before it must be a directory,
// and a symlink there is followed, as the kernel does.
void push_components(std::vector<std::string>& pending, std::string_view path) {
    std::vector<std::string_view> parts;
    for_each_component(path, [&](std::string_view part) { parts.push_back(part); });
    if (!path.empty() && path.back() == '/' && !parts.empty())
        parts.emplace_back(".");
    for (auto it = parts.rbegin(); it != parts.rend(); ++it)
        pending.emplace_back(*it);
}

std::string child_path(const std::string& dir, std::string_view name) {
    std::string out = dir;
    if (out.size() > 1)
        out += '/';
    out += name;
    return out;
}

NodeStat root_stat(const FileTree& tree) {
    auto stat = tree.lstat("/");
    if (stat)
        return *stat;
    NodeStat fallback;
    fallback.kind = NodeKind::directory;
    fallback.mode = 0755;
    return fallback;
}

// The walk itself, starting in the canonical directory `start` with `path` still to visit.
// `hops` counts links already followed to reach `start`, so a split walk keeps the kernel's limit.
std::optional<Resolved> walk_from(const FileTree& tree, std::string start, std::string_view path,
                                  bool follow_last, int hops = 0, int* hops_out = nullptr) {
    std::vector<std::string> pending;
    push_components(pending, path);
    std::string current = std::move(start);
    std::optional<NodeStat> current_stat;  // unset while `current` is a directory we walked into
    while (!pending.empty()) {
        std::string part = std::move(pending.back());
        pending.pop_back();
        if (part == ".")
            continue;
        if (part == "..") {
            // `current` holds no symlinks, so its lexical parent is its real parent.
            current = dirname(current);
            current_stat.reset();
            continue;
        }
        std::string candidate = child_path(current, part);
        auto stat = tree.lstat(candidate);
        if (!stat)
            return std::nullopt;
        bool last = pending.empty();
        if (stat->kind == NodeKind::symlink && (!last || follow_last)) {
            if (++hops > k_max_symlink_hops)
                return std::nullopt;
            auto target = tree.readlink(candidate);
            if (!target.ok() || target->empty())
                return std::nullopt;
            if (symlink_escapes(candidate, *target))
                return std::nullopt;
            // An absolute target restarts at the tree's root, never the host's. (assign() rather
            // than = "/" sidesteps a false -Wrestrict in g++ 12.)
            if (target->front() == '/')
                current.assign(1, '/');
            current_stat.reset();
            push_components(pending, *target);
            continue;
        }
        if (!last && stat->kind != NodeKind::directory)
            return std::nullopt;
        current = std::move(candidate);
        current_stat = *stat;
    }
    if (hops_out != nullptr)
        *hops_out = hops;
    if (!current_stat) {
        // Ended on a directory reached by "." or ".." (or the root itself): stat it now.
        if (current == "/")
            return Resolved{current, root_stat(tree)};
        current_stat = tree.lstat(current);
        if (!current_stat)
            return std::nullopt;
    }
    return Resolved{std::move(current), *current_stat};
}

}  // namespace

std::string normalize(std::string_view path) {
    std::vector<std::string_view> parts;
    for_each_component(path, [&](std::string_view part) {
        if (part == ".")
            return;
        if (part == "..") {
            if (!parts.empty())
                parts.pop_back();
            return;
        }
        parts.push_back(part);
    });
    if (parts.empty())
        return "/";
    std::string out;
    for (auto part : parts) {
        out += '/';
        out += part;
    }
    return out;
}

std::string dirname(std::string_view path) {
    std::string norm = normalize(path);
    size_t slash = norm.rfind('/');
    if (slash == 0 || slash == std::string::npos)
        return "/";
    return norm.substr(0, slash);
}

std::string basename(std::string_view path) {
    std::string norm = normalize(path);
    return norm.substr(norm.rfind('/') + 1);
}

std::string join(std::string_view dir, std::string_view rest) {
    if (!rest.empty() && rest.front() == '/')
        return normalize(rest);
    std::string combined(dir);
    combined += '/';
    combined += rest;
    return normalize(combined);
}

bool symlink_escapes(std::string_view link_path, std::string_view target) {
    if (target.empty() || target.front() == '/')
        return false;
    // Depth of the link's directory below the root, then the target's climb from there.
    long depth = 0;
    for_each_component(dirname(link_path), [&](std::string_view) { ++depth; });
    bool escapes = false;
    for_each_component(target, [&](std::string_view part) {
        if (escapes || part == ".")
            return;
        if (part == "..") {
            if (--depth < 0)
                escapes = true;
            return;
        }
        ++depth;
    });
    return escapes;
}

std::optional<Resolved> resolve(const FileTree& tree, std::string_view path, bool follow_last) {
    return walk_from(tree, "/", path, follow_last);
}

std::optional<Resolved> Resolver::resolve(std::string_view path, bool follow_last) const {
    auto& memo = m_paths[follow_last ? 1 : 0];
    {
        std::lock_guard lock(m_mutex);
        if (auto found = memo.find(path); found != memo.end())
            return found->second;
    }
    auto resolved = resolve_uncached(path, follow_last);
    std::lock_guard lock(m_mutex);
    memo.emplace(std::string(path), resolved);
    return resolved;
}

std::optional<Resolved> Resolver::resolve_uncached(std::string_view path, bool follow_last) const {
    // Only "DIR/NAME" splits cleanly; ".", "..", a trailing slash or a bare name walk in full.
    size_t slash = path.rfind('/');
    if (slash == std::string_view::npos || slash + 1 == path.size()) {
        return walk_from(m_tree, "/", path, follow_last);
    }
    std::string_view name = path.substr(slash + 1);
    if (name == "." || name == "..")
        return walk_from(m_tree, "/", path, follow_last);
    auto dir = resolve_directory(path.substr(0, slash));
    if (!dir)
        return std::nullopt;
    return walk_from(m_tree, dir->path, name, follow_last, dir->hops);
}

std::optional<Resolver::Directory> Resolver::resolve_directory(std::string_view dir) const {
    {
        std::lock_guard lock(m_mutex);
        auto found = m_directories.find(dir);
        if (found != m_directories.end())
            return found->second;
    }
    std::optional<Directory> canonical;
    int hops = 0;
    // "PARENT/NAME" goes on from PARENT's own memo, so a directory first met costs one lstat
    // rather than one per component (a root's 700 program directories share their parents);
    // walking NAME from PARENT's canonical form with its hops is exactly what a walk of the
    // whole spelling does once past PARENT. Anything else is walked whole.
    const size_t slash = dir.rfind('/');
    const std::string_view name = slash == std::string_view::npos ? dir : dir.substr(slash + 1);
    std::optional<Resolved> resolved;
    if (slash != std::string_view::npos && !name.empty() && name != "." && name != "..") {
        if (auto parent = resolve_directory(slash == 0 ? "/" : dir.substr(0, slash)))
            resolved = walk_from(m_tree, parent->path, name, true, parent->hops, &hops);
    } else {
        resolved = walk_from(m_tree, "/", dir, true, 0, &hops);
    }
    if (resolved && resolved->stat.kind == NodeKind::directory) {
        canonical = Directory{std::move(resolved->path), hops};
    }
    std::lock_guard lock(m_mutex);
    m_directories.emplace(std::string(dir), canonical);
    return canonical;
}

}  // namespace rootlock::fs
