// TarLoader: builds a TarTree's path map from archive entries, one at a time, with tar's
// extraction rules, and for OCI layers the overlay rules on top (whiteouts, opaque directories).
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "fs/archive_reader.hpp"
#include "fs/tar_tree.hpp"

namespace rootlock::fs {

class TarLoader {
  public:
    explicit TarLoader(TarTree& tree) : m_tree(tree) {}

    // Adds every entry of `reader` to the tree. `layer` 0 is a plain tarball (a ".wh." name is
    // an ordinary file); layers 1, 2, ... are OCI layers applied in that order, each one's
    // whiteouts hiding what the layers below it hold (image-spec layer.md).
    util::Status run(ArchiveReader& reader, uint32_t layer = 0);

  private:
    using Node = TarTree::Node;
    using Head = TarTree::Head;

    void issue(const std::string& name, std::string problem, bool kept);
    util::Status add(const ArchiveEntry& entry);
    // A ".wh." entry of a layer: true when `path` is one (it is then applied, never added).
    bool apply_whiteout(const std::string& path);
    // Drops what lower layers hold below `path` (and `path` itself when `self`).
    void remove_lower(const std::string& path, bool self);
    bool make_parents(const std::string& name, const std::string& path);
    bool place(const std::string& name, const std::string& path, Node node);
    util::Status add_regular(const ArchiveEntry& entry, const std::string& path, Node node);
    bool retained(const std::string& path) const;
    util::Result<std::string> read_rest(std::span<const std::byte> head, uint64_t size);
    void add_hardlink(const ArchiveEntry& entry, const std::string& path);
    void erase_node(const std::string& path);

    TarTree& m_tree;
    ArchiveReader* m_reader = nullptr;
    uint32_t m_layer = 0;
    std::string m_last_parent = "/";  // parents known to exist, to skip re-checking them
};

}  // namespace rootlock::fs
