// TarWriter: the one wrapper around libarchive's writer. It writes a rootfs as a pax tarball whose
// bytes depend only on the entries given: fixed member names, numeric owners, no clocks.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "image/frame_cache.hpp"
#include "image/frame_plan.hpp"
#include "image/frame_stream.hpp"
#include "image/output_sink.hpp"
#include "image/stream_compressor.hpp"
#include "image/tar_entry.hpp"
#include "util/byte_source.hpp"
#include "util/result.hpp"

struct archive;

namespace rootlock::image {

enum class Compression { none, gzip, xz, zstd };

// From the output file's name: ".tar.zst", ".tar.xz", ".tar.gz" or ".tar"; anything else reads
// "NAME: unknown image type (use .tar.zst, .tar.xz, .tar.gz or .tar)".
util::Result<Compression> compression_for(std::string_view output_name);

struct TarWriterOptions {
    Compression compression = Compression::zstd;
    // zstd/xz worker threads, at least 1; the output bytes do not depend on it. zstd always runs
    // its multithreaded mode (whose bytes differ from the plain mode's), and xz always runs
    // liblzma's multithreaded encoder with at least 2 threads, since libarchive gives 1 thread
    // the single-block encoder, whose bytes differ.
    int threads = 2;
    int zstd_level = 3;  // 1..22
    int xz_level = 6;    // 0..9; at 6 with 2 threads the process peaked at 243 MiB (measured)
    int gzip_level = 6;  // 1..9, for in_process gzip (libarchive's filter keeps its default, 6)
    // An OCI layer: gzip or zstd done by a StreamCompressor instead of libarchive's filter, so
    // that the tar's own digest (the layer's diff_id) is known; uncompressed_digest() gives it.
    // The compressed bytes differ from the filter's (another zstd frame layout), so a tarball
    // image keeps the filter.
    bool in_process = false;
    // Member names "./etc/x", as `tar -C root .` writes a rootfs; false: "etc/x", as skopeo
    // writes an OCI archive (whose root "/" is then never written: it would have no name).
    bool dot_slash = true;
    // A tarball in zstd or gzip cut into independent frames where `frame_cuts` says (see
    // frame_plan.hpp; the caller plans them over exactly the entries it will add), each frame
    // taken from `frame_cache` when it holds the frame's key (may be null). Frames are
    // compressed `threads` at a time, single-threaded each, so the bytes depend neither on the
    // thread count nor on the cache. Null: libarchive's filter compresses the whole stream.
    const std::vector<FrameCut>* frame_cuts = nullptr;
    const FrameCache* frame_cache = nullptr;
};

// Opens an entry's content when its bytes are needed: never, when the frames that hold them
// all come from the frame cache.
using ContentOpener = std::function<util::Result<std::unique_ptr<util::ByteStream>>()>;

// What a member's bytes depend on besides the entry itself: the pax writer's version
// ("libarchive-3006002"), for the keys of cached frames and layers.
std::string tar_writer_identity();

// "Component order", the order GNU tar --sort=name produces: paths are compared component by
// component, bytewise, so a directory comes right before its contents ("/a" < "/a/b" < "/a.b").
bool component_less(std::string_view a, std::string_view b);

// Writes entries in component order. Member names are "./" + the path without its leading "/"
// ("./" for the root, directories with a trailing "/", as `tar -C root .` writes them), owners
// are numeric only, no atime/ctime, xattrs as pax SCHILY.xattr.NAME records (what GNU tar reads).
//
// The process locale must be UTF-8 (the CLI's main() calls setlocale(LC_ALL, "C.UTF-8")): pax
// stores names as UTF-8, and under the C locale a non-ASCII name is an error.
class TarWriter {
  public:
    // Creates (truncates) `host_path`; the caller gives a temporary name and renames it once
    // finish() succeeded. Options are checked before the file is created. Errors read
    // "HOST_PATH: problem" ("threads must be at least 1, not 0", "zstd level 99 is not in 1..22").
    static util::Result<std::unique_ptr<TarWriter>> create(const std::string& host_path,
                                                           const TarWriterOptions& options);
    // Without finish() nothing more reaches the file: it is left incomplete for the caller to
    // delete (no end-of-archive marker, compressor state dropped).
    ~TarWriter();
    TarWriter(const TarWriter&) = delete;
    TarWriter& operator=(const TarWriter&) = delete;

    // Adds one entry; a regular file takes exactly entry.size bytes from `content` (read in
    // 1 MiB pieces; nullptr reads as empty). Errors: a path that is not canonical, an entry not
    // after the previous one in component order ("PATH: out of order after PREV"), a duplicate,
    // a hard link to a path not written before, a content of the wrong length ("PATH: content
    // has N bytes, the entry declares M"), the stream's own errors, libarchive's ("PATH: ...").
    // An error found before anything was written leaves the writer usable; any other makes
    // every later call fail.
    util::Status add(const TarEntry& entry, util::ByteStream* content);
    util::Status add_bytes(const TarEntry& entry, std::string_view content);
    // add() with the content opened only if some of its bytes are not in cached frames.
    util::Status add_lazily(const TarEntry& entry, const ContentOpener& open);
    // Writes the end of the archive, flushes the filters and fsyncs the file.
    util::Status finish();
    // The sha256 of the file's bytes, hashed as they were written; valid after finish().
    const util::Sha256Digest& digest() const { return m_digest; }
    // The sha256 of the tar before compression; valid after finish() of an in_process writer
    // (for the others, where there is no compression, it is digest()).
    const util::Sha256Digest& uncompressed_digest() const { return m_uncompressed; }
    // The compressed size written; valid after finish().
    uint64_t size() const { return m_size; }
    uint64_t entries() const { return m_entries; }
    // Framed images: frames written, how many of them came from the frame cache, and how many
    // of those the filesystem shares with the cache instead of holding a copy (after finish()).
    uint64_t frames() const { return m_frames ? m_frames->frames() : 0; }
    uint64_t frames_reused() const { return m_frames ? m_frames->reused() : 0; }
    uint64_t frames_cloned() const { return m_cloned; }
    // The cached frame whose bytes failed their checksum, once add() or finish() failed for
    // it (OutputSink::damaged_file): the caller discards it and writes the image again.
    std::optional<std::string> damaged_frame() const {
        return m_sink ? m_sink->damaged_file() : std::nullopt;
    }

  private:
    struct ArchiveFree {
        void operator()(struct archive* handle) const;
    };
    explicit TarWriter(std::string host_path);
    // libarchive's sink: every write goes through it, so the destructor can cut the file off.
    static ssize_t write_callback(struct archive* handle, void* self, const void* buffer,
                                  size_t length);

    util::Status usable() const;
    util::Status check_entry(const TarEntry& entry) const;
    util::Status write_header(const TarEntry& entry);
    util::Status add_entry(const TarEntry& entry, util::ByteStream* content,
                           const ContentOpener* open);
    util::Status copy_content(const TarEntry& entry, util::ByteStream* content,
                              const ContentOpener* open);
    // Framed images: begins every frame planned to start at `offset` bytes into the content of
    // the entry about to be (or being) written.
    util::Status begin_frames_at(uint64_t offset);
    // The offset in the current entry's content where the next frame begins, if inside it.
    std::optional<uint64_t> next_cut_in_entry() const;
    util::Error archive_error(const std::string& where, const char* fallback) const;

    std::string m_host_path;
    std::unique_ptr<OutputSink> m_sink;              // writes and hashes on a thread of its own
    std::unique_ptr<StreamCompressor> m_compressor;  // in_process only
    std::unique_ptr<FrameStream> m_frames;           // framed images only
    std::vector<FrameCut> m_cuts;
    size_t m_next_cut = 0;
    util::Sha256Digest m_digest{};
    util::Sha256Digest m_uncompressed{};
    uint64_t m_size = 0;
    uint64_t m_cloned = 0;
    std::optional<util::Error> m_output_error;  // the sink's, which ended the image
    bool m_dot_slash = true;
    bool m_discard = false;  // set by the destructor so that libarchive's cleanup writes nothing
    bool m_failed = false;
    bool m_finished = false;
    std::unique_ptr<struct archive, ArchiveFree> m_archive;
    std::string m_previous;  // the last path written; entries() == 0 means none yet
    std::set<std::string, std::less<>> m_link_targets;  // non-directories written so far
    std::vector<std::byte> m_buffer;                    // the 1 MiB copy buffer
    uint64_t m_entries = 0;
};

}  // namespace rootlock::image
