// TarWriter: libarchive's pax_restricted writer behind an RAII handle, over a file descriptor we
// write ourselves, with every entry checked (canonical path, component order, lengths) first.
#include "image/tar_writer.hpp"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <span>

#include <fmt/format.h>

#include "fs/tree_errors.hpp"

namespace rootlock::image {

namespace {

// Content is copied in pieces of this size, never whole files.
constexpr size_t k_copy_block = 1U << 20;

// What libarchive is given for content the frame cache already holds: the bytes are dropped on
// the way out, and libarchive's pax writer only counts them.
const std::byte k_zeros[k_copy_block] = {};

// The next non-empty component of `path` from `pos`, or nullopt at the end.
std::optional<std::string_view> next_component(std::string_view path, size_t& pos) {
    while (pos < path.size() && path[pos] == '/')
        ++pos;
    if (pos >= path.size())
        return std::nullopt;
    const size_t end = std::min(path.find('/', pos), path.size());
    std::string_view component = path.substr(pos, end - pos);
    pos = end;
    return component;
}

// Why `path` is not canonical ("/" or "/a/b", no empty, "." or ".." component), or nullopt.
std::optional<std::string> non_canonical(std::string_view path) {
    if (path.empty())
        return "empty path";
    if (path.find('\0') != std::string_view::npos)
        return "path holds a NUL byte";
    if (path.front() != '/')
        return "path is not absolute";
    if (path == "/")
        return std::nullopt;
    if (path.back() == '/')
        return "path ends with a slash";
    size_t pos = 1;
    while (pos <= path.size()) {
        const size_t end = std::min(path.find('/', pos), path.size());
        const std::string_view component = path.substr(pos, end - pos);
        if (component.empty())
            return "path has an empty component";
        if (component == "." || component == "..")
            return fmt::format("path has a \"{}\" component", component);
        pos = end + 1;
    }
    return std::nullopt;
}

// The member name GNU tar gives `path` under `tar -C root .`, or without the "./"; libarchive
// adds a directory's "/".
std::string member_name(std::string_view path, bool dot_slash) {
    return (dot_slash ? "./" : "") + std::string(path.substr(1));
}

const char* kind_name(EntryKind kind) {
    switch (kind) {
        case EntryKind::regular:
            return "regular file";
        case EntryKind::directory:
            return "directory";
        case EntryKind::symlink:
            return "symlink";
        case EntryKind::hardlink:
            return "hard link";
    }
    return "entry";
}

util::Error wrong_length(const TarEntry& entry, uint64_t actual) {
    return util::make_error(
        entry.path, fmt::format("content has {} bytes, the entry declares {}", actual, entry.size));
}

// Counts what is left of `content` (in bounded pieces) so a too-long content is reported with
// its real length.
util::Result<uint64_t> remaining_bytes(util::ByteStream& content, std::vector<std::byte>& buffer) {
    uint64_t total = 0;
    while (true) {
        auto count = content.read(buffer);
        if (!count.ok())
            return count.error();
        if (*count == 0)
            return total;
        total += *count;
    }
}

// The bytes of a string_view as a ByteStream, so add_bytes shares add's copying.
class StringStream final : public util::ByteStream {
  public:
    explicit StringStream(std::string_view bytes) : m_bytes(bytes) {}
    util::Result<size_t> read(std::span<std::byte> out) override {
        const size_t count = std::min(out.size(), m_bytes.size());
        if (count > 0)
            std::memcpy(out.data(), m_bytes.data(), count);
        m_bytes.remove_prefix(count);
        return count;
    }

  private:
    std::string_view m_bytes;
};

}  // namespace

util::Result<Compression> compression_for(std::string_view output_name) {
    if (output_name.ends_with(".tar.zst"))
        return Compression::zstd;
    if (output_name.ends_with(".tar.xz"))
        return Compression::xz;
    if (output_name.ends_with(".tar.gz"))
        return Compression::gzip;
    if (output_name.ends_with(".tar"))
        return Compression::none;
    return util::make_error(std::string(output_name),
                            "unknown image type (use .tar.zst, .tar.xz, .tar.gz or .tar)");
}

std::string tar_writer_identity() {
    return "libarchive-" + std::to_string(archive_version_number());
}

bool component_less(std::string_view a, std::string_view b) {
    size_t pos_a = 0;
    size_t pos_b = 0;
    while (true) {
        const auto component_a = next_component(a, pos_a);
        const auto component_b = next_component(b, pos_b);
        if (!component_a)
            return component_b.has_value();
        if (!component_b)
            return false;
        // char_traits<char> compares as unsigned char: the bytewise order of strcmp.
        const int order = component_a->compare(*component_b);
        if (order != 0)
            return order < 0;
    }
}

void TarWriter::ArchiveFree::operator()(struct archive* handle) const {
    archive_write_free(handle);
}

TarWriter::TarWriter(std::string host_path)
    : m_host_path(std::move(host_path)), m_buffer(k_copy_block) {}

TarWriter::~TarWriter() {
    // archive_write_free closes an open archive, which would write the end-of-archive marker
    // and flush the compressor: an unfinished image must not look complete.
    m_discard = true;
    m_archive.reset();
    m_frames.reset();  // waits for its workers, before the sink they write to goes
    m_sink.reset();    // drops what is queued and closes the file unsynced
}

ssize_t TarWriter::write_callback(struct archive* handle, void* self, const void* buffer,
                                  size_t length) {
    auto* writer = static_cast<TarWriter*>(self);
    if (writer->m_discard)
        return static_cast<ssize_t>(length);
    const std::span bytes(static_cast<const std::byte*>(buffer), length);
    if (writer->m_frames) {
        writer->m_frames->append(bytes);
        return static_cast<ssize_t>(length);
    }
    auto written = writer->m_compressor ? writer->m_compressor->write(bytes, *writer->m_sink)
                                        : writer->m_sink->write(bytes);
    if (!written.ok()) {
        archive_set_error(handle, EIO, "%s", written.error().message.c_str());
        writer->m_output_error = written.error();
        return -1;
    }
    return static_cast<ssize_t>(length);
}

util::Error TarWriter::archive_error(const std::string& where, const char* fallback) const {
    // The file's own failure (a full disk) is about the image, not the entry being written.
    if (m_output_error)
        return *m_output_error;
    const char* message = archive_error_string(m_archive.get());
    std::string text = message != nullptr ? message : fallback;
    while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
        text.pop_back();
    return util::make_error(where, text);
}

util::Result<std::unique_ptr<TarWriter>> TarWriter::create(const std::string& host_path,
                                                           const TarWriterOptions& options) {
    if (options.threads < 1) {
        return util::make_error(host_path,
                                fmt::format("threads must be at least 1, not {}", options.threads));
    }
    // Checked here: libarchive calls an out-of-range level an "Undefined option".
    if (options.compression == Compression::zstd &&
        (options.zstd_level < 1 || options.zstd_level > 22)) {
        return util::make_error(host_path,
                                fmt::format("zstd level {} is not in 1..22", options.zstd_level));
    }
    if (options.compression == Compression::xz && (options.xz_level < 0 || options.xz_level > 9))
        return util::make_error(host_path,
                                fmt::format("xz level {} is not in 0..9", options.xz_level));
    if (options.in_process && options.compression != Compression::gzip &&
        options.compression != Compression::zstd)
        return util::make_error(host_path, "only gzip and zstd layers are compressed in process");
    const bool framed = options.frame_cuts != nullptr;
    if (framed && (options.in_process || (options.compression != Compression::gzip &&
                                          options.compression != Compression::zstd)))
        return util::make_error(host_path, "only gzip and zstd tarballs are written in frames");
    if (framed && options.compression == Compression::gzip &&
        (options.gzip_level < 1 || options.gzip_level > 9))
        return util::make_error(host_path,
                                fmt::format("gzip level {} is not in 1..9", options.gzip_level));
    std::unique_ptr<TarWriter> writer(new TarWriter(host_path));
    writer->m_dot_slash = options.dot_slash;
    if (options.in_process) {
        ROOTLOCK_TRY(
            compressor,
            StreamCompressor::create(
                options.compression == Compression::gzip ? StreamCodec::gzip : StreamCodec::zstd,
                options.compression == Compression::gzip ? options.gzip_level : options.zstd_level,
                options.threads, host_path));
        writer->m_compressor = std::move(compressor);
    }
    writer->m_archive.reset(archive_write_new());
    struct archive* handle = writer->m_archive.get();
    if (handle == nullptr)
        return util::make_error(host_path, "out of memory");

    std::string filter_options;
    int status = archive_write_set_format_pax_restricted(handle);
    switch (options.in_process || framed ? Compression::none : options.compression) {
        case Compression::none:
            break;
        case Compression::gzip:
            // Without it gzip's header holds the current time.
            status = std::min(status, archive_write_add_filter_gzip(handle));
            filter_options = "gzip:!timestamp";
            break;
        case Compression::xz:
            status = std::min(status, archive_write_add_filter_xz(handle));
            filter_options = fmt::format("xz:compression-level={},xz:threads={}", options.xz_level,
                                         std::max(options.threads, 2));
            break;
        case Compression::zstd:
            status = std::min(status, archive_write_add_filter_zstd(handle));
            filter_options = fmt::format("zstd:compression-level={},zstd:threads={}",
                                         options.zstd_level, options.threads);
            break;
    }
    if (status != ARCHIVE_OK)
        return writer->archive_error(host_path, "cannot set up the writer");
    // libarchive's default LIBARCHIVE.xattr records make GNU tar warn on every such entry.
    std::string all_options = "pax:xattrheader=SCHILY";
    if (!filter_options.empty())
        all_options += "," + filter_options;
    if (archive_write_set_options(handle, all_options.c_str()) != ARCHIVE_OK)
        return writer->archive_error(host_path, "options refused");
    // No padding after the last block, whatever the descriptor is: the bytes stay the same.
    archive_write_set_bytes_in_last_block(handle, 1);
    // Framed: no blocking, so every byte of an entry has reached the callback once
    // archive_write_finish_entry returns, and a frame can end exactly there.
    if (framed)
        archive_write_set_bytes_per_block(handle, 0);
    // Opened only once libarchive took the options, so that bad options leave no file behind.
    const int fd =
        ::open(host_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, 0644);
    if (fd < 0)
        return util::make_io_error(host_path, fs::errno_text(errno));
    writer->m_sink = std::make_unique<OutputSink>(fd, host_path);
    if (framed) {
        const FrameCodec codec =
            options.compression == Compression::gzip ? FrameCodec::gzip : FrameCodec::zstd;
        writer->m_frames = std::make_unique<FrameStream>(
            codec, codec == FrameCodec::gzip ? options.gzip_level : options.zstd_level,
            options.threads, options.frame_cache, *writer->m_sink, host_path);
        writer->m_cuts = *options.frame_cuts;
    }
    if (archive_write_open(handle, writer.get(), nullptr, &TarWriter::write_callback, nullptr) !=
        ARCHIVE_OK) {
        return writer->archive_error(host_path, "cannot open the archive");
    }
    return writer;
}

util::Status TarWriter::usable() const {
    if (m_finished)
        return util::make_error(m_host_path, "the image is already finished");
    if (m_failed)
        return util::make_error(m_host_path, "an earlier error left the image incomplete");
    return util::ok_status();
}

util::Status TarWriter::check_entry(const TarEntry& entry) const {
    const std::string& path = entry.path;
    if (auto why = non_canonical(path))
        return util::make_error(path, *why);
    if (!m_dot_slash && path == "/")
        return util::make_error(path, "the root has no member name without \"./\"");
    if (m_entries > 0) {
        if (path == m_previous)
            return util::make_error(path, "duplicate entry");
        if (!component_less(m_previous, path))
            return util::make_error(path, "out of order after " + m_previous);
    }
    if ((entry.mode & ~07777U) != 0)
        return util::make_error(path, fmt::format("mode {:#o} has bits outside 07777", entry.mode));
    if (entry.kind != EntryKind::regular && entry.size != 0) {
        return util::make_error(path,
                                fmt::format("a {} has no content, the entry declares {} bytes",
                                            kind_name(entry.kind), entry.size));
    }
    if (entry.kind == EntryKind::symlink) {
        if (entry.link_target.empty())
            return util::make_error(path, "symlink with an empty target");
        if (entry.link_target.find('\0') != std::string::npos)
            return util::make_error(path, "symlink target holds a NUL byte");
    } else if (entry.kind == EntryKind::hardlink) {
        if (auto why = non_canonical(entry.link_target))
            return util::make_error(path, "hard link target: " + *why);
        if (!m_link_targets.contains(entry.link_target)) {
            return util::make_error(path, "hard link to " + entry.link_target +
                                              ", which is not a file written before it");
        }
    } else if (!entry.link_target.empty()) {
        return util::make_error(path,
                                fmt::format("a {} has no link target", kind_name(entry.kind)));
    }
    for (size_t i = 0; i < entry.xattrs.size(); ++i) {
        const std::string& name = entry.xattrs[i].first;
        if (name.empty() || name.find('\0') != std::string::npos || name.find('=') != name.npos)
            return util::make_error(path, fmt::format("bad xattr name \"{}\"", name));
        if (i > 0 && !(entry.xattrs[i - 1].first < name))
            return util::make_error(path, "xattr " + name + " is not after the one before it");
    }
    return util::ok_status();
}

util::Status TarWriter::write_header(const TarEntry& entry) {
    std::unique_ptr<struct archive_entry, decltype(&archive_entry_free)> header(
        archive_entry_new(), &archive_entry_free);
    if (!header)
        return util::make_error(entry.path, "out of memory");
    struct archive_entry* e = header.get();
    // Raw bytes, never the *_utf8 setters: those crash libarchive 3.6.2 under the C locale.
    archive_entry_copy_pathname(e, member_name(entry.path, m_dot_slash).c_str());
    archive_entry_set_perm(e, static_cast<mode_t>(entry.mode));
    archive_entry_set_uid(e, static_cast<la_int64_t>(entry.uid));
    archive_entry_set_gid(e, static_cast<la_int64_t>(entry.gid));
    archive_entry_set_mtime(e, static_cast<time_t>(entry.mtime), 0);
    switch (entry.kind) {
        case EntryKind::regular:
            archive_entry_set_filetype(e, AE_IFREG);
            archive_entry_set_size(e, static_cast<la_int64_t>(entry.size));
            break;
        case EntryKind::directory:
            archive_entry_set_filetype(e, AE_IFDIR);
            archive_entry_set_size(e, 0);
            break;
        case EntryKind::symlink:
            archive_entry_set_filetype(e, AE_IFLNK);
            archive_entry_copy_symlink(e, entry.link_target.c_str());
            archive_entry_set_size(e, 0);
            break;
        case EntryKind::hardlink:
            archive_entry_set_filetype(e, AE_IFREG);
            archive_entry_copy_hardlink(e, member_name(entry.link_target, m_dot_slash).c_str());
            archive_entry_set_size(e, 0);
            break;
    }
    for (const auto& [name, value] : entry.xattrs)
        archive_entry_xattr_add_entry(e, name.c_str(), value.data(), value.size());
    // ARCHIVE_WARN is an error too: it means a name libarchive could not store as UTF-8.
    if (archive_write_header(m_archive.get(), e) != ARCHIVE_OK)
        return archive_error(entry.path, "cannot write the header");
    return util::ok_status();
}

std::optional<uint64_t> TarWriter::next_cut_in_entry() const {
    if (m_next_cut < m_cuts.size() && m_cuts[m_next_cut].entry == m_entries)
        return m_cuts[m_next_cut].offset;
    return std::nullopt;
}

util::Status TarWriter::begin_frames_at(uint64_t offset) {
    while (m_frames && m_next_cut < m_cuts.size() && m_cuts[m_next_cut].entry == m_entries &&
           m_cuts[m_next_cut].offset == offset) {
        ROOTLOCK_TRY(reused, m_frames->begin(m_cuts[m_next_cut].key));
        (void)reused;
        ++m_next_cut;
    }
    return util::ok_status();
}

util::Status TarWriter::copy_content(const TarEntry& entry, util::ByteStream* content,
                                     const ContentOpener* open) {
    std::unique_ptr<util::ByteStream> opened;
    uint64_t consumed = 0;  // bytes taken from the content; behind `copied` after cached frames
    uint64_t copied = 0;
    while (copied < entry.size) {
        if (auto begun = begin_frames_at(copied); !begun.ok())
            return begun;
        uint64_t want = std::min<uint64_t>(entry.size - copied, m_buffer.size());
        if (auto cut = next_cut_in_entry(); cut && *cut > copied)
            want = std::min(want, *cut - copied);
        const std::byte* data = k_zeros;
        if (!m_frames || !m_frames->reusing()) {
            if (content == nullptr) {
                ROOTLOCK_TRY(stream, (*open)());
                opened = std::move(stream);
                content = opened.get();
            }
            // Skip what cached frames stood for: a deflated member cannot seek.
            while (consumed < copied) {
                const uint64_t gap = std::min<uint64_t>(copied - consumed, m_buffer.size());
                auto count = content->read(std::span(m_buffer.data(), static_cast<size_t>(gap)));
                if (!count.ok())
                    return count.error();
                if (*count == 0)
                    return wrong_length(entry, consumed);
                consumed += *count;
            }
            auto count = content->read(std::span(m_buffer.data(), static_cast<size_t>(want)));
            if (!count.ok())
                return count.error();
            if (*count == 0)
                return wrong_length(entry, copied);
            want = *count;
            consumed += want;
            data = m_buffer.data();
        }
        size_t written = 0;
        while (written < want) {
            const la_ssize_t result =
                archive_write_data(m_archive.get(), data + written, want - written);
            if (result <= 0)
                return archive_error(entry.path, "cannot write the content");
            written += static_cast<size_t>(result);
        }
        copied += want;
    }
    // A content read to its end must end there; one the cache stood for was never opened.
    if (content != nullptr && consumed == entry.size) {
        ROOTLOCK_TRY(extra, remaining_bytes(*content, m_buffer));
        if (extra != 0)
            return wrong_length(entry, entry.size + extra);
    }
    return util::ok_status();
}

util::Status TarWriter::add(const TarEntry& entry, util::ByteStream* content) {
    StringStream empty({});
    return add_entry(entry, content != nullptr ? content : &empty, nullptr);
}

util::Status TarWriter::add_lazily(const TarEntry& entry, const ContentOpener& open) {
    return add_entry(entry, nullptr, &open);
}

util::Status TarWriter::add_entry(const TarEntry& entry, util::ByteStream* content,
                                  const ContentOpener* open) {
    if (auto status = usable(); !status.ok())
        return status;
    if (auto status = check_entry(entry); !status.ok())
        return status;
    if (entry.kind != EntryKind::regular && content != nullptr) {
        // Checked before the header, so that the writer stays usable.
        ROOTLOCK_TRY(extra, remaining_bytes(*content, m_buffer));
        if (extra != 0)
            return wrong_length(entry, extra);
    }
    m_failed = true;  // until the entry is complete: a half-written entry ends the image
    if (auto status = begin_frames_at(0); !status.ok())
        return status;
    if (auto status = write_header(entry); !status.ok())
        return status;
    if (entry.kind == EntryKind::regular) {
        if (auto status = copy_content(entry, content, open); !status.ok())
            return status;
    }
    if (archive_write_finish_entry(m_archive.get()) != ARCHIVE_OK)
        return archive_error(entry.path, "cannot finish the entry");
    m_failed = false;
    m_previous = entry.path;
    if (entry.kind != EntryKind::directory)
        m_link_targets.insert(entry.path);
    ++m_entries;
    return util::ok_status();
}

util::Status TarWriter::add_bytes(const TarEntry& entry, std::string_view content) {
    if (auto status = usable(); !status.ok())
        return status;
    // Checked up front: a wrong length must not cost the image.
    const uint64_t declared = entry.kind == EntryKind::regular ? entry.size : 0;
    if (content.size() != declared) {
        if (auto status = check_entry(entry); !status.ok())
            return status;
        TarEntry shown = entry;
        shown.size = declared;
        return wrong_length(shown, content.size());
    }
    StringStream stream(content);
    return add(entry, &stream);
}

util::Status TarWriter::finish() {
    if (auto status = usable(); !status.ok())
        return status;
    m_failed = true;
    // The end-of-archive blocks in a frame of their own, never cached.
    if (m_frames) {
        ROOTLOCK_TRY(reused, m_frames->begin(""));
        (void)reused;
    }
    if (archive_write_close(m_archive.get()) != ARCHIVE_OK)
        return archive_error(m_host_path, "cannot finish the archive");
    if (m_frames)
        if (auto ended = m_frames->finish(); !ended.ok())
            return ended;
    if (m_compressor)
        if (auto ended = m_compressor->finish(*m_sink); !ended.ok())
            return ended;
    auto digest = m_sink->finish();
    if (!digest.ok())
        return digest.error();
    m_digest = *digest;
    m_uncompressed = m_compressor ? m_compressor->uncompressed_digest() : m_digest;
    m_size = m_sink->accepted();
    m_cloned = m_sink->cloned_blocks();
    m_failed = false;
    m_finished = true;
    return util::ok_status();
}

}  // namespace rootlock::image
