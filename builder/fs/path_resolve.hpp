// Paths inside a root: lexical helpers (normalize, dirname, basename, join) and resolution with
// chroot semantics, walking symlinks inside the tree itself so that nothing ever leaves the root.
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "fs/file_tree.hpp"

namespace rootlock::fs {

// Linux's MAXSYMLINKS: a lookup following more links than this fails with ELOOP.
inline constexpr int k_max_symlink_hops = 40;

// Lexical normal form: "//" and "." collapsed, ".." removed with its parent and clamped at "/",
// no trailing slash, always absolute ("a/b" is taken as "/a/b"). Symlinks are not consulted.
std::string normalize(std::string_view path);

// The directory part of a root-absolute path: "/a/b" -> "/a", "/a" -> "/", "/" -> "/".
std::string dirname(std::string_view path);
// The last component: "/a/b" -> "b", "/" -> "".
std::string basename(std::string_view path);
// `rest` taken relative to `dir` (or on its own when absolute), then normalized lexically.
std::string join(std::string_view dir, std::string_view rest);

// True when the symlink at `link_path` has a relative `target` that climbs above the root from
// the link's directory ("/a/l" -> "../../etc"). A chroot would clamp it, but no honest rootfs
// needs that, so resolution refuses to follow such links and checkers report them.
bool symlink_escapes(std::string_view link_path, std::string_view target);

struct Resolved {
    std::string path;  // canonical: absolute, no "." or "..", no symlink in any directory part
    NodeStat stat;     // of `path` itself
};

// Resolves `path` inside `tree` as a process chrooted there would: symlinks are followed by
// reading them from the tree (absolute targets restart at the tree's root), ".." stops at "/",
// and the last component is followed only when `follow_last` is set. nullopt when a component
// is missing, a non-directory is used as a directory, more than k_max_symlink_hops links are
// followed, or a followed link escapes (symlink_escapes).
std::optional<Resolved> resolve(const FileTree& tree, std::string_view path,
                                bool follow_last = true);

// resolve() with a memo of the directories and the paths already resolved, for callers (the
// loader) that probe many names in the same few directories and resolve the same paths again
// (every program names the same interpreter, a chain of four symlinks on Debian). The tree must
// not change while the memo lives. Thread-safe; valid as long as `tree` is.
class Resolver {
  public:
    explicit Resolver(const FileTree& tree) : m_tree(tree) {}
    std::optional<Resolved> resolve(std::string_view path, bool follow_last = true) const;

  private:
    struct Directory {
        std::string path;  // canonical
        int hops = 0;      // symlinks followed to get there, counted against the limit
    };
    // The canonical form of the directory spelled `dir`, or nullopt when it does not resolve to
    // a directory. Keyed by the spelling, so no lexical rewrite can change the meaning of "..".
    std::optional<Directory> resolve_directory(std::string_view dir) const;
    std::optional<Resolved> resolve_uncached(std::string_view path, bool follow_last) const;

    const FileTree& m_tree;
    mutable std::mutex m_mutex;
    mutable std::map<std::string, std::optional<Directory>, std::less<>> m_directories;
    // resolve()'s answers by spelling, one map per `follow_last`.
    mutable std::map<std::string, std::optional<Resolved>, std::less<>> m_paths[2];
};

}  // namespace rootlock::fs
