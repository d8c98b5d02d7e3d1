// DirectoryTree: a FileTree over a directory on the host (an unpacked rootfs, a live container's
// root). Paths are taken inside that directory; the tree itself never follows a host symlink.
#pragma once

#include <memory>
#include <string>

#include "fs/file_tree.hpp"

namespace rootlock::fs {

class DirectoryTree final : public FileTree {
  public:
    // Fails with "HOST_ROOT: ..." when `host_root` is missing or not a directory. A trailing
    // slash is dropped; "/" itself is allowed (a live root).
    static util::Result<std::unique_ptr<DirectoryTree>> create(std::string host_root);

    const std::string& host_root() const { return m_host_root; }

    std::string describe() const override { return m_host_root.empty() ? "/" : m_host_root; }
    // Paths must be canonical (see FileTree): the kernel follows host symlinks in directory
    // parts, so callers resolve() first; the tree only removes ".." lexically to stay inside.
    std::optional<NodeStat> lstat(std::string_view path) const override;
    util::Result<std::string> readlink(std::string_view path) const override;
    util::Result<std::vector<DirEntry>> list(std::string_view path) const override;
    // Kinds from d_type, identities from d_ino and the directory's device: one fstat(2) per
    // directory. Only an entry whose kind the filesystem leaves out is fstatat(2)ed.
    util::Result<std::vector<StatEntry>> list_stats(std::string_view path) const override;
    // Opens with O_NOFOLLOW | O_NONBLOCK and reads the header, without the lstat before: a file
    // that is too short or not ELF (most of a root) is settled by those bytes alone; an ELF
    // header is fstat(2)ed and parsed. A path that no longer opens goes to probe_elf(), which
    // classifies it.
    ElfProbe probe_regular_elf(std::string_view path, bool symbols = false) const override;
    std::vector<ElfProbe> probe_regular_elf_batch(std::string_view dir,
                                                  std::span<const std::string_view> names,
                                                  bool symbols = false) const override;
    util::Result<std::string> read_file(std::string_view path,
                                        uint64_t max_size = 64U << 20) const override;

  protected:
    util::Result<std::unique_ptr<util::ByteSource>> open(std::string_view path) const override;

  private:
    explicit DirectoryTree(std::string host_root) : m_host_root(std::move(host_root)) {}
    // host_root + the normalized path; nullopt for a path holding a NUL byte.
    std::optional<std::string> host_path(std::string_view path) const;
    // Calls `entry(dir_fd, dirent)` for each entry but "." and "..".
    template <typename OnEntry>
    util::Status read_directory(std::string_view path, const OnEntry& entry) const;

    std::string m_host_root;  // without a trailing slash; empty for the host's own "/"
};

}  // namespace rootlock::fs
