// MemorySource and FileSource: the two random-access byte providers, with bounds checks that
// turn every out-of-range read into a located error instead of a short read.
#include "util/byte_source.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace rootlock::util {

std::string hex_offset(uint64_t offset) {
    return fmt::format("0x{:x}", offset);
}

std::string at_offset(std::string_view name, uint64_t offset) {
    return fmt::format("{}@0x{:x}", name, offset);
}

namespace {
Status out_of_range(const std::string& name, uint64_t offset, size_t length, uint64_t size) {
    return make_error(
        at_offset(name, offset),
        fmt::format("read of {} bytes runs past the end of the file ({} bytes)", length, size));
}
}  // namespace

MemorySource::MemorySource(std::string name, std::vector<std::byte> bytes)
    : m_name(std::move(name)), m_bytes(std::move(bytes)) {}

Status MemorySource::read_at(uint64_t offset, std::span<std::byte> out) const {
    if (offset > m_bytes.size() || out.size() > m_bytes.size() - offset) {
        return out_of_range(m_name, offset, out.size(), m_bytes.size());
    }
    if (!out.empty())
        std::memcpy(out.data(), m_bytes.data() + offset, out.size());
    return ok_status();
}

FileSource::FileSource(int fd, uint64_t size, std::string name)
    : m_fd(fd), m_size(size), m_name(std::move(name)) {}

FileSource::~FileSource() {
    if (m_fd >= 0)
        ::close(m_fd);
}

Result<std::unique_ptr<FileSource>> FileSource::open(const std::string& host_path, std::string name,
                                                     int extra_flags) {
    int fd = ::open(host_path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | extra_flags);
    if (fd < 0)
        return make_error(name, std::strerror(errno));
    return adopt(fd, std::move(name));
}

Result<std::unique_ptr<FileSource>> FileSource::adopt(int fd, std::string name, size_t prefetch) {
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        int saved = errno;
        ::close(fd);
        return make_error(name, std::strerror(saved));
    }
    if (!S_ISREG(st.st_mode)) {
        ::close(fd);
        return make_error(name, "not a regular file");
    }
    std::unique_ptr<FileSource> source(
        new FileSource(fd, static_cast<uint64_t>(st.st_size), std::move(name)));
    const size_t wanted = static_cast<size_t>(std::min<uint64_t>(prefetch, source->m_size));
    if (wanted > 0) {
        source->m_head.resize(wanted);
        ssize_t got = 0;
        do {
            got = ::pread(fd, source->m_head.data(), wanted, 0);
        } while (got < 0 && errno == EINTR);
        // A failed or short read keeps what it got: reads past it go to the file and report
        // there whatever went wrong.
        source->m_head.resize(got > 0 ? static_cast<size_t>(got) : 0);
    }
    return source;
}

Status FileSource::read_at(uint64_t offset, std::span<std::byte> out) const {
    if (offset > m_size || out.size() > m_size - offset) {
        return out_of_range(m_name, offset, out.size(), m_size);
    }
    if (offset <= m_head.size() && out.size() <= m_head.size() - offset) {
        if (!out.empty())
            std::memcpy(out.data(), m_head.data() + offset, out.size());
        return ok_status();
    }
    size_t done = 0;
    while (done < out.size()) {
        ssize_t n =
            ::pread(m_fd, out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return make_error(at_offset(m_name, offset + done), std::strerror(errno));
        if (n == 0)
            return out_of_range(m_name, offset, out.size(), offset + done);
        done += static_cast<size_t>(n);
    }
    return ok_status();
}

}  // namespace rootlock::util
