// Reading a host laid out under a directory (or the real "/"): paths resolved with chroot
// semantics inside it, pseudo files of /proc and /sys read to their end, device nodes stat'ed.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fs/directory_tree.hpp"
#include "util/result.hpp"

namespace rootlock::host {

// What lstat(2) says of a path on the host, with the device numbers a FileTree does not keep.
struct HostStat {
    enum class Kind { regular, directory, symlink, character, block, socket, other };
    Kind kind = Kind::other;
    uint32_t mode = 0;  // permission bits
    uint32_t uid = 0;
    uint32_t gid = 0;
    uint64_t size = 0;
    int64_t major = -1;  // for character and block devices
    int64_t minor = -1;
};

class HostReader {
  public:
    // Fails with "DIR: ..." when `host_root` is not a directory.
    static util::Result<HostReader> open(const std::string& host_root);

    // "/" or the directory, as given (without a trailing slash).
    const std::string& root() const { return m_root; }
    bool is_live_root() const { return m_tree->host_root().empty(); }
    const fs::FileTree& tree() const { return *m_tree; }
    // `path` (as the host sees it) on this machine: under the root directory.
    std::string on_disk(std::string_view path) const;

    // The canonical path `path` resolves to inside the host, following links (the last one too
    // unless `follow_last` is false); nullopt when it does not resolve.
    std::optional<std::string> resolve(std::string_view path, bool follow_last = true) const;
    // A small text file read to its end (a /proc file's size is 0): at most `limit` bytes, more
    // is an error. Errors: "PATH: no such file", "PATH: larger than LIMIT bytes", errno's text.
    util::Result<std::string> read_text(std::string_view path, size_t limit = 1 << 20) const;
    // lstat(2) of the resolved path's last component (links in the parents followed).
    std::optional<HostStat> stat(std::string_view path) const;
    // The names in a directory, sorted; empty when it is not one.
    std::vector<std::string> list(std::string_view path) const;

  private:
    HostReader(std::string root, std::shared_ptr<fs::DirectoryTree> tree)
        : m_root(std::move(root)), m_tree(std::move(tree)) {}

    std::string m_root;
    std::shared_ptr<fs::DirectoryTree> m_tree;
};

}  // namespace rootlock::host
