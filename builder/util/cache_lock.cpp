// flock(2) on one file: released by the kernel when the process dies, so a killed run never
// leaves the cache locked.
#include "util/cache_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>

namespace rootlock::util {

CacheLock::CacheLock(const std::string& cache_dir, bool exclusive) {
    m_fd = ::open((cache_dir + "/.in-use").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (m_fd < 0)
        return;
    while (::flock(m_fd, exclusive ? LOCK_EX : LOCK_SH) != 0) {
        if (errno != EINTR) {
            ::close(m_fd);
            m_fd = -1;
            return;
        }
    }
}

CacheLock::~CacheLock() {
    if (m_fd >= 0)
        ::close(m_fd);
}

}  // namespace rootlock::util
