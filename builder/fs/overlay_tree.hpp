// OverlayTree: a base FileTree (a Debian root directory, a tarball) plus nodes added on top of
// it (a venv, installed wheels), seen as one root without copying or touching the base.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "fs/file_tree.hpp"

namespace rootlock::fs {

// A regular file known by its size and metadata only (a large wheel entry): read_file refuses
// it, probe_elf answers from `elf` / `elf_error` without reading a byte.
struct SizedFile {
    uint64_t size = 0;
    uint32_t mode = 0644;
    std::shared_ptr<const elf::ElfInfo> elf;  // set for an ELF object that parsed
    std::string elf_error;                    // set for one whose metadata did not
    // Where the bytes are on this machine, when they are (a host's driver file seen inside a
    // container): open_bytes() reads them there. Empty: the overlay holds no bytes.
    std::string host_path;
};

class OverlayTree final : public FileTree {
  public:
    explicit OverlayTree(std::shared_ptr<const FileTree> base);

    // Adders place a node at `path` with chroot semantics over the merged view: the parent part
    // is resolved following symlinks of either side (so "/lib/x" lands in /usr/lib on a
    // merged-/usr base), missing parents are created as added directories, and the last
    // component is replaced, never followed. An added node shadows a base node at the same
    // path (a file added over a base directory hides everything below it). Each returns the
    // canonical path the node got. add_dir on an existing directory (or a link to one) keeps
    // it, taking the mode only if the overlay made it. Errors: "PATH: /a/b is not a directory"
    // (a parent, or add_dir's own path, is a file), "PATH: /a is a symlink escaping the root",
    // "PATH: cannot replace the root", "PATH: too many levels of symbolic links".
    util::Result<std::string> add_dir(std::string_view path, uint32_t mode = 0755);
    util::Result<std::string> add_file(std::string_view path, std::string content,
                                       uint32_t mode = 0644);
    util::Result<std::string> add_sized_file(std::string_view path, SizedFile file);
    util::Result<std::string> add_symlink(std::string_view path, std::string target);

    const FileTree& base() const { return *m_base; }
    size_t added_count() const { return m_nodes.size(); }

    // One added node, as an image writer needs it.
    struct Added {
        std::string path;  // canonical
        NodeKind kind = NodeKind::other;
        uint32_t mode = 0;
        uint64_t size = 0;
        const std::string* content = nullptr;  // regular files added with their bytes
        std::string target;                    // symlinks
    };
    // Every added node, sorted bytewise by path.
    std::vector<Added> added() const;
    // True when the base's entry at the canonical `path` is not visible: an added node stands
    // there, or an added non-directory stands above it.
    bool shadows_base(std::string_view path) const {
        return find_added(path) != nullptr || base_hidden(path);
    }

    std::string describe() const override;
    std::optional<NodeStat> lstat(std::string_view path) const override;
    util::Result<std::string> readlink(std::string_view path) const override;
    // Added and base entries merged, sorted bytewise; an added entry wins over a base one.
    util::Result<std::vector<DirEntry>> list(std::string_view path) const override;
    // A SizedFile gives "PATH: content not held in the overlay".
    util::Result<std::string> read_file(std::string_view path,
                                        uint64_t max_size = 64U << 20) const override;
    // Base paths share the base tree's probe and cache; added files answer from what was added.
    ElfProbe probe_elf(std::string_view path, bool symbols = false) const override;

  protected:
    util::Result<std::unique_ptr<util::ByteSource>> open(std::string_view path) const override;

  private:
    struct Node {
        NodeKind kind = NodeKind::other;
        uint32_t mode = 0;
        uint64_t identity = 0;
        uint64_t size = 0;
        std::optional<std::string> content;  // regular files with their bytes
        std::shared_ptr<const elf::ElfInfo> elf;
        std::string elf_error;
        std::string target;     // symlinks
        std::string host_path;  // a SizedFile's bytes on this machine
    };

    const Node* find_added(std::string_view path) const;
    // True when an added non-directory at `path` or above hides the base there.
    bool base_hidden(std::string_view path) const;
    util::Result<std::string> ensure_directory(std::string_view spelled, const std::string& path,
                                               int depth);
    util::Result<std::string> place(std::string_view path, Node node);

    std::shared_ptr<const FileTree> m_base;
    std::map<std::string, Node, std::less<>> m_nodes;
    // Added non-directories that stand where the base has a directory: the base is hidden below.
    std::set<std::string, std::less<>> m_opaque;
    uint64_t m_next_identity;
};

}  // namespace rootlock::fs
