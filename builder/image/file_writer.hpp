// FileWriter: appends an image's bytes to its file past the page cache (O_DIRECT) where the
// filesystem allows, so that writing a large image costs a DMA rather than a copy of every byte
// into the kernel, and leaves the cache to the inputs that the next build reads again.
// Elsewhere (tmpfs, a pipe, /dev/full), or once the kernel refuses a direct write, it writes
// through the cache as before: the bytes are the same either way.
//
// clone() puts another file's bytes in at the end without writing them, where the filesystem
// shares blocks between files (FICLONERANGE: XFS, btrfs, bcachefs): a rebuild's unchanged
// frames cost neither a write nor, at fsync, a flush.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "util/result.hpp"

namespace rootlock::image {

class FileWriter {
  public:
    // Writes to `fd` (not taken: the caller closes it). `host_path` names it in errors.
    FileWriter(int fd, std::string host_path);
    ~FileWriter();
    FileWriter(const FileWriter&) = delete;
    FileWriter& operator=(const FileWriter&) = delete;

    // Appends `bytes`; whole aligned chunks go to the file at once, the rest waits in the
    // staging buffer for more or for flush(). Errors read "HOST_PATH: strerror".
    util::Status write(std::span<const std::byte> bytes);
    // Writes what is staged (the unaligned tail through the cache). After it, every byte
    // write() took is in the file; fsync is the caller's.
    util::Status flush();
    // Appends the first `length` bytes of the file open at `source_fd` by sharing its blocks.
    // False, with nothing appended, where that cannot be done: the filesystem shares no blocks,
    // the files lie on different ones, or the end of this file or `length` is not a whole
    // number of blocks; the caller then write()s the same bytes. Once refused, later calls
    // refuse at once. Errors are only those of writing out the staged bytes first.
    util::Result<bool> clone(int source_fd, uint64_t length);
    // Whether writes still go past the page cache (for tests and benchmarks).
    bool direct() const { return m_direct; }
    // Bytes clone() appended so far.
    uint64_t cloned() const { return m_cloned; }

    // The staging buffer's size and alignment: a multiple of every block size in use.
    static constexpr size_t k_chunk = size_t{8} << 20;
    static constexpr size_t k_alignment = 4096;

  private:
    util::Status write_out(std::span<const std::byte> bytes);
    void stop_direct();

    int m_fd;
    std::string m_host_path;
    bool m_direct = false;
    bool m_may_clone = true;  // until the filesystem refuses once
    std::unique_ptr<std::byte, void (*)(std::byte*)> m_stage;
    size_t m_staged = 0;
    uint64_t m_written = 0;  // bytes in the file
    uint64_t m_flushed = 0;  // bytes whose writeback was requested (buffered writes only)
    uint64_t m_cloned = 0;
};

}  // namespace rootlock::image
