// OutputSink: a bounded queue of byte blocks that a hashing thread and a writing thread each
// walk in order.
#include "image/output_sink.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include <fmt/format.h>

#include "fs/tree_errors.hpp"
#include "image/frame_codec.hpp"

namespace rootlock::image {

OutputSink::OutputSink(int fd, std::string host_path)
    : m_host_path(std::move(host_path)),
      m_fd(fd),
      m_file(fd, m_host_path),
      m_hasher([this] { run_hasher(); }),
      m_writer([this] { run_writer(); }) {}

OutputSink::~OutputSink() {
    {
        std::lock_guard lock(m_mutex);
        m_abandon = true;
        m_closing = true;
    }
    m_changed.notify_all();
    if (m_hasher.joinable())
        m_hasher.join();
    if (m_writer.joinable())
        m_writer.join();
    if (m_fd >= 0)
        ::close(m_fd);
}

util::Status OutputSink::write(std::span<const std::byte> bytes) {
    return write(std::vector<std::byte>(bytes.begin(), bytes.end()));
}

util::Status OutputSink::write(std::vector<std::byte>&& bytes) {
    return enqueue(Block{std::move(bytes), std::nullopt, std::nullopt});
}

util::Status OutputSink::write(util::MappedFile&& mapped, std::optional<uint64_t> checksum) {
    return enqueue(Block{{}, std::move(mapped), checksum});
}

std::optional<std::string> OutputSink::damaged_file() {
    std::lock_guard lock(m_mutex);
    return m_damaged;
}

util::Status OutputSink::enqueue(Block&& block) {
    const size_t size = block.bytes().size();
    std::unique_lock lock(m_mutex);
    if (m_finished)
        return util::make_error(m_host_path, "written after the end (a bug)");
    // A block larger than the bound still goes in, alone, so that nothing waits forever.
    m_changed.wait(lock, [&] {
        return m_error.has_value() || m_queued == 0 || m_queued + size <= k_max_queued;
    });
    if (m_error)
        return *m_error;
    m_queue.push_back(std::move(block));
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
    m_hasher.join();
    m_writer.join();
    if (m_error)
        return *m_error;
    if (auto flushed = m_file.flush(); !flushed.ok())
        return flushed.error();
    if (::fsync(m_fd) != 0)
        return util::make_io_error(m_host_path, fs::errno_text(errno));
    const int fd = m_fd;
    m_fd = -1;
    if (::close(fd) != 0)
        return util::make_io_error(m_host_path, fs::errno_text(errno));
    return m_hash.digest();
}

const OutputSink::Block* OutputSink::next_block(uint64_t next) {
    std::unique_lock lock(m_mutex);
    m_changed.wait(lock, [&] { return m_closing || next < m_front + m_queue.size(); });
    if (m_abandon || next >= m_front + m_queue.size())
        return nullptr;
    return &m_queue[next - m_front];
}

void OutputSink::done_with(uint64_t& next) {
    {
        std::lock_guard lock(m_mutex);
        ++next;
        while (!m_queue.empty() && m_front < std::min(m_next_to_hash, m_next_to_write)) {
            m_queued -= m_queue.front().bytes().size();
            m_queue.pop_front();
            ++m_front;
        }
    }
    m_changed.notify_all();
}

void OutputSink::run_hasher() {
    while (const Block* block = next_block(m_next_to_hash)) {
        // A cached frame is hashed by reading its file, not through its mapping
        // (Sha256::update_from_file): where the filesystem shares the frame's blocks, nothing
        // then touches the mapping's pages, and first touches are what cost.
        uint64_t sum = 0;
        auto add_to_sum = [&sum](std::span<const std::byte> piece) {
            sum = frame_checksum(sum, piece);
        };
        if (block->mapped && block->mapped->descriptor() >= 0) {
            auto hashed = m_hash.update_from_file(
                block->mapped->descriptor(), block->bytes().size(), block->mapped->path(),
                block->checksum ? std::function<void(std::span<const std::byte>)>(add_to_sum)
                                : nullptr);
            if (!hashed.ok())
                return abandon(hashed.error());
        } else {
            m_hash.update(block->bytes());
            if (block->checksum)
                add_to_sum(block->bytes());
        }
        if (block->checksum && sum != *block->checksum) {
            const std::string& path = block->mapped->path();
            {
                std::lock_guard lock(m_mutex);
                m_damaged = path;
            }
            return abandon(util::make_integrity_error(
                path, "damaged: its bytes are not the ones the frame cache stored (checksum " +
                          fmt::format("{:016x}", sum) + ", stored " +
                          fmt::format("{:016x}", *block->checksum) + ")"));
        }
        done_with(m_next_to_hash);
    }
}

void OutputSink::abandon(util::Error error) {
    {
        std::lock_guard lock(m_mutex);
        if (!m_error)
            m_error = std::move(error);
        // Nothing more is written or hashed: the threads end and write() stops waiting.
        m_abandon = true;
        m_closing = true;
    }
    m_changed.notify_all();
}

void OutputSink::run_writer() {
    while (const Block* block = next_block(m_next_to_write)) {
        util::Status written = util::ok_status();
        bool cloned = false;
        if (block->mapped && block->mapped->descriptor() >= 0) {
            auto shared = m_file.clone(block->mapped->descriptor(), block->bytes().size());
            if (shared.ok())
                cloned = *shared;
            else
                written = shared.error();
        }
        if (cloned)
            ++m_cloned_blocks;
        else if (written.ok())
            written = m_file.write(block->bytes());
        if (!written.ok())
            return abandon(written.error());
        done_with(m_next_to_write);
    }
}

}  // namespace rootlock::image
