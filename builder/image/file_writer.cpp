// Direct writes in whole aligned chunks from an aligned staging buffer; the tail, and every
// write once the kernel refused one, through the page cache.
#include "image/file_writer.hpp"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>

#include "fs/tree_errors.hpp"

namespace rootlock::image {

namespace {

// How much is written through the cache between two requests to start writeback, so that the
// final fsync finds little left to do.
constexpr uint64_t k_flush_every = uint64_t{32} << 20;

std::byte* allocate_stage() {
    return static_cast<std::byte*>(
        ::operator new[](FileWriter::k_chunk, std::align_val_t{FileWriter::k_alignment}));
}

void free_stage(std::byte* stage) {
    ::operator delete[](stage, std::align_val_t{FileWriter::k_alignment});
}

}  // namespace

FileWriter::FileWriter(int fd, std::string host_path)
    : m_fd(fd), m_host_path(std::move(host_path)), m_stage(allocate_stage(), &free_stage) {
    // Only a regular file written from an aligned offset: on a device O_DIRECT means something
    // else, and O_APPEND's offsets are not ours to align.
    struct stat info {};
    const int flags = ::fcntl(fd, F_GETFL);
    const off_t offset = ::lseek(fd, 0, SEEK_CUR);
    if (flags >= 0 && (flags & O_APPEND) == 0 && ::fstat(fd, &info) == 0 && S_ISREG(info.st_mode) &&
        offset >= 0 && static_cast<uint64_t>(offset) % k_alignment == 0) {
        m_direct = ::fcntl(fd, F_SETFL, flags | O_DIRECT) == 0;
    }
}

FileWriter::~FileWriter() = default;

void FileWriter::stop_direct() {
    const int flags = ::fcntl(m_fd, F_GETFL);
    if (flags >= 0 && ::fcntl(m_fd, F_SETFL, flags & ~O_DIRECT) == 0)
        m_direct = false;
}

util::Status FileWriter::write_out(std::span<const std::byte> bytes) {
    size_t done = 0;
    while (done < bytes.size()) {
        const ssize_t count = ::write(m_fd, bytes.data() + done, bytes.size() - done);
        if (count < 0 && errno == EINTR)
            continue;
        if (count < 0 && errno == EINVAL && m_direct) {
            // The filesystem took the flag but not this write (its blocks are larger, or a
            // short write left the offset unaligned): the rest goes through the cache.
            stop_direct();
            if (!m_direct)
                continue;
        }
        if (count <= 0)
            return util::make_io_error(m_host_path, fs::errno_text(count < 0 ? errno : EIO));
        done += static_cast<size_t>(count);
        m_written += static_cast<uint64_t>(count);
    }
    if (!m_direct && m_written - m_flushed >= k_flush_every) {
        // Only a hint: its errors are fsync's to report.
        (void)::sync_file_range(m_fd, static_cast<off_t>(m_flushed),
                                static_cast<off_t>(m_written - m_flushed), SYNC_FILE_RANGE_WRITE);
        m_flushed = m_written;
    }
    return util::ok_status();
}

util::Status FileWriter::write(std::span<const std::byte> bytes) {
    while (!bytes.empty()) {
        if (!m_direct) {
            if (auto staged = flush(); !staged.ok())
                return staged;
            return write_out(bytes);
        }
        const size_t take = std::min(k_chunk - m_staged, bytes.size());
        std::memcpy(m_stage.get() + m_staged, bytes.data(), take);
        m_staged += take;
        bytes = bytes.subspan(take);
        if (m_staged == k_chunk) {
            m_staged = 0;
            if (auto written = write_out({m_stage.get(), k_chunk}); !written.ok())
                return written;
        }
    }
    return util::ok_status();
}

util::Result<bool> FileWriter::clone(int source_fd, uint64_t length) {
    const uint64_t end = m_written + m_staged;
    if (!m_may_clone || source_fd < 0 || length == 0 || end % k_alignment != 0 ||
        length % k_alignment != 0)
        return false;
    if (m_staged > 0) {
        // Whole blocks (the end is aligned), from the aligned buffer: fit for a direct write.
        const size_t staged = m_staged;
        m_staged = 0;
        if (auto written = write_out({m_stage.get(), staged}); !written.ok())
            return written.error();
    }
    file_clone_range range{};
    range.src_fd = source_fd;
    range.src_offset = 0;
    range.src_length = length;
    range.dest_offset = m_written;
    if (::ioctl(m_fd, FICLONERANGE, &range) != 0) {
        // EOPNOTSUPP, EXDEV, EINVAL (a block size above k_alignment), ...: never again here.
        m_may_clone = false;
        return false;
    }
    // The ioctl leaves the file offset where it was; write() goes on after the shared blocks.
    m_written += length;
    m_cloned += length;
    if (::lseek(m_fd, static_cast<off_t>(m_written), SEEK_SET) < 0)
        return util::make_io_error(m_host_path, fs::errno_text(errno));
    if (m_flushed + length == m_written)
        m_flushed = m_written;  // shared blocks have nothing to write back
    return true;
}

util::Status FileWriter::flush() {
    if (m_staged == 0)
        return util::ok_status();
    // The tail is shorter than a chunk and need not be aligned: it goes through the cache.
    if (m_direct)
        stop_direct();
    if (m_direct)
        return util::make_io_error(m_host_path,
                                   "cannot end direct writes: " + fs::errno_text(errno));
    const size_t staged = m_staged;
    m_staged = 0;
    return write_out({m_stage.get(), staged});
}

}  // namespace rootlock::image
