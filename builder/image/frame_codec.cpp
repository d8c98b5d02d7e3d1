// zstd through ZSTD_compress2 and gzip through zlib's deflate, each one whole frame per call.
#include "image/frame_codec.hpp"

#include <isa-l/crc64.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cstdint>
#include <memory>

#include <fmt/format.h>

namespace rootlock::image {

namespace {

// A zstd skippable frame's magic number: 0x184D2A50 with the low nibble free. 0x...50 is
// pzstd's (a 4-byte frame size it reads back) and 0x...5E the seekable format's seek table;
// 7 is neither, so no reader takes the padding for something it means.
constexpr uint32_t k_zstd_padding_magic = 0x184D2A57;
constexpr size_t k_zstd_padding_header = 8;  // magic and the 4-byte length of what follows
// The empty gzip member that pads: a header with FEXTRA and one subfield "RL" of LEN bytes,
// then an empty deflate stream (one final fixed-Huffman block: 03 00), CRC32 0 and ISIZE 0.
constexpr size_t k_gzip_padding_overhead = 10 + 2 + 4 + 2 + 8;
constexpr size_t k_gzip_padding_most = 65535 - 4;  // XLEN is 16 bits and holds the subfield

void put_le16(std::vector<std::byte>& out, size_t value) {
    out.push_back(static_cast<std::byte>(value & 0xff));
    out.push_back(static_cast<std::byte>((value >> 8) & 0xff));
}

void put_le32(std::vector<std::byte>& out, size_t value) {
    put_le16(out, value & 0xffff);
    put_le16(out, (value >> 16) & 0xffff);
}

// The frame's own bytes followed by its padding, in the one vector.
void pad(FrameCodec codec, std::vector<std::byte>& frame) {
    const std::vector<std::byte> padding = frame_padding(codec, frame.size());
    frame.insert(frame.end(), padding.begin(), padding.end());
}

// Whether `bytes` begins with a zstd skippable frame (any of its sixteen magic numbers), which
// ZSTD_findFrameCompressedSize measures like a frame of data. (ZSTD_isSkippableFrame is in
// zstd's unstable API.)
bool starts_skippable(std::span<const std::byte> bytes) {
    if (bytes.size() < 4)
        return false;
    uint32_t magic = 0;
    for (size_t i = 0; i < 4; ++i)
        magic |= static_cast<uint32_t>(bytes[i]) << (8 * i);
    return (magic & 0xFFFFFFF0U) == (k_zstd_padding_magic & 0xFFFFFFF0U);
}

// Whether `rest` is exactly the padding compress_frame puts after a frame of `size` bytes.
bool is_padding_of(FrameCodec codec, size_t size, std::span<const std::byte> rest) {
    const std::vector<std::byte> expected = frame_padding(codec, size);
    return rest.size() == expected.size() && std::equal(rest.begin(), rest.end(), expected.begin());
}

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
    pad(FrameCodec::zstd, out);
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
    pad(FrameCodec::gzip, out);
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

// Nothing when the frame already ends on a boundary, else up to the next boundary that leaves
// room for the padding's own header.
std::vector<std::byte> frame_padding(FrameCodec codec, size_t size) {
    std::vector<std::byte> out;
    size_t gap = (k_frame_alignment - size % k_frame_alignment) % k_frame_alignment;
    if (gap == 0)
        return out;
    const size_t overhead =
        codec == FrameCodec::zstd ? k_zstd_padding_header : k_gzip_padding_overhead;
    if (gap < overhead)
        gap += k_frame_alignment;
    const size_t payload = gap - overhead;
    out.reserve(gap);
    if (codec == FrameCodec::zstd) {
        put_le32(out, k_zstd_padding_magic);
        put_le32(out, payload);
    } else {
        static_assert(k_gzip_padding_most > 2 * k_frame_alignment);
        for (const unsigned value : {0x1fU, 0x8bU, 8U, 4U})  // magic, deflate, FLG = FEXTRA
            out.push_back(static_cast<std::byte>(value));
        put_le32(out, 0);               // MTIME
        out.push_back(std::byte{0});    // XFL
        out.push_back(std::byte{255});  // OS: unknown
        put_le16(out, payload + 4);     // XLEN: the one subfield
        out.push_back(std::byte{'R'});  // SI1 SI2
        out.push_back(std::byte{'L'});
        put_le16(out, payload);  // LEN
    }
    out.resize(out.size() + payload, std::byte{0});
    if (codec == FrameCodec::gzip) {
        out.push_back(std::byte{3});  // the empty final block
        out.push_back(std::byte{0});
        put_le32(out, 0);  // CRC32 of nothing
        put_le32(out, 0);  // ISIZE
    }
    return out;
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
        return !ZSTD_isError(size) && size <= bytes.size() && !starts_skippable(bytes) &&
               is_padding_of(codec, size, bytes.subspan(size));
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
    // inflate stops at the end of the first member: what follows must be its padding.
    const bool whole = status == Z_STREAM_END && stream.total_in <= bytes.size() &&
                       is_padding_of(codec, stream.total_in, bytes.subspan(stream.total_in));
    inflateEnd(&stream);
    return whole;
}

uint64_t frame_checksum(uint64_t running, std::span<const std::byte> bytes) {
    return crc64_ecma_refl(running, reinterpret_cast<const unsigned char*>(bytes.data()),
                           bytes.size());
}

}  // namespace rootlock::image
