// ArchiveReader: libarchive's read API behind RAII handles, over a file descriptor we open
// ourselves (so a missing file gives our error text). Tar with built-in filters only, and zip.
#include "fs/archive_reader.hpp"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

#include "fs/tree_errors.hpp"
#include "util/sha256.hpp"

namespace rootlock::fs {

namespace {

// libarchive's read block: large enough for zstd frames, small enough to stay bounded.
constexpr size_t k_read_block = 64U << 10;

ArchiveEntryType entry_type(struct archive_entry* entry) {
    if (archive_entry_hardlink(entry) != nullptr)
        return ArchiveEntryType::hardlink;
    switch (archive_entry_filetype(entry)) {
        case AE_IFREG:
            return ArchiveEntryType::regular;
        case AE_IFDIR:
            return ArchiveEntryType::directory;
        case AE_IFLNK:
            return ArchiveEntryType::symlink;
        case AE_IFCHR:
        case AE_IFBLK:
            return ArchiveEntryType::device;
        default:
            return ArchiveEntryType::other;
    }
}

// Names as stored: the locale form first (raw bytes for ustar, UTF-8 under C.UTF-8), then
// libarchive's UTF-8 form when the locale cannot express a pax UTF-8 name.
std::string entry_text(const char* native, const char* utf8) {
    if (native != nullptr)
        return native;
    if (utf8 != nullptr)
        return utf8;
    return {};
}

}  // namespace

// The bytes of a FileRange served to libarchive in order (no skip callback, so every byte passes
// through the hash), read with pread so that the outer archive is never copied.
struct ArchiveReader::RangeSource {
    std::string name;
    int fd = -1;
    FileRange range;
    uint64_t position = 0;  // relative to range.offset
    util::Sha256 hash;
    std::vector<std::byte> buffer = std::vector<std::byte>(k_read_block);

    ~RangeSource() {
        if (fd >= 0)
            ::close(fd);
    }

    // The next piece of the range: its size, 0 at the range's end, -1 (errno set) on failure.
    la_ssize_t next(const void** out) {
        uint64_t left = range.size - position;
        size_t want = static_cast<size_t>(std::min<uint64_t>(left, buffer.size()));
        if (want == 0)
            return 0;
        while (true) {
            ssize_t got =
                ::pread(fd, buffer.data(), want, static_cast<off_t>(range.offset + position));
            if (got < 0 && errno == EINTR)
                continue;
            if (got <= 0) {
                if (got == 0)
                    errno = EIO;  // the file is shorter than the range: truncated
                return -1;
            }
            position += static_cast<uint64_t>(got);
            hash.update(std::span<const std::byte>(buffer.data(), static_cast<size_t>(got)));
            *out = buffer.data();
            return got;
        }
    }

    static la_ssize_t read_callback(struct archive* handle, void* data, const void** out) {
        auto* source = static_cast<RangeSource*>(data);
        la_ssize_t got = source->next(out);
        if (got < 0)
            archive_set_error(handle, errno,
                              errno == EIO ? "the blob ends early" : "cannot read the blob");
        return got;
    }
};

void ArchiveReader::ArchiveFree::operator()(struct archive* handle) const {
    archive_read_free(handle);
}

ArchiveReader::ArchiveReader(std::string name, int fd,
                             std::unique_ptr<struct archive, ArchiveFree> handle)
    : m_name(std::move(name)), m_fd(fd), m_archive(std::move(handle)) {}

ArchiveReader::~ArchiveReader() {
    m_archive.reset();
    if (m_fd >= 0)
        ::close(m_fd);
}

util::Error ArchiveReader::archive_error(const char* fallback) const {
    const char* message = archive_error_string(m_archive.get());
    std::string text = message != nullptr ? message : fallback;
    // Some of libarchive's messages end in a newline ("ZIP uncompressed data is wrong size"):
    // errors are one line.
    while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
        text.pop_back();
    return util::make_error(m_name, text);
}

util::Result<std::unique_ptr<ArchiveReader>> ArchiveReader::open(const std::string& host_path,
                                                                 ArchiveFormat format) {
    int fd = ::open(host_path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0)
        return util::make_error(host_path, errno_text(errno));
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        return not_regular_file(host_path);
    }
    std::unique_ptr<struct archive, ArchiveFree> handle(archive_read_new());
    if (!handle) {
        ::close(fd);
        return util::make_error(host_path, "out of memory");
    }
    if (format == ArchiveFormat::zip) {
        // The seekable reader trusts the central directory, as Python's zipfile does; the
        // streaming one would miss the Unix modes (executables, symlinks) stored only there.
        archive_read_support_format_zip_seekable(handle.get());
    } else {
        // Only filters libarchive implements itself: filter_all could start external programs.
        archive_read_support_filter_gzip(handle.get());
        archive_read_support_filter_bzip2(handle.get());
        archive_read_support_filter_xz(handle.get());
        archive_read_support_filter_lzma(handle.get());
        archive_read_support_filter_zstd(handle.get());
        if (format == ArchiveFormat::raw) {
            archive_read_support_format_raw(handle.get());
        } else {
            archive_read_support_format_tar(handle.get());
        }
    }
    std::unique_ptr<ArchiveReader> reader(new ArchiveReader(host_path, fd, std::move(handle)));
    if (archive_read_open_fd(reader->m_archive.get(), fd, k_read_block) != ARCHIVE_OK) {
        return reader->archive_error("cannot open the archive");
    }
    return reader;
}

util::Result<std::string> hash_range(const FileRange& range) {
    ArchiveReader::RangeSource source;
    source.range = range;
    source.fd = ::open(range.file.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (source.fd < 0)
        return util::make_error(range.file, errno_text(errno));
    const void* piece = nullptr;
    while (true) {
        la_ssize_t got = source.next(&piece);
        if (got == 0)
            return source.hash.hex_digest();
        if (got < 0)
            return util::make_error(range.file,
                                    errno == EIO ? "the blob ends early" : errno_text(errno));
    }
}

util::Result<std::unique_ptr<ArchiveReader>> ArchiveReader::open_range(
    std::string name, const FileRange& range, StreamCompression compression) {
    auto source = std::make_unique<RangeSource>();
    source->name = name;
    source->range = range;
    source->fd = ::open(range.file.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (source->fd < 0)
        return util::make_error(range.file, errno_text(errno));
    std::unique_ptr<struct archive, ArchiveFree> handle(archive_read_new());
    if (!handle)
        return util::make_error(name, "out of memory");
    if (compression == StreamCompression::gzip)
        archive_read_support_filter_gzip(handle.get());
    else if (compression == StreamCompression::zstd)
        archive_read_support_filter_zstd(handle.get());
    archive_read_support_format_tar(handle.get());
    std::unique_ptr<ArchiveReader> reader(new ArchiveReader(name, -1, std::move(handle)));
    reader->m_range = std::move(source);
    if (archive_read_open(reader->m_archive.get(), reader->m_range.get(), nullptr,
                          &RangeSource::read_callback, nullptr) != ARCHIVE_OK) {
        return reader->archive_error("cannot open the layer");
    }
    return reader;
}

util::Result<std::string> ArchiveReader::finish_range() {
    if (!m_range)
        return util::make_error(m_name, "not a range");
    const void* piece = nullptr;
    while (true) {
        la_ssize_t got = m_range->next(&piece);
        if (got == 0)
            break;
        if (got < 0)
            return util::make_error(m_name,
                                    errno == EIO ? "the blob ends early" : errno_text(errno));
    }
    return m_range->hash.hex_digest();
}

util::Result<std::optional<ArchiveEntry>> ArchiveReader::next() {
    struct archive_entry* entry = nullptr;
    int status = archive_read_next_header(m_archive.get(), &entry);
    if (status == ARCHIVE_EOF)
        return std::optional<ArchiveEntry>();
    // ARCHIVE_WARN (a name the locale cannot express, say) still gives a usable header.
    if (status < ARCHIVE_WARN || entry == nullptr)
        return archive_error("unreadable entry header");
    ArchiveEntry out;
    out.path = entry_text(archive_entry_pathname(entry), archive_entry_pathname_utf8(entry));
    out.type = entry_type(entry);
    int64_t size = archive_entry_size(entry);
    out.size = size > 0 ? static_cast<uint64_t>(size) : 0;
    out.mode = static_cast<uint32_t>(archive_entry_perm(entry)) & 07777U;
    if (out.type == ArchiveEntryType::hardlink) {
        out.link_target =
            entry_text(archive_entry_hardlink(entry), archive_entry_hardlink_utf8(entry));
    } else if (out.type == ArchiveEntryType::symlink) {
        out.link_target =
            entry_text(archive_entry_symlink(entry), archive_entry_symlink_utf8(entry));
    }
    return std::optional<ArchiveEntry>(std::move(out));
}

util::Result<size_t> ArchiveReader::read(std::span<std::byte> out) {
    la_ssize_t count = archive_read_data(m_archive.get(), out.data(), out.size());
    if (count < 0)
        return archive_error("unreadable entry data");
    return static_cast<size_t>(count);
}

util::Result<size_t> ArchiveEntryStream::read(std::span<std::byte> out) {
    auto count = m_reader.read(out);
    if (!count.ok())
        m_failure = count.error();
    return count;
}

}  // namespace rootlock::fs
