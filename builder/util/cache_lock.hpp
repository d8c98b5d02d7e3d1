// Who may change a cache while others use it: every run that reads or fills a cache holds
// CACHE/.in-use shared for as long as it runs; `cache verify` and `cache prune`, which remove
// entries others may be about to read, hold it exclusively, so they wait for the runs to end
// and the runs that start meanwhile wait for them.
#pragma once

#include <string>

namespace rootlock::util {

class CacheLock {
  public:
    // Blocks until the lock is had. A cache directory that does not exist (yet) or a lock file
    // that cannot be opened is no error: then nothing is held (held() is false).
    CacheLock(const std::string& cache_dir, bool exclusive);
    ~CacheLock();
    CacheLock(const CacheLock&) = delete;
    CacheLock& operator=(const CacheLock&) = delete;

    bool held() const { return m_fd >= 0; }

  private:
    int m_fd = -1;
};

}  // namespace rootlock::util
