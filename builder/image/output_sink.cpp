// OutputSink: a bounded queue of byte blocks, drained by one thread that hashes and writes.
#include "image/output_sink.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "fs/tree_errors.hpp"

namespace rootlock::image {

OutputSink::OutputSink(int fd, std::string host_path)
    : m_host_path(std::move(host_path)), m_fd(fd), m_thread([this] { run(); }) {}

OutputSink::~OutputSink() {
    {
        std::lock_guard lock(m_mutex);
        m_abandon = true;
        m_closing = true;
    }
    m_changed.notify_all();
    if (m_thread.joinable())
        m_thread.join();
    if (m_fd >= 0)
        ::close(m_fd);
}

util::Status OutputSink::write(std::span<const std::byte> bytes) {
    return write(std::vector<std::byte>(bytes.begin(), bytes.end()));
}

util::Status OutputSink::write(std::vector<std::byte>&& bytes) {
    std::unique_lock lock(m_mutex);
    if (m_finished)
        return util::make_error(m_host_path, "written after the end (a bug)");
    // A block larger than the bound still goes in, alone, so that nothing waits forever.
    m_changed.wait(lock, [&] {
        return m_error.has_value() || m_queued == 0 || m_queued + bytes.size() <= k_max_queued;
    });
    if (m_error)
        return *m_error;
    const size_t size = bytes.size();
    m_queue.push_back(std::move(bytes));
    m_queued += size;
    m_accepted += size;
    lock.unlock();
    m_changed.notify_all();
    return util::ok_status();
}

util::Result<util::Sha256Digest> OutputSink::finish() {
    {
        std::lock_guard lock(m_mutex);
        if (m_finished)
            return util::make_error(m_host_path, "finished twice (a bug)");
        m_finished = true;
        m_closing = true;
    }
    m_changed.notify_all();
    m_thread.join();
    if (m_error)
        return *m_error;
    if (::fsync(m_fd) != 0)
        return util::make_error(m_host_path, fs::errno_text(errno));
    const int fd = m_fd;
    m_fd = -1;
    if (::close(fd) != 0)
        return util::make_error(m_host_path, fs::errno_text(errno));
    return m_hash.digest();
}

util::Status OutputSink::write_all(std::span<const std::byte> bytes) {
    size_t done = 0;
    while (done < bytes.size()) {
        const ssize_t count = ::write(m_fd, bytes.data() + done, bytes.size() - done);
        if (count < 0 && errno == EINTR)
            continue;
        if (count <= 0)
            return util::make_error(m_host_path, fs::errno_text(count < 0 ? errno : EIO));
        done += static_cast<size_t>(count);
    }
    return util::ok_status();
}

void OutputSink::run() {
    while (true) {
        std::vector<std::byte> block;
        {
            std::unique_lock lock(m_mutex);
            m_changed.wait(lock, [&] { return m_closing || !m_queue.empty(); });
            if (m_abandon || m_queue.empty())
                return;
            block = std::move(m_queue.front());
            m_queue.pop_front();
        }
        m_hash.update(block);
        util::Status written = write_all(block);
        m_written += block.size();
        if (written.ok() && m_written - m_flushed >= k_flush_every) {
            // Starts writeback of what is written so far without waiting for it, so that the
            // final fsync finds little left to do. Only a hint: its errors are fsync's to report.
            (void)::sync_file_range(m_fd, static_cast<off_t>(m_flushed),
                                    static_cast<off_t>(m_written - m_flushed),
                                    SYNC_FILE_RANGE_WRITE);
            m_flushed = m_written;
        }
        {
            std::lock_guard lock(m_mutex);
            m_queued -= block.size();
            if (!written.ok()) {
                m_error = written.error();
                m_queue.clear();
                m_queued = 0;
            }
        }
        m_changed.notify_all();
        if (!written.ok())
            return;
    }
}

}  // namespace rootlock::image
