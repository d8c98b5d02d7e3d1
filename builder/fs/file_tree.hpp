// FileTree: one read-only view of a future or present root filesystem, whatever holds it (a
// directory, a tarball read once, an in-memory map in tests, or another tree with paths hidden).
// Paths are absolute inside the root and canonical: no ".", "..", or symlinks in directory parts.
// resolve() in path_resolve.hpp turns any path into a canonical one, confined to the root.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "elf/elf_info.hpp"
#include "util/byte_source.hpp"
#include "util/result.hpp"

namespace rootlock::fs {

enum class NodeKind : uint8_t { regular, directory, symlink, other };

struct NodeStat {
    // `size` of an entry a listing gave without asking its size (see list_stats).
    static constexpr uint64_t k_unknown_size = UINT64_MAX;

    NodeKind kind = NodeKind::other;
    uint64_t size = 0;
    uint32_t mode = 0;  // permission bits
    // Two paths with equal identity are the same file (hard links): dev/inode for a directory,
    // the link group for a tarball. Zero means unknown.
    uint64_t identity = 0;
};

struct DirEntry {
    std::string name;
    NodeKind kind = NodeKind::other;
};

// A directory entry with what lstat says of it, for walk().
struct StatEntry {
    std::string name;
    NodeStat stat;
};

// What opening a path as a shared object gives, classified the way ld.so's open_verify does.
struct ElfProbe {
    enum class Outcome : uint8_t {
        missing,      // no such file (the search goes on)
        not_regular,  // a directory or device (the search goes on)
        too_short,    // shorter than an ELF header: ld.so stops with "file too short"
        not_elf,      // no ELF magic: ld.so stops with "invalid ELF header"
        malformed,    // ELF magic but unreadable metadata: reported with `error`
        elf,          // parsed; `info` is set
    };
    Outcome outcome = Outcome::missing;
    std::shared_ptr<const elf::ElfInfo> info;
    std::string error;  // the located reader error for `malformed`
    // e_ident[EI_CLASS] whenever the magic was there, even for `malformed`: ld.so checks the
    // class byte before anything else and skips an object of the other class silently.
    uint8_t ident_class = 0;
};

// `dir`/`name`, for a canonical directory path and one name in it.
std::string join_path(std::string_view dir, std::string_view name);

// e_ident[EI_CLASS] of bytes that start with the ELF magic (0 otherwise).
uint8_t ident_class_of(std::span<const std::byte> head);

class FileTree {
  public:
    virtual ~FileTree() = default;
    FileTree() = default;
    FileTree(const FileTree&) = delete;
    FileTree& operator=(const FileTree&) = delete;

    // What this tree is, for messages: "/srv/root", "image.tar.zst", "memory".
    virtual std::string describe() const = 0;

    // Metadata of `path` itself (a symlink is not followed); nullopt when it does not exist.
    virtual std::optional<NodeStat> lstat(std::string_view path) const = 0;
    // The target text of the symlink at `path`.
    virtual util::Result<std::string> readlink(std::string_view path) const = 0;
    // The entries of the directory at `path`, sorted bytewise by name.
    virtual util::Result<std::vector<DirEntry>> list(std::string_view path) const = 0;
    // list() with each entry's kind and identity, what walk() needs; an entry gone before it
    // was asked is left out. The default lstats each joined path; a tree over the host takes
    // them from the directory itself where it can (its size then k_unknown_size, its mode 0),
    // sparing the kernel a lookup per entry (51,000 of them on a torch root).
    virtual util::Result<std::vector<StatEntry>> list_stats(std::string_view path) const;
    // The whole content of a regular file no larger than `max_size` bytes.
    virtual util::Result<std::string> read_file(std::string_view path,
                                                uint64_t max_size = 64U << 20) const = 0;

    // The file at `path` as an ELF object, parsed once and cached (headers and dynamic metadata,
    // and symbols when `symbols` is set).
    virtual ElfProbe probe_elf(std::string_view path, bool symbols = false) const;
    // probe_elf() of a path the caller has just seen to be a regular file (walk() reports it):
    // the same answer; a tree that can open a file only if it is still regular skips asking
    // what the path is first. The default is probe_elf().
    virtual ElfProbe probe_regular_elf(std::string_view path, bool symbols = false) const;
    // probe_regular_elf() of each of `names` in the directory `dir` (all of them regular files
    // in a listing just read), in the order given: a tree over the host reads the first bytes
    // of the whole batch with one system call (see head_reads.hpp) and opens again only the
    // files that start as ELF. The default probes one by one.
    virtual std::vector<ElfProbe> probe_regular_elf_batch(std::string_view dir,
                                                          std::span<const std::string_view> names,
                                                          bool symbols = false) const;

    // Random access to the regular file at `path`, where the tree holds its bytes (a directory,
    // an overlay's base, a file added with content); a tarball read once refuses. For readers of
    // what probe_elf does not keep: the device code in an object's .nv_fatbin section.
    util::Result<std::unique_ptr<util::ByteSource>> open_bytes(std::string_view path) const {
        return open(path);
    }

  protected:
    // Random access to a regular file's bytes, for the default probe_elf. Trees that cannot
    // (a tarball read once) fill the cache with remember_elf() instead and return an error here.
    virtual util::Result<std::unique_ptr<util::ByteSource>> open(std::string_view path) const = 0;
    void remember_elf(const std::string& path, ElfProbe probe, bool with_symbols) const;
    // The cached probe of `path` when it answers a request for `symbols`.
    std::optional<ElfProbe> cached_elf(std::string_view path, bool symbols) const;
    // Classifies what open() gave for `path` (an open error is `malformed`) and caches objects.
    ElfProbe probe_opened(std::string_view path,
                          const util::Result<std::unique_ptr<util::ByteSource>>& source,
                          bool symbols) const;

  private:
    struct CachedProbe {
        ElfProbe probe;
        bool with_symbols = false;
    };
    mutable std::mutex m_cache_mutex;
    mutable std::unordered_map<std::string, CachedProbe> m_elf_cache;
};

// Classifies `source` the way ld.so's open_verify would, then parses it when it is ELF.
ElfProbe probe_source(const util::ByteSource& source, bool symbols);

// The ELF header's size (ELF64's; ld.so reads this much before anything else).
inline constexpr uint64_t k_elf_header_size = 64;
// probe_source()'s answer for a file whose first bytes are `head` (the first k_elf_header_size,
// or all of a shorter file) when they settle it: too short or not ELF. nullopt for an ELF
// header, which only parsing the whole file classifies.
std::optional<ElfProbe> classify_head(std::span<const std::byte> head);

}  // namespace rootlock::fs
