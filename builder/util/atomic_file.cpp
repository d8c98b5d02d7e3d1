// Atomic writes with POSIX calls: mkstemp beside the target (same filesystem, so rename is
// atomic), write everything, fsync, rename, then fsync the directory so the rename survives.
#include "util/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "util/leftovers.hpp"

namespace rootlock::util {

namespace {

// A write of rootlock's own output failed (a full disk, a read-only directory): exit 3.
Error errno_error(const std::string& path) {
    return make_io_error(path, std::strerror(errno));
}

// A file the caller named could not be read (missing, a directory): bad input, exit 2.
Error read_error(const std::string& path) {
    return make_error(path, std::strerror(errno));
}

std::string parent_of(const std::string& path) {
    const size_t slash = path.rfind('/');
    if (slash == std::string::npos)
        return ".";
    return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

Status make_directories(const std::string& path) {
    if (path.empty() || path == "/" || path == ".")
        return ok_status();
    struct stat info {};
    if (::stat(path.c_str(), &info) == 0) {
        if (S_ISDIR(info.st_mode))
            return ok_status();
        return make_error(path, "exists and is not a directory");
    }
    ROOTLOCK_TRY(parent, make_directories(parent_of(path)));
    (void)parent;
    if (::mkdir(path.c_str(), 0755) != 0 && errno != EEXIST)
        return errno_error(path);
    return ok_status();
}

Result<StagedFile> StagedFile::stage(const std::string& path, std::string_view bytes) {
    const std::string directory = parent_of(path);
    ROOTLOCK_TRY(made, make_directories(directory));
    (void)made;
    const size_t slash = path.rfind('/');
    const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
    // The process in the name: a killed run's temporary of the same target is removed here,
    // by the next write of it (util/leftovers), never a live run's.
    remove_dead_leftovers(directory, "." + base + ".tmp-");
    std::string temp =
        (directory == "." && slash == std::string::npos ? std::string() : directory + "/") + "." +
        base + ".tmp-" + std::to_string(::getpid()) + "-XXXXXX";
    std::vector<char> name(temp.begin(), temp.end());
    name.push_back('\0');
    const int fd = ::mkstemp(name.data());
    if (fd < 0)
        return errno_error(path);
    StagedFile staged;
    staged.m_path = path;
    staged.m_temporary.assign(name.data());
    auto fail = [&]() {
        const int saved = errno;
        ::close(fd);
        errno = saved;
        return errno_error(path);  // the destructor removes the temporary
    };
    size_t written = 0;
    while (written < bytes.size()) {
        const ssize_t got = ::write(fd, bytes.data() + written, bytes.size() - written);
        if (got < 0) {
            if (errno == EINTR)
                continue;
            return fail();
        }
        written += static_cast<size_t>(got);
    }
    if (::fchmod(fd, 0644) != 0 || ::fsync(fd) != 0)
        return fail();
    if (::close(fd) != 0)
        return errno_error(path);
    return staged;
}

StagedFile::StagedFile(StagedFile&& other) noexcept
    : m_path(std::move(other.m_path)), m_temporary(std::move(other.m_temporary)) {
    other.m_temporary.clear();
}

StagedFile& StagedFile::operator=(StagedFile&& other) noexcept {
    if (this != &other) {
        abandon();
        m_path = std::move(other.m_path);
        m_temporary = std::move(other.m_temporary);
        other.m_temporary.clear();
    }
    return *this;
}

StagedFile::~StagedFile() {
    abandon();
}

void StagedFile::abandon() {
    if (!m_temporary.empty())
        ::unlink(m_temporary.c_str());
    m_temporary.clear();
}

Status StagedFile::commit() {
    if (m_temporary.empty())
        return make_error(m_path, "committed twice (a bug)");
    if (::rename(m_temporary.c_str(), m_path.c_str()) != 0) {
        const int saved = errno;
        abandon();
        errno = saved;
        return errno_error(m_path);
    }
    m_temporary.clear();
    const int dir_fd = ::open(parent_of(m_path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir_fd >= 0) {
        (void)::fsync(dir_fd);
        ::close(dir_fd);
    }
    return ok_status();
}

Status write_file_atomically(const std::string& path, std::string_view bytes) {
    ROOTLOCK_TRY(staged, StagedFile::stage(path, bytes));
    return staged.commit();
}

Result<std::string> read_host_file(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return read_error(path);
    std::string out;
    char buffer[65536];
    for (;;) {
        const ssize_t got = ::read(fd, buffer, sizeof buffer);
        if (got < 0) {
            if (errno == EINTR)
                continue;
            const int saved = errno;
            ::close(fd);
            errno = saved;
            return read_error(path);
        }
        if (got == 0)
            break;
        out.append(buffer, static_cast<size_t>(got));
    }
    ::close(fd);
    return out;
}

Result<std::string> read_host_file_prefix(const std::string& path, size_t limit) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return read_error(path);
    std::string out(limit, '\0');
    size_t have = 0;
    while (have < limit) {
        const ssize_t got = ::read(fd, out.data() + have, limit - have);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        have += static_cast<size_t>(got);
    }
    ::close(fd);
    out.resize(have);
    return out;
}

Result<uint64_t> read_host_file_size(const std::string& path) {
    struct stat info {};
    if (::stat(path.c_str(), &info) != 0)
        return read_error(path);
    return static_cast<uint64_t>(info.st_size);
}

}  // namespace rootlock::util
