// The content store on disk: POSIX calls for the atomic temp-file-then-rename protocol and the
// verify-before-serve rule, with the per-instance memo that spares re-hashing big blobs.
#include "index/content_store.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "util/cache_damage.hpp"
#include "util/leftovers.hpp"
#include "util/sha256.hpp"

namespace rootlock::index {

namespace {

std::string trimmed(std::string root) {
    while (root.size() > 1 && root.back() == '/')
        root.pop_back();
    return root;
}

util::Error errno_error(const std::string& path) {
    return util::make_io_error(path, std::strerror(errno));
}

// Closes a descriptor when the scope ends, whatever path the code took out of it.
class FdGuard {
  public:
    explicit FdGuard(int fd) : m_fd(fd) {}
    ~FdGuard() {
        if (m_fd >= 0)
            ::close(m_fd);
    }
    FdGuard(const FdGuard&) = delete;
    FdGuard& operator=(const FdGuard&) = delete;
    int get() const { return m_fd; }
    // Closes now and reports close's own failure, which for NFS can be a lost write.
    bool close_now() {
        int fd = std::exchange(m_fd, -1);
        return ::close(fd) == 0;
    }

  private:
    int m_fd;
};

util::Status write_all(int fd, std::string_view bytes, const std::string& path) {
    size_t done = 0;
    while (done < bytes.size()) {
        ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return errno_error(path);
        }
        done += static_cast<size_t>(n);
    }
    return util::ok_status();
}

std::string parent_of(const std::string& path) {
    auto slash = path.rfind('/');
    return slash == std::string::npos || slash == 0 ? std::string("/") : path.substr(0, slash);
}

// Makes the rename that put a file in `dir` durable; without it a crash can lose the entry.
util::Status sync_directory(const std::string& dir) {
    FdGuard fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (fd.get() < 0 || ::fsync(fd.get()) != 0)
        return errno_error(dir);
    return util::ok_status();
}

util::Error bad_digest(const std::string& digest) {
    return util::make_error(digest.empty() ? "\"\"" : digest, "not a sha256 digest");
}

int64_t to_ns(const struct timespec& time) {
    return static_cast<int64_t>(time.tv_sec) * 1000000000 + static_cast<int64_t>(time.tv_nsec);
}

}  // namespace

ContentStore::ContentStore(std::string root)
    : m_root(trimmed(std::move(root))), m_in_use(m_root, /*exclusive=*/false) {
    // Each temporary names its process, so that every run clears the temporaries of runs that
    // died (kill -9) before it starts, without touching a live run's.
    util::remove_dead_leftovers(m_root + "/tmp", "part-");
}

std::string ContentStore::blob_path(std::string_view sha256) const {
    std::string path = m_root + "/blobs/sha256/";
    path += sha256.substr(0, 2);
    path += '/';
    if (sha256.size() > 2)
        path += sha256.substr(2);
    return path;
}

util::Result<std::optional<std::string>> ContentStore::find(const std::string& sha256) {
    if (!util::is_sha256_hex(sha256))
        return bad_digest(sha256);
    std::string path = blob_path(sha256);
    struct stat info {};
    if (::lstat(path.c_str(), &info) != 0) {
        if (errno == ENOENT || errno == ENOTDIR)
            return std::optional<std::string>();
        return errno_error(path);
    }
    if (!S_ISREG(info.st_mode))
        return util::make_error(path, "not a regular file");
    FileStamp stamp{info.st_dev, info.st_ino, static_cast<uint64_t>(info.st_size),
                    to_ns(info.st_mtim), to_ns(info.st_ctim)};
    if (remembered(path, stamp))
        return std::optional<std::string>(path);
    auto digest = util::sha256_file(path);
    if (!digest)
        return digest.error();
    if (util::Sha256::to_hex(*digest) == sha256) {
        remember(path, stamp);
        return std::optional<std::string>(path);
    }
    // A poisoned blob (disk corruption, a hand edit) must not be served, and it would shadow
    // the good copy the next download brings.
    forget(path);
    if (auto refused =
            util::discard_damaged(path,
                                  "damaged: its sha256 is " + util::Sha256::to_hex(*digest) +
                                      ", the name it is stored under says " + sha256,
                                  m_offline, "fetch it again"))
        return *refused;
    return std::optional<std::string>();
}

util::Result<std::string> ContentStore::temp_path() {
    std::string dir = m_root + "/tmp";
    auto made = make_dirs(dir);
    if (!made)
        return made.error();
    std::string pattern = dir + "/part-" + std::to_string(::getpid()) + "-XXXXXX";
    std::vector<char> buffer(pattern.begin(), pattern.end());
    buffer.push_back('\0');
    int fd = ::mkostemp(buffer.data(), O_CLOEXEC);
    if (fd < 0)
        return errno_error(pattern);
    ::close(fd);
    return std::string(buffer.data());
}

util::Result<std::string> ContentStore::commit(const std::string& temp_path,
                                               const std::string& sha256) {
    if (!util::is_sha256_hex(sha256))
        return bad_digest(sha256);
    {
        FdGuard fd(::open(temp_path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
        if (fd.get() < 0)
            return errno_error(temp_path);
        if (::fchmod(fd.get(), 0644) != 0 || ::fsync(fd.get()) != 0 || !fd.close_now())
            return errno_error(temp_path);
    }
    std::string path = blob_path(sha256);
    std::string dir = parent_of(path);
    auto made = make_dirs(dir);
    if (!made)
        return made.error();
    if (::rename(temp_path.c_str(), path.c_str()) != 0)
        return errno_error(path);
    auto synced = sync_directory(dir);
    if (!synced)
        return synced.error();
    // Stamped after the rename: some filesystems touch ctime when an inode is renamed.
    struct stat info {};
    if (::lstat(path.c_str(), &info) != 0)
        return errno_error(path);
    remember(path, FileStamp{info.st_dev, info.st_ino, static_cast<uint64_t>(info.st_size),
                             to_ns(info.st_mtim), to_ns(info.st_ctim)});
    return path;
}

void ContentStore::discard(const std::string& temp_path) {
    ::unlink(temp_path.c_str());
}

util::Result<StoredBlob> ContentStore::put_bytes(std::string_view bytes) {
    std::string sha256 = util::sha256_hex(bytes);
    auto found = find(sha256);
    if (!found)
        return found.error();
    if (found->has_value())
        return StoredBlob{sha256, bytes.size(), **found};
    auto temp = temp_path();
    if (!temp)
        return temp.error();
    util::Status written = [&]() -> util::Status {
        FdGuard fd(::open(temp->c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOFOLLOW));
        if (fd.get() < 0)
            return errno_error(*temp);
        auto status = write_all(fd.get(), bytes, *temp);
        if (status && !fd.close_now())
            return errno_error(*temp);
        return status;
    }();
    if (!written) {
        discard(*temp);
        return written.error();
    }
    auto committed = commit(*temp, sha256);
    if (!committed) {
        discard(*temp);
        return committed.error();
    }
    return StoredBlob{sha256, bytes.size(), *committed};
}

util::Status ContentStore::make_dirs(const std::string& path) const {
    // mkdir one component at a time so every directory gets 0755 (less the umask), and a
    // component that exists but is not a directory is reported by name.
    size_t pos = 0;
    while (pos != std::string::npos) {
        pos = path.find('/', pos + 1);
        std::string prefix = path.substr(0, pos);
        if (prefix.empty())
            continue;
        if (::mkdir(prefix.c_str(), 0755) == 0)
            continue;
        if (errno != EEXIST)
            return errno_error(prefix);
        struct stat info {};
        if (::stat(prefix.c_str(), &info) != 0)
            return errno_error(prefix);
        if (!S_ISDIR(info.st_mode))
            return util::make_error(prefix, "not a directory");
    }
    return util::ok_status();
}

void ContentStore::remember(const std::string& path, const FileStamp& stamp) {
    std::lock_guard lock(m_memo_mutex);
    m_verified[path] = stamp;
}

bool ContentStore::remembered(const std::string& path, const FileStamp& stamp) const {
    std::lock_guard lock(m_memo_mutex);
    auto it = m_verified.find(path);
    return it != m_verified.end() && it->second == stamp;
}

void ContentStore::forget(const std::string& path) {
    std::lock_guard lock(m_memo_mutex);
    m_verified.erase(path);
}

}  // namespace rootlock::index
