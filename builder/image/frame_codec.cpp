// zstd through ZSTD_compress2 and gzip through zlib's deflate, each one whole frame per call.
#include "image/frame_codec.hpp"

#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cstdint>
#include <memory>

#include <fmt/format.h>

namespace rootlock::image {

namespace {

util::Result<std::vector<std::byte>> zstd_frame(int level, std::span<const std::byte> bytes,
                                                const std::string& where) {
    std::unique_ptr<ZSTD_CCtx, decltype(&ZSTD_freeCCtx)> context(ZSTD_createCCtx(), &ZSTD_freeCCtx);
    if (!context)
        return util::make_error(where, "out of memory");
    // nbWorkers stays 0: a multithreaded frame's bytes differ from a single-threaded one's, and
    // the frames themselves are what runs in parallel.
    const bool set =
        !ZSTD_isError(ZSTD_CCtx_setParameter(context.get(), ZSTD_c_compressionLevel, level)) &&
        !ZSTD_isError(ZSTD_CCtx_setParameter(context.get(), ZSTD_c_checksumFlag, 1)) &&
        !ZSTD_isError(ZSTD_CCtx_setParameter(context.get(), ZSTD_c_contentSizeFlag, 1));
    if (!set)
        return util::make_error(where, fmt::format("zstd refused level {}", level));
    std::vector<std::byte> out(ZSTD_compressBound(bytes.size()));
    const size_t written =
        ZSTD_compress2(context.get(), out.data(), out.size(), bytes.data(), bytes.size());
    if (ZSTD_isError(written))
        return util::make_error(where, std::string("zstd: ") + ZSTD_getErrorName(written));
    out.resize(written);
    return out;
}

util::Result<std::vector<std::byte>> gzip_frame(int level, std::span<const std::byte> bytes,
                                                const std::string& where) {
    z_stream stream{};
    // windowBits 15 + 16: a gzip wrapper whose header zlib fills with no name and mtime 0.
    if (deflateInit2(&stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return util::make_error(where, fmt::format("zlib refused level {}", level));
    // One call: a segment is a few MiB (frame_plan cuts large members), far below uInt's range.
    std::vector<std::byte> out(deflateBound(&stream, static_cast<uLong>(bytes.size())));
    if (bytes.size() > UINT32_MAX / 2 || out.size() > UINT32_MAX) {
        deflateEnd(&stream);
        return util::make_error(where, "a frame too large for one deflate call");
    }
    stream.next_in = const_cast<Bytef*>(reinterpret_cast<const Bytef*>(bytes.data()));
    stream.avail_in = static_cast<uInt>(bytes.size());
    stream.next_out = reinterpret_cast<Bytef*>(out.data());
    stream.avail_out = static_cast<uInt>(out.size());
    const int status = ::deflate(&stream, Z_FINISH);
    const size_t written = stream.total_out;
    deflateEnd(&stream);
    if (status != Z_STREAM_END)
        return util::make_error(where, "zlib's deflate failed");
    out.resize(written);
    return out;
}

}  // namespace

const char* frame_codec_name(FrameCodec codec) {
    return codec == FrameCodec::zstd ? "zstd" : "gzip";
}

std::string frame_codec_identity(FrameCodec codec, int level) {
    if (codec == FrameCodec::zstd)
        return fmt::format("zstd-{}-{}", level, ZSTD_versionNumber());
    return fmt::format("gzip-{}-{}", level, zlibVersion());
}

util::Result<std::vector<std::byte>> compress_frame(FrameCodec codec, int level,
                                                    std::span<const std::byte> bytes,
                                                    const std::string& where) {
    if (codec == FrameCodec::zstd)
        return zstd_frame(level, bytes, where);
    return gzip_frame(level, bytes, where);
}

bool is_whole_frame(FrameCodec codec, std::span<const std::byte> bytes) {
    if (codec == FrameCodec::zstd) {
        const size_t size = ZSTD_findFrameCompressedSize(bytes.data(), bytes.size());
        return !ZSTD_isError(size) && size == bytes.size();
    }
    // A gzip member has no frame index to walk: it is inflated, which checks its CRC32 and
    // length and is still far cheaper than deflating it again.
    if (bytes.size() < 18 || bytes[0] != std::byte{0x1f} || bytes[1] != std::byte{0x8b})
        return false;
    z_stream stream{};
    if (inflateInit2(&stream, 15 + 16) != Z_OK)
        return false;
    std::vector<Bytef> sink(1U << 16);
    stream.next_in = const_cast<Bytef*>(reinterpret_cast<const Bytef*>(bytes.data()));
    stream.avail_in = static_cast<uInt>(std::min<size_t>(bytes.size(), UINT32_MAX));
    int status = Z_OK;
    while (status == Z_OK) {
        stream.next_out = sink.data();
        stream.avail_out = static_cast<uInt>(sink.size());
        status = ::inflate(&stream, Z_NO_FLUSH);
    }
    const bool whole = status == Z_STREAM_END && stream.total_in == bytes.size();
    inflateEnd(&stream);
    return whole;
}

}  // namespace rootlock::image
