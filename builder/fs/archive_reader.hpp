// ArchiveReader: the one wrapper around libarchive's reader. It walks a (compressed) tarball
// front to back, entry by entry, and hands out each entry's bytes as a bounded stream.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "util/byte_source.hpp"
#include "util/result.hpp"

struct archive;

namespace rootlock::fs {

enum class ArchiveEntryType : uint8_t { regular, directory, symlink, hardlink, device, other };

// What the file holds: a (compressed) tarball, or a zip archive (a wheel), read through its
// central directory so that Unix modes and symlinks are seen as pip's zipfile sees them, or
// (raw) any one file compressed with gzip, bzip2, xz, lzma or zstd, or not at all, read as a
// single entry holding its decompressed bytes (a base tarball cached once as plain tar).
enum class ArchiveFormat : uint8_t { tar, zip, raw };

// A byte range of a host file: an OCI layer blob, in place inside an archive or a blob file.
struct FileRange {
    std::string file;
    uint64_t offset = 0;
    uint64_t size = 0;
};

// How a tar stream in a FileRange is compressed (OCI says it in the layer's mediaType and the
// bytes' magic confirms it); only that one filter is enabled.
enum class StreamCompression : uint8_t { none, gzip, zstd };

// The hex sha256 of the bytes of `range` ("FILE: the blob ends early" when the file is shorter).
util::Result<std::string> hash_range(const FileRange& range);

// One header as stored, before any confinement: the name may be absolute or hold "..".
struct ArchiveEntry {
    std::string path;
    ArchiveEntryType type = ArchiveEntryType::other;
    uint64_t size = 0;
    uint32_t mode = 0;        // permission bits
    std::string link_target;  // symlink text, or the hard link's target member name
};

class ArchiveReader {
  public:
    // Opens the tarball at `host_path` (tar, pax or GNU tar; plain, gzip, bzip2, xz or zstd;
    // no external decompressor is ever run), or with ArchiveFormat::zip a zip archive (stored or
    // deflated; libarchive checks each entry's CRC). Errors read "HOST_PATH: problem".
    static util::Result<std::unique_ptr<ArchiveReader>> open(
        const std::string& host_path, ArchiveFormat format = ArchiveFormat::tar);
    // Reads the tar stream held in `range` (nothing is copied out), every byte of the range
    // hashed as libarchive asks for it. Errors read "NAME: problem".
    static util::Result<std::unique_ptr<ArchiveReader>> open_range(std::string name,
                                                                   const FileRange& range,
                                                                   StreamCompression compression);
    ~ArchiveReader();
    ArchiveReader(const ArchiveReader&) = delete;
    ArchiveReader& operator=(const ArchiveReader&) = delete;

    // The next entry's header, or nullopt at the end of the archive. Whatever was not read of
    // the previous entry is skipped. Errors read "HOST_PATH: libarchive's message".
    util::Result<std::optional<ArchiveEntry>> next();
    // Reads the current entry's bytes into `out`; 0 at the entry's end.
    util::Result<size_t> read(std::span<std::byte> out);

    const std::string& name() const { return m_name; }

    // open_range only: reads whatever of the range libarchive left (the tar's end padding, a
    // compressor's trailer) and returns the hex sha256 of the whole range.
    util::Result<std::string> finish_range();

  private:
    struct RangeSource;
    friend util::Result<std::string> hash_range(const FileRange& range);
    struct ArchiveFree {
        void operator()(struct archive* handle) const;
    };
    ArchiveReader(std::string name, int fd, std::unique_ptr<struct archive, ArchiveFree> handle);
    util::Error archive_error(const char* fallback) const;

    std::string m_name;
    int m_fd;  // closed after the handle is freed, since libarchive does not own it
    std::unique_ptr<RangeSource> m_range;  // open_range: freed after the handle
    std::unique_ptr<struct archive, ArchiveFree> m_archive;
};

// The current entry of `reader` as a ByteStream, for parsers that read front to back.
class ArchiveEntryStream final : public util::ByteStream {
  public:
    explicit ArchiveEntryStream(ArchiveReader& reader) : m_reader(reader) {}
    util::Result<size_t> read(std::span<std::byte> out) override;
    // Set once a read failed: the archive itself is broken, not the entry's content.
    const std::optional<util::Error>& failure() const { return m_failure; }

  private:
    ArchiveReader& m_reader;
    std::optional<util::Error> m_failure;
};

}  // namespace rootlock::fs
