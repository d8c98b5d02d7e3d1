// StreamCompressor: compression in process, for an OCI layer. A layer is named twice: by the
// digest of its compressed blob and by its diff_id, the digest of the tar inside; libarchive's
// filters compress out of sight, so a layer's tar leaves libarchive uncompressed and is hashed
// and compressed here, the compressed bytes going on to an OutputSink (which hashes them).
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "image/output_sink.hpp"
#include "util/result.hpp"
#include "util/sha256.hpp"

namespace rootlock::image {

enum class StreamCodec { gzip, zstd };

class StreamCompressor {
  public:
    // gzip: zlib's deflate at `level` (1..9) with zlib's own gzip header (no name, mtime 0), the
    // bytes the same on every machine with one zlib; zstd: libzstd at `level` (1..22) in its
    // multithreaded mode with `threads` workers, whose bytes do not depend on the thread count.
    // Errors read "WHERE: problem".
    static util::Result<std::unique_ptr<StreamCompressor>> create(StreamCodec codec, int level,
                                                                  int threads, std::string where);
    ~StreamCompressor();
    StreamCompressor(const StreamCompressor&) = delete;
    StreamCompressor& operator=(const StreamCompressor&) = delete;

    // Hashes `bytes` and sends what the compressor gives out to `out`.
    util::Status write(std::span<const std::byte> bytes, OutputSink& out);
    // Ends the stream (gzip's trailer, zstd's last frame) into `out`. Once.
    util::Status finish(OutputSink& out);
    // The sha256 of every byte given to write(); valid after finish().
    const util::Sha256Digest& uncompressed_digest() const { return m_uncompressed; }

  private:
    struct State;
    StreamCompressor(StreamCodec codec, std::string where);
    util::Status pump(std::span<const std::byte> bytes, bool end, OutputSink& out);

    StreamCodec m_codec;
    std::string m_where;
    std::unique_ptr<State> m_state;
    util::Sha256 m_hash;
    util::Sha256Digest m_uncompressed{};
    std::vector<std::byte> m_out;
    bool m_finished = false;
};

}  // namespace rootlock::image
