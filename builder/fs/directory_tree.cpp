// DirectoryTree: lstat(2), readlink(2), opendir(3) and open(2) with O_NOFOLLOW under a host
// directory, errors turned into "PATH: problem" values with fixed (locale-free) texts.
#include "fs/directory_tree.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <optional>

#include "fs/head_reads.hpp"
#include "fs/path_resolve.hpp"
#include "fs/tree_errors.hpp"

namespace rootlock::fs {

namespace {

// How much of an ELF file a probe reads at once: all of most shared objects' headers, dynamic
// symbols, versions and relocations (two thirds of a Debian root's objects are smaller), for
// one read(2) instead of a dozen; larger objects read the rest where it lies.
constexpr size_t k_elf_prefetch = size_t{64} << 10;

uint64_t mix64(uint64_t value) {
    // splitmix64's finaliser: spreads (dev, ino) so that two files never share an identity in
    // practice, and no file gets the reserved identity 0.
    value += 0x9e3779b97f4a7c15ULL;
    value = (value ^ (value >> 30U)) * 0xbf58476d1ce4e5b9ULL;
    value = (value ^ (value >> 27U)) * 0x94d049bb133111ebULL;
    return value ^ (value >> 31U);
}

NodeKind kind_of(mode_t mode) {
    if (S_ISREG(mode))
        return NodeKind::regular;
    if (S_ISDIR(mode))
        return NodeKind::directory;
    if (S_ISLNK(mode))
        return NodeKind::symlink;
    return NodeKind::other;
}

uint64_t identity_of(dev_t device, ino_t inode) {
    const uint64_t identity =
        mix64(mix64(static_cast<uint64_t>(device)) ^ static_cast<uint64_t>(inode));
    return identity == 0 ? 1 : identity;
}

NodeStat to_node_stat(const struct stat& st) {
    NodeStat stat;
    stat.kind = kind_of(st.st_mode);
    stat.size = static_cast<uint64_t>(st.st_size);
    stat.mode = static_cast<uint32_t>(st.st_mode) & 07777U;
    stat.identity = identity_of(st.st_dev, st.st_ino);
    return stat;
}

struct FdCloser {
    int fd = -1;
    ~FdCloser() {
        if (fd >= 0)
            ::close(fd);
    }
};

util::Error errno_error(std::string_view path, int error_number) {
    return util::make_error(std::string(path), errno_text(error_number));
}

}  // namespace

util::Result<std::unique_ptr<DirectoryTree>> DirectoryTree::create(std::string host_root) {
    while (host_root.size() > 1 && host_root.back() == '/')
        host_root.pop_back();
    if (host_root.empty() || host_root.find('\0') != std::string::npos) {
        return util::make_error(host_root, "not a directory");
    }
    struct stat st {};
    if (::stat(host_root.c_str(), &st) != 0)
        return errno_error(host_root, errno);
    if (!S_ISDIR(st.st_mode))
        return not_directory(host_root);
    if (host_root == "/")
        host_root.clear();
    return std::unique_ptr<DirectoryTree>(new DirectoryTree(std::move(host_root)));
}

std::optional<std::string> DirectoryTree::host_path(std::string_view path) const {
    if (path.find('\0') != std::string_view::npos)
        return std::nullopt;
    std::string norm = normalize(path);
    // The root itself with a trailing slash: when it is a link (a live container's
    // /proc/PID/root), O_NOFOLLOW must not refuse it; the kernel follows a final component
    // that has to be a directory.
    if (norm == "/")
        return m_host_root.empty() ? "/" : m_host_root + "/";
    return m_host_root + norm;
}

std::optional<NodeStat> DirectoryTree::lstat(std::string_view path) const {
    auto host = host_path(path);
    if (!host)
        return std::nullopt;
    struct stat st {};
    if (::lstat(host->c_str(), &st) != 0)
        return std::nullopt;
    return to_node_stat(st);
}

util::Result<std::string> DirectoryTree::readlink(std::string_view path) const {
    auto host = host_path(path);
    if (!host)
        return no_such_path(path);
    std::string target(256, '\0');
    while (true) {
        ssize_t length = ::readlink(host->c_str(), target.data(), target.size());
        if (length < 0) {
            if (errno == EINVAL)
                return not_symlink(path);
            return errno_error(path, errno);
        }
        if (static_cast<size_t>(length) < target.size()) {
            target.resize(static_cast<size_t>(length));
            return target;
        }
        // Truncated: the target may be longer than the buffer; PATH_MAX bounds the growth.
        if (target.size() >= (1U << 16))
            return util::make_error(std::string(path), "symlink target too long");
        target.resize(target.size() * 2);
    }
}

template <typename OnEntry>
util::Status DirectoryTree::read_directory(std::string_view path, const OnEntry& entry) const {
    auto host = host_path(path);
    if (!host)
        return no_such_path(path);
    FdCloser directory{::open(host->c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)};
    if (directory.fd < 0)
        return errno_error(path, errno == ELOOP ? ENOTDIR : errno);
    // getdents64(2) into one buffer per thread: opendir(3) adds an fcntl and a 32 KiB
    // allocation to every directory (4,700 of them under a torch root's /usr) for the same
    // calls. Records are struct dirent64, which is struct dirent on 64-bit glibc.
    static_assert(sizeof(struct dirent) == sizeof(struct dirent64));
    thread_local std::array<uint64_t, 4096> buffer;  // 32 KiB, 8-byte aligned as records are
    while (true) {
        const ssize_t got = ::getdents64(directory.fd, buffer.data(), sizeof(buffer));
        if (got < 0) {
            if (errno == EINTR)
                continue;
            return errno_error(path, errno);
        }
        if (got == 0)
            return util::ok_status();
        const auto* bytes = reinterpret_cast<const std::byte*>(buffer.data());
        for (ssize_t at = 0; at < got;) {
            const auto* found = reinterpret_cast<const struct dirent*>(bytes + at);
            at += found->d_reclen;
            const std::string_view name = found->d_name;
            if (name == "." || name == "..")
                continue;
            entry(directory.fd, *found);
        }
    }
}

util::Result<std::vector<DirEntry>> DirectoryTree::list(std::string_view path) const {
    std::vector<DirEntry> entries;
    auto status = read_directory(path, [&](int dir_fd, const struct dirent& found) {
        const char* name = found.d_name;
        NodeKind kind = NodeKind::other;
        switch (found.d_type) {
            case DT_REG:
                kind = NodeKind::regular;
                break;
            case DT_DIR:
                kind = NodeKind::directory;
                break;
            case DT_LNK:
                kind = NodeKind::symlink;
                break;
            case DT_UNKNOWN: {
                // Some filesystems do not fill d_type; ask without following the entry.
                struct stat st {};
                if (::fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
                    kind = kind_of(st.st_mode);
                break;
            }
            default:
                break;
        }
        entries.push_back(DirEntry{name, kind});
    });
    if (!status.ok())
        return status.error();
    std::sort(entries.begin(), entries.end(),
              [](const DirEntry& a, const DirEntry& b) { return a.name < b.name; });
    return entries;
}

util::Result<std::vector<StatEntry>> DirectoryTree::list_stats(std::string_view path) const {
    std::vector<StatEntry> entries;
    // Every entry but a mount point (a directory, whose identity the walk does not use) lives
    // on the directory's own device.
    std::optional<dev_t> device;
    auto status = read_directory(path, [&](int dir_fd, const struct dirent& found) {
        NodeStat stat;
        switch (found.d_type) {
            case DT_REG:
                stat.kind = NodeKind::regular;
                break;
            case DT_DIR:
                stat.kind = NodeKind::directory;
                break;
            case DT_LNK:
                stat.kind = NodeKind::symlink;
                break;
            case DT_UNKNOWN: {
                struct stat st {};
                if (::fstatat(dir_fd, found.d_name, &st, AT_SYMLINK_NOFOLLOW) == 0)
                    entries.push_back(StatEntry{found.d_name, to_node_stat(st)});
                return;
            }
            default:
                break;  // a device, FIFO or socket: `other`
        }
        if (!device) {
            struct stat st {};
            if (::fstat(dir_fd, &st) != 0)
                return;  // identities stay unknown (0)
            device = st.st_dev;
        }
        stat.size = NodeStat::k_unknown_size;
        stat.identity = identity_of(*device, found.d_ino);
        entries.push_back(StatEntry{found.d_name, stat});
    });
    if (!status.ok())
        return status.error();
    std::sort(entries.begin(), entries.end(),
              [](const StatEntry& a, const StatEntry& b) { return a.name < b.name; });
    return entries;
}

ElfProbe DirectoryTree::probe_regular_elf(std::string_view path, bool symbols) const {
    if (auto cached = cached_elf(path, symbols))
        return *std::move(cached);
    auto host = host_path(path);
    if (!host)
        return probe_elf(path, symbols);
    const int fd = ::open(host->c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0)
        return probe_elf(path, symbols);
    // Anything but a regular file (a FIFO, a device) is refused here and classified by
    // probe_elf. The prefetched start settles a file that is not ELF, and serves most of a
    // small object's reads.
    auto source = util::FileSource::adopt(fd, std::string(path), k_elf_prefetch);
    if (!source.ok())
        return probe_elf(path, symbols);
    const auto head = (*source)->head();
    // A regular file's prefetch stops short only at its end (or where it shrank).
    if (head.size() == std::min<uint64_t>((*source)->size(), k_elf_prefetch)) {
        if (auto settled = classify_head(head.first(std::min(head.size(), k_elf_header_size))))
            return *std::move(settled);
    }
    return probe_opened(
        path, util::Result<std::unique_ptr<util::ByteSource>>(std::move(source).value()), symbols);
}

std::vector<ElfProbe> DirectoryTree::probe_regular_elf_batch(
    std::string_view dir, std::span<const std::string_view> names, bool symbols) const {
    std::vector<ElfProbe> probes(names.size());
    // Whole host paths, not names relative to the directory opened once more: the kernel's
    // lookup of a cached path is cheap, and the scan cuts one directory into many batches
    // (6,700 on a torch root), each of which would open and close it.
    std::vector<HeadRead> heads;
    if (auto host = host_path(dir); host && !names.empty()) {
        const std::string prefix = host->back() == '/' ? *host : *host + "/";
        std::vector<std::string> paths;
        paths.reserve(names.size());
        for (std::string_view name : names)
            paths.push_back(prefix + std::string(name));
        const std::vector<std::string_view> views(paths.begin(), paths.end());
        heads = read_heads(AT_FDCWD, views);
    }
    for (size_t i = 0; i < names.size(); ++i) {
        // A whole header that is not ELF settles the file, as it does in probe_regular_elf();
        // the probe cache holds only objects, so most of a root's files never touch it.
        // Anything else (ELF, a short file, an open that failed, no directory) is probed alone,
        // from the cache or by parsing it.
        if (!heads.empty() && heads[i].error == 0 && heads[i].length == k_head_size) {
            if (auto settled = classify_head(heads[i].bytes)) {
                probes[i] = *std::move(settled);
                continue;
            }
        }
        probes[i] = probe_regular_elf(join_path(dir, names[i]), symbols);
    }
    return probes;
}

util::Result<std::string> DirectoryTree::read_file(std::string_view path, uint64_t max_size) const {
    auto host = host_path(path);
    if (!host)
        return no_such_path(path);
    FdCloser file{::open(host->c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)};
    if (file.fd < 0) {
        // O_NOFOLLOW reports a symlink as ELOOP: to the caller it is simply not a regular file.
        if (errno == ELOOP)
            return not_regular_file(path);
        return errno_error(path, errno);
    }
    struct stat st {};
    if (::fstat(file.fd, &st) != 0)
        return errno_error(path, errno);
    if (!S_ISREG(st.st_mode))
        return not_regular_file(path);
    uint64_t size = static_cast<uint64_t>(st.st_size);
    if (size > max_size)
        return file_too_large(path, size, max_size);
    std::string content(static_cast<size_t>(size), '\0');
    size_t done = 0;
    while (done < content.size()) {
        ssize_t n = ::read(file.fd, content.data() + done, content.size() - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return errno_error(path, errno);
        if (n == 0)
            break;  // shrank while reading: keep what is there
        done += static_cast<size_t>(n);
    }
    content.resize(done);
    return content;
}

util::Result<std::unique_ptr<util::ByteSource>> DirectoryTree::open(std::string_view path) const {
    auto host = host_path(path);
    if (!host)
        return no_such_path(path);
    // The last component must not be a symlink on the host, nor a device or FIFO, which opening
    // could act on: lstat first. O_NOFOLLOW and O_NONBLOCK cover what is swapped in after it.
    struct stat st {};
    if (::lstat(host->c_str(), &st) != 0)
        return errno_error(path, errno);
    if (!S_ISREG(st.st_mode))
        return not_regular_file(path);
    auto source = util::FileSource::open(*host, std::string(path), O_NOFOLLOW | O_NONBLOCK);
    if (!source.ok())
        return source.error();
    return std::unique_ptr<util::ByteSource>(std::move(source).value());
}

}  // namespace rootlock::fs
