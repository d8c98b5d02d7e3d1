// MappedFile: a whole file mapped read-only, so that bytes already in the page cache (a cached
// image frame) are handed on without being zeroed and copied into a buffer of our own first.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>

namespace rootlock::util {

class MappedFile {
  public:
    // The file at `path` mapped whole; nullopt when it cannot be opened, is empty or is not a
    // regular file. The mapping stays valid after the file is renamed or unlinked.
    static std::optional<MappedFile> open(const std::string& path);

    MappedFile(MappedFile&& other) noexcept;
    MappedFile& operator=(MappedFile&& other) noexcept;
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;
    ~MappedFile();

    std::span<const std::byte> bytes() const { return {m_data, m_size}; }

  private:
    MappedFile(const std::byte* data, size_t size) : m_data(data), m_size(size) {}
    void release();

    const std::byte* m_data = nullptr;
    size_t m_size = 0;
};

}  // namespace rootlock::util
