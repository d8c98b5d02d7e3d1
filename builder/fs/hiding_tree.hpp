// HidingTree: another tree seen with some paths (files or whole directories) removed, to predict
// what an uninstall breaks (`check --without DIST`) without copying or touching the base tree.
#pragma once

#include <set>
#include <string>

#include "fs/file_tree.hpp"

namespace rootlock::fs {

class HidingTree final : public FileTree {
  public:
    // `hidden_paths` are canonical paths inside `base` (normalized here); `base` must outlive
    // this view. Hiding "/" is refused: the root itself always exists (everything below it can
    // still be hidden one entry at a time).
    HidingTree(const FileTree& base, std::set<std::string> hidden_paths);

    bool is_hidden(std::string_view path) const;

    std::string describe() const override;
    std::optional<NodeStat> lstat(std::string_view path) const override;
    util::Result<std::string> readlink(std::string_view path) const override;
    util::Result<std::vector<DirEntry>> list(std::string_view path) const override;
    // The base's own list_stats, filtered: a DirectoryTree base keeps its per-directory fstatat.
    util::Result<std::vector<StatEntry>> list_stats(std::string_view path) const override;
    util::Result<std::string> read_file(std::string_view path,
                                        uint64_t max_size = 64U << 20) const override;
    // Hidden paths are missing; visible ones share the base tree's parse and cache.
    ElfProbe probe_elf(std::string_view path, bool symbols = false) const override;
    ElfProbe probe_regular_elf(std::string_view path, bool symbols = false) const override;
    std::vector<ElfProbe> probe_regular_elf_batch(std::string_view dir,
                                                  std::span<const std::string_view> names,
                                                  bool symbols = false) const override;

  protected:
    // The base's bytes of a path not hidden (probe_elf delegates to the base on its own).
    util::Result<std::unique_ptr<util::ByteSource>> open(std::string_view path) const override;

  private:
    // `entries` of the directory `path` without the hidden ones.
    template <typename Entry>
    std::vector<Entry> visible_entries(std::string_view path, std::vector<Entry> entries) const;

    const FileTree& m_base;
    std::set<std::string, std::less<>> m_hidden;
};

}  // namespace rootlock::fs
