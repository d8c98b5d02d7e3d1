// OutputSink: where the image's compressed bytes go. Two threads of its own take each block, one
// hashing it and one writing it to the file (through FileWriter), so the thread that inflates
// and tars never waits on the disk, the disk never waits on the hash, and the image is never
// read back to learn its sha256.
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

#include "image/file_writer.hpp"
#include "util/mapped_file.hpp"
#include "util/result.hpp"
#include "util/sha256.hpp"

namespace rootlock::image {

class OutputSink {
  public:
    // Takes `fd` (open for writing) and closes it in finish() or the destructor. `host_path`
    // names the file in errors ("HOST_PATH: No space left on device").
    OutputSink(int fd, std::string host_path);
    // Stops the threads; bytes still queued are dropped, the file is closed unsynced.
    ~OutputSink();
    OutputSink(const OutputSink&) = delete;
    OutputSink& operator=(const OutputSink&) = delete;

    // Queues a copy of `bytes`; blocks while k_max_queued bytes wait. An error the writing thread
    // met (a full disk) is returned by this call or a later one, and by finish().
    util::Status write(std::span<const std::byte> bytes);
    // The same, taking the block itself instead of a copy (a whole compressed frame).
    util::Status write(std::vector<std::byte>&& bytes);
    // The same for a mapped file (a frame from the cache), unmapped once written and hashed.
    // When it keeps its descriptor, the writing thread first asks the filesystem to share its
    // blocks with the image (FileWriter::clone) and writes the bytes only where it cannot.
    // With `checksum`, the hashing thread also sums the bytes it reads (frame_checksum) and,
    // when they differ from it, ends the sink with an ErrorKind::integrity error naming the file
    // (damaged_file() then names it too): the bytes may be in the file already, and the caller
    // must write the image again without that frame.
    util::Status write(util::MappedFile&& mapped, std::optional<uint64_t> checksum = {});
    // The mapped file whose bytes did not match their checksum, if one did; once write() or
    // finish() has failed.
    std::optional<std::string> damaged_file();
    // Waits for every queued byte to be written, fsyncs and closes the file. Once: later calls
    // give an error.
    util::Result<util::Sha256Digest> finish();
    // Every byte write() took so far: the file's size once finish() succeeded. The caller's
    // thread only.
    uint64_t accepted() const { return m_accepted; }

    // Whether the file is written past the page cache (see FileWriter).
    bool direct() const { return m_file.direct(); }
    // How many mapped blocks went in by sharing their file's blocks; once finish() returned.
    uint64_t cloned_blocks() const { return m_cloned_blocks; }

    // The queue's bound: a few of libarchive's output blocks, far below the memory aim.
    static constexpr size_t k_max_queued = size_t{16} << 20;

  private:
    // A queued block: bytes of its own, or a mapping of a cached frame.
    struct Block {
        std::vector<std::byte> owned;
        std::optional<util::MappedFile> mapped;
        std::optional<uint64_t> checksum;  // what frame_checksum of the mapped bytes must be
        std::span<const std::byte> bytes() const {
            return mapped ? mapped->bytes() : std::span<const std::byte>(owned);
        }
    };
    util::Status enqueue(Block&& block);

    // Blocks are numbered from 0 in the order write() took them; each thread keeps the number
    // of the next block it will take (`next`), and a block leaves the queue once both are past
    // it. The deque keeps its elements in place, so a thread reads its block unlocked.
    void run_hasher();
    void run_writer();
    // The block numbered `next`, waiting for it; null once the sink is closing with nothing
    // left for this thread, or abandoned.
    const Block* next_block(uint64_t next);
    // Moves `next` past the block just done and drops the blocks both threads are past.
    void done_with(uint64_t& next);
    // Keeps the first error either thread met and ends both threads without draining.
    void abandon(util::Error error);

    std::string m_host_path;
    int m_fd;
    FileWriter m_file;    // the writing thread's own
    util::Sha256 m_hash;  // the hashing thread's own until both are joined
    std::mutex m_mutex;
    std::condition_variable m_changed;
    std::deque<Block> m_queue;
    uint64_t m_front = 0;  // the number of m_queue's first block
    uint64_t m_next_to_hash = 0;
    uint64_t m_next_to_write = 0;
    size_t m_queued = 0;
    uint64_t m_accepted = 0;       // bytes write() queued (the caller's)
    uint64_t m_cloned_blocks = 0;  // the writing thread's until joined
    bool m_closing = false;        // no more writes: the threads drain the queue and end
    bool m_abandon = false;        // the destructor: the threads end without draining
    bool m_finished = false;
    std::optional<util::Error> m_error;    // the first error the writing thread met
    std::optional<std::string> m_damaged;  // a mapped file that failed its checksum
    std::thread m_hasher;
    std::thread m_writer;
};

}  // namespace rootlock::image
