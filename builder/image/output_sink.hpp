// OutputSink: where the image's compressed bytes go. A thread of its own writes them to the file
// and hashes them on the way, so the thread that inflates and tars never waits on the disk and
// the image is never read back to learn its sha256.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "util/result.hpp"
#include "util/sha256.hpp"

namespace rootlock::image {

class OutputSink {
  public:
    // Takes `fd` (open for writing) and closes it in finish() or the destructor. `host_path`
    // names the file in errors ("HOST_PATH: No space left on device").
    OutputSink(int fd, std::string host_path);
    // Stops the writer thread; bytes still queued are dropped, the file is closed unsynced.
    ~OutputSink();
    OutputSink(const OutputSink&) = delete;
    OutputSink& operator=(const OutputSink&) = delete;

    // Queues a copy of `bytes`; blocks while k_max_queued bytes wait. An error the writer thread
    // met (a full disk) is returned by this call or a later one, and by finish().
    util::Status write(std::span<const std::byte> bytes);
    // The same, taking the block itself instead of a copy (a whole compressed frame).
    util::Status write(std::vector<std::byte>&& bytes);
    // Waits for every queued byte to be written, fsyncs and closes the file. Once: later calls
    // give an error.
    util::Result<util::Sha256Digest> finish();
    // Every byte write() took so far: the file's size once finish() succeeded. The caller's
    // thread only.
    uint64_t accepted() const { return m_accepted; }

    // The queue's bound: a few of libarchive's output blocks, far below the memory aim.
    static constexpr size_t k_max_queued = size_t{16} << 20;
    // How much is written between two requests to start writeback.
    static constexpr uint64_t k_flush_every = uint64_t{32} << 20;

  private:
    void run();
    util::Status write_all(std::span<const std::byte> bytes);

    std::string m_host_path;
    int m_fd;
    util::Sha256 m_hash;
    std::mutex m_mutex;
    std::condition_variable m_changed;
    std::deque<std::vector<std::byte>> m_queue;
    size_t m_queued = 0;
    uint64_t m_written = 0;   // bytes written to the file (the thread's own)
    uint64_t m_accepted = 0;  // bytes write() queued (the caller's)
    uint64_t m_flushed = 0;   // bytes whose writeback was started
    bool m_closing = false;   // no more writes: the thread drains the queue and ends
    bool m_abandon = false;   // the destructor: the thread ends without draining
    bool m_finished = false;
    std::optional<util::Error> m_error;  // the first error the thread met
    std::thread m_thread;
};

}  // namespace rootlock::image
