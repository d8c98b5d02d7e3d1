// Where parsers get bytes from: a random-access ByteSource (a file read with pread, or a memory
// buffer) or a forward-only ByteStream (an entry of a wheel or tarball being read in one pass).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.hpp"

namespace rootlock::util {

// Random access over one object's bytes. Reads past size() are errors, never short reads.
class ByteSource {
  public:
    virtual ~ByteSource() = default;
    virtual uint64_t size() const = 0;
    // Fills `out` entirely from `offset`, or fails with "name@0xOFF: ..." text.
    virtual Status read_at(uint64_t offset, std::span<std::byte> out) const = 0;
    // The name errors are located with (a path inside the root, an archive member, ...).
    virtual const std::string& name() const = 0;
};

// Bytes held in memory (tests, small files, the retained head of a stream).
class MemorySource final : public ByteSource {
  public:
    MemorySource(std::string name, std::vector<std::byte> bytes);
    uint64_t size() const override { return m_bytes.size(); }
    Status read_at(uint64_t offset, std::span<std::byte> out) const override;
    const std::string& name() const override { return m_name; }
    const std::vector<std::byte>& bytes() const { return m_bytes; }

  private:
    std::string m_name;
    std::vector<std::byte> m_bytes;
};

// A file on disk read with pread; nothing is mapped or read ahead.
class FileSource final : public ByteSource {
  public:
    // Opens `host_path`; `name` is what errors call it (usually the path inside the root).
    // `extra_flags` go to open(2) beside O_RDONLY (O_NOFOLLOW, O_NONBLOCK); anything but a
    // regular file is refused once open.
    static Result<std::unique_ptr<FileSource>> open(const std::string& host_path, std::string name,
                                                    int extra_flags = 0);
    // Takes `fd`, already open for reading (closed on failure too): refused unless a regular
    // file. With `prefetch`, the first min(prefetch, size) bytes are read at once and later
    // reads inside them are served from memory: a small ELF object's headers, dynamic symbols,
    // versions and relocations then cost one read(2) rather than a dozen.
    static Result<std::unique_ptr<FileSource>> adopt(int fd, std::string name, size_t prefetch = 0);
    ~FileSource() override;
    FileSource(const FileSource&) = delete;
    FileSource& operator=(const FileSource&) = delete;

    uint64_t size() const override { return m_size; }
    Status read_at(uint64_t offset, std::span<std::byte> out) const override;
    const std::string& name() const override { return m_name; }
    // The bytes adopt() prefetched from the start of the file (fewer where it shrank since).
    std::span<const std::byte> head() const { return m_head; }

  private:
    FileSource(int fd, uint64_t size, std::string name);
    int m_fd;
    uint64_t m_size;
    std::string m_name;
    std::vector<std::byte> m_head;
};

// Forward-only bytes: read() returns how many bytes it wrote into `out`; 0 means the end.
class ByteStream {
  public:
    virtual ~ByteStream() = default;
    virtual Result<size_t> read(std::span<std::byte> out) = 0;
};

// Shown every byte of one forward-only stream, in order, beside whoever reads it (a device code
// scanner beside the ELF reader), so that one pass over an archive member serves both.
class StreamObserver {
  public:
    virtual ~StreamObserver() = default;
    virtual void feed(std::span<const std::byte> bytes) = 0;
    // After the last byte.
    virtual void end() = 0;
};

// Formats an offset the way located errors show it: "0x40".
std::string hex_offset(uint64_t offset);

// "name@0xOFF" for an error located inside a binary object.
std::string at_offset(std::string_view name, uint64_t offset);

}  // namespace rootlock::util
