// MappedFile: a whole file mapped read-only, so that bytes already in the page cache (a cached
// image frame) are handed on without being zeroed and copied into a buffer of our own first.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <utility>

namespace rootlock::util {

class MappedFile {
  public:
    // The file at `path` mapped whole; nullopt when it cannot be opened, is empty or is not a
    // regular file. The mapping stays valid after the file is renamed or unlinked. With
    // `keep_descriptor`, the file stays open too, for descriptor() (a cached frame cloned into
    // an image by a filesystem that shares blocks).
    static std::optional<MappedFile> open(const std::string& path, bool keep_descriptor = false);

    MappedFile(MappedFile&& other) noexcept;
    MappedFile& operator=(MappedFile&& other) noexcept;
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;
    ~MappedFile();

    std::span<const std::byte> bytes() const { return {m_data, m_size}; }
    // The mapped file's descriptor (read-only) when opened with `keep_descriptor`, else -1.
    int descriptor() const { return m_fd; }
    // The path it was opened from, for messages.
    const std::string& path() const { return m_path; }

  private:
    MappedFile(const std::byte* data, size_t size, int fd, std::string path)
        : m_data(data), m_size(size), m_fd(fd), m_path(std::move(path)) {}
    void release();

    const std::byte* m_data = nullptr;
    size_t m_size = 0;
    int m_fd = -1;
    std::string m_path;
};

}  // namespace rootlock::util
