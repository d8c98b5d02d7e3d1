// read_heads(): io_uring where this thread can have a ring, openat/pread/close otherwise; see
// head_reads.hpp.
#include "fs/head_reads.hpp"

#include <fcntl.h>
#include <liburing.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <memory>
#include <string>

namespace rootlock::fs {

namespace {

constexpr int k_open_flags = O_RDONLY | O_NOCTTY | O_NOFOLLOW | O_NONBLOCK;

HeadRead read_head_plain(int dir_fd, const char* name) {
    HeadRead head;
    const int fd = ::openat(dir_fd, name, k_open_flags | O_CLOEXEC);
    if (fd < 0) {
        head.error = errno;
        return head;
    }
    // read(2), not pread(2): on a file just opened they read the same bytes, and a FIFO swapped
    // in reads empty, as io_uring's read of it does, where pread would fail with ESPIPE.
    ssize_t got = 0;
    do {
        got = ::read(fd, head.bytes.data(), head.bytes.size());
    } while (got < 0 && errno == EINTR);
    if (got < 0)
        head.error = errno;
    else
        head.length = static_cast<uint32_t>(got);
    ::close(fd);
    return head;
}

// One ring per thread. Each file is three linked requests: an open into a registered slot (a
// descriptor outside the process's table, so none can reach a child), a read of that slot into
// the ring's own buffer, and a close of the slot, hard-linked to the read so that a short read
// still closes. The buffers belong to the ring, not the caller: should waiting for completions
// ever fail, the ring is abandoned, never freed, and a late read cannot write to freed memory.
class Ring {
  public:
    static constexpr unsigned k_files = 64;  // files per submission

    Ring() {
        if (io_uring_queue_init(k_files * 3, &m_ring, 0) != 0)
            return;
        if (io_uring_register_files_sparse(&m_ring, k_files) != 0) {
            io_uring_queue_exit(&m_ring);
            return;
        }
        m_ready = true;
    }
    Ring(const Ring&) = delete;
    Ring& operator=(const Ring&) = delete;
    ~Ring() {
        if (m_ready)
            io_uring_queue_exit(&m_ring);
    }

    bool ready() const { return m_ready; }
    // Broke with requests in flight: its memory must outlive them (see above).
    bool abandoned() const { return m_abandoned; }

    // Reads up to k_files heads; false when the ring could not take them (nothing was read,
    // and the caller reads them plainly) or broke while they were in flight.
    bool read(int dir_fd, std::span<const char* const> names, std::span<HeadRead> heads) {
        const auto count = static_cast<unsigned>(names.size());
        for (unsigned j = 0; j < count; ++j) {
            io_uring_sqe* open = io_uring_get_sqe(&m_ring);
            io_uring_sqe* read = io_uring_get_sqe(&m_ring);
            io_uring_sqe* close = io_uring_get_sqe(&m_ring);
            if (open == nullptr || read == nullptr || close == nullptr)
                return abandon_unsubmitted();
            io_uring_prep_openat_direct(open, dir_fd, names[j], k_open_flags, 0, j);
            open->flags |= IOSQE_IO_LINK;
            io_uring_sqe_set_data64(open, tag(j, Op::open));
            io_uring_prep_read(read, static_cast<int>(j), m_buffers[j].data(), k_head_size, 0);
            read->flags |= IOSQE_FIXED_FILE | IOSQE_IO_HARDLINK;
            io_uring_sqe_set_data64(read, tag(j, Op::read));
            io_uring_prep_close_direct(close, j);
            io_uring_sqe_set_data64(close, tag(j, Op::close));
        }
        std::fill_n(m_open_result.begin(), count, 0);
        std::fill_n(m_read_result.begin(), count, -ECANCELED);
        int submitted = 0;
        do {
            submitted = io_uring_submit(&m_ring);
        } while (submitted == -EINTR);
        if (submitted < 0)
            return abandon_unsubmitted();
        unsigned pending = static_cast<unsigned>(submitted);
        if (pending != count * 3)
            return abandon();  // part of the batch is in flight: wait for nothing, free nothing
        while (pending > 0) {
            io_uring_cqe* cqe = nullptr;
            const int waited = io_uring_wait_cqe(&m_ring, &cqe);
            if (waited == -EINTR || waited == -EAGAIN)
                continue;
            if (waited < 0)
                return abandon();
            const uint64_t data = io_uring_cqe_get_data64(cqe);
            const unsigned j = static_cast<unsigned>(data / 3);
            if (data % 3 == static_cast<uint64_t>(Op::open))
                m_open_result[j] = cqe->res;
            else if (data % 3 == static_cast<uint64_t>(Op::read))
                m_read_result[j] = cqe->res;
            io_uring_cqe_seen(&m_ring, cqe);
            --pending;
        }
        for (unsigned j = 0; j < count; ++j) {
            HeadRead& head = heads[j];
            if (m_open_result[j] < 0) {
                head.error = -m_open_result[j];
            } else if (m_read_result[j] < 0) {
                head.error = -m_read_result[j];
            } else {
                head.length = static_cast<uint32_t>(m_read_result[j]);
                std::copy_n(m_buffers[j].begin(), head.length, head.bytes.begin());
            }
        }
        return true;
    }

  private:
    enum class Op : uint8_t { open, read, close };
    static uint64_t tag(unsigned file, Op op) {
        return uint64_t{file} * 3 + static_cast<uint64_t>(op);
    }

    // Nothing reached the kernel: the ring can go, and with it whatever was queued.
    bool abandon_unsubmitted() {
        io_uring_queue_exit(&m_ring);
        m_ready = false;
        return false;
    }
    // Requests may still be in flight: keep the ring and its buffers for ever (see above).
    bool abandon() {
        m_ready = false;
        m_abandoned = true;
        return false;
    }

    io_uring m_ring{};
    bool m_ready = false;
    bool m_abandoned = false;
    std::array<std::array<std::byte, k_head_size>, k_files> m_buffers{};
    std::array<int, k_files> m_open_result{};
    std::array<int, k_files> m_read_result{};
};

// This thread's ring, made on first use; null once the kernel refused one.
Ring* thread_ring() {
    thread_local std::unique_ptr<Ring> ring;
    thread_local bool refused = false;
    if (refused)
        return nullptr;
    if (!ring)
        ring = std::make_unique<Ring>();
    if (!ring->ready()) {
        if (ring->abandoned())
            (void)ring.release();  // in-flight requests may still write to its buffers
        else
            ring.reset();
        refused = true;
        return nullptr;
    }
    return ring.get();
}

}  // namespace

bool head_reads_use_io_uring() {
    return thread_ring() != nullptr;
}

std::vector<HeadRead> read_heads(int dir_fd, std::span<const std::string_view> names,
                                 HeadReadMethod method) {
    // NUL-terminated copies of the names, for the kernel.
    std::string storage;
    for (std::string_view name : names) {
        storage.append(name);
        storage.push_back('\0');
    }
    std::vector<const char*> c_names;
    c_names.reserve(names.size());
    for (size_t offset = 0; c_names.size() < names.size(); offset = storage.find('\0', offset) + 1)
        c_names.push_back(storage.c_str() + offset);

    std::vector<HeadRead> heads(names.size());
    size_t done = 0;
    if (method == HeadReadMethod::fastest) {
        while (done < names.size()) {
            Ring* ring = thread_ring();
            if (ring == nullptr)
                break;
            const size_t count = std::min<size_t>(Ring::k_files, names.size() - done);
            if (!ring->read(dir_fd, std::span(c_names).subspan(done, count),
                            std::span(heads).subspan(done, count))) {
                std::fill_n(heads.begin() + static_cast<std::ptrdiff_t>(done), count, HeadRead{});
                break;
            }
            done += count;
        }
    }
    for (; done < names.size(); ++done)
        heads[done] = read_head_plain(dir_fd, c_names[done]);
    return heads;
}

}  // namespace rootlock::fs
