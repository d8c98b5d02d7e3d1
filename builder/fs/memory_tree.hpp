// MemoryTree: a FileTree held in a map, built by tests (and fixtures) one entry at a time, so that
// loader and checker tests describe a rootfs in a few lines instead of writing one to disk.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "fs/file_tree.hpp"

namespace rootlock::fs {

class MemoryTree final : public FileTree {
  public:
    MemoryTree();

    // Adders create missing parent directories and follow symlinks already in the tree for the
    // parent part (so add_file("/lib/x") lands in /usr/lib on a merged-/usr tree). An existing
    // entry at the path is replaced. Using a non-directory as a parent is a bug in the caller
    // and throws std::invalid_argument.
    void add_file(std::string_view path, std::string_view content, uint32_t mode = 0644);
    void add_file(std::string_view path, std::vector<std::byte> content, uint32_t mode = 0644);
    void add_dir(std::string_view path, uint32_t mode = 0755);
    void add_symlink(std::string_view path, std::string_view target);
    // A second name for the file at `existing_path` (same identity, same bytes); throws
    // std::invalid_argument when it does not exist or is a directory.
    void add_hardlink(std::string_view path, std::string_view existing_path);
    // Removes the entry (a directory with everything under it); false when it did not exist.
    bool remove(std::string_view path);

    std::string describe() const override { return "memory"; }
    std::optional<NodeStat> lstat(std::string_view path) const override;
    util::Result<std::string> readlink(std::string_view path) const override;
    util::Result<std::vector<DirEntry>> list(std::string_view path) const override;
    util::Result<std::string> read_file(std::string_view path,
                                        uint64_t max_size = 64U << 20) const override;

  protected:
    util::Result<std::unique_ptr<util::ByteSource>> open(std::string_view path) const override;

  private:
    struct Node {
        NodeKind kind = NodeKind::other;
        uint32_t mode = 0;
        uint64_t identity = 0;
        std::shared_ptr<const std::vector<std::byte>> content;  // shared by hard links
        std::string target;                                     // symlinks
        std::set<std::string> children;                         // directories, sorted bytewise
    };

    // The canonical path a new entry named `path` gets, its parents created.
    std::string place(std::string_view path);
    std::string ensure_directory(const std::string& path, int depth = 0);
    void insert(const std::string& path, Node node);
    const Node* find(std::string_view path) const;

    std::map<std::string, Node, std::less<>> m_nodes;
    uint64_t m_next_identity = 1;
};

}  // namespace rootlock::fs
