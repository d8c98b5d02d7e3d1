// mmap(2) behind RAII. MAP_POPULATE maps every page at once: a caller that reads them all (a
// frame written where its blocks cannot be shared) would otherwise take one fault per page.
#include "util/mapped_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <utility>

namespace rootlock::util {

std::optional<MappedFile> MappedFile::open(const std::string& path, bool keep_descriptor) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return std::nullopt;
    struct stat info {};
    void* data = MAP_FAILED;
    size_t size = 0;
    if (::fstat(fd, &info) == 0 && S_ISREG(info.st_mode) && info.st_size > 0) {
        size = static_cast<size_t>(info.st_size);
        data = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
    }
    if (data == MAP_FAILED || !keep_descriptor) {
        ::close(fd);
        if (data == MAP_FAILED)
            return std::nullopt;
    }
    return MappedFile(static_cast<const std::byte*>(data), size, keep_descriptor ? fd : -1, path);
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : m_data(std::exchange(other.m_data, nullptr)),
      m_size(std::exchange(other.m_size, 0)),
      m_fd(std::exchange(other.m_fd, -1)),
      m_path(std::move(other.m_path)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
    if (this != &other) {
        release();
        m_data = std::exchange(other.m_data, nullptr);
        m_size = std::exchange(other.m_size, 0);
        m_fd = std::exchange(other.m_fd, -1);
        m_path = std::move(other.m_path);
    }
    return *this;
}

MappedFile::~MappedFile() {
    release();
}

void MappedFile::release() {
    if (m_data != nullptr)
        ::munmap(const_cast<std::byte*>(m_data), m_size);
    if (m_fd >= 0)
        ::close(m_fd);
    m_data = nullptr;
    m_size = 0;
    m_fd = -1;
}

}  // namespace rootlock::util
