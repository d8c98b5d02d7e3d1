// One independent compressed frame per segment of an image's tar: a zstd frame, or a gzip
// member. Frames concatenate into one valid stream (zstd and gzip readers go on to the next
// frame or member), so an image can be cut at member boundaries and each piece compressed, or
// taken from the frame cache, on its own. The bytes depend only on the input, the codec, its
// level and the library's version: never on threads, the cache or the machine.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "util/result.hpp"

namespace rootlock::image {

enum class FrameCodec { zstd, gzip };

// "zstd" or "gzip": the frame cache's folder for the codec.
const char* frame_codec_name(FrameCodec codec);

// What else the bytes of a frame depend on besides its input: codec, level and the compression
// library's version ("zstd-3-10505"), so that frames from another libzstd are never reused.
std::string frame_codec_identity(FrameCodec codec, int level);

// The whole of `bytes` as one frame: zstd at `level` (1..22), single-threaded, with the content
// size and checksum in the frame; gzip: zlib's deflate at `level` (1..9), a header with no name
// and mtime 0. Errors read "WHERE: problem".
util::Result<std::vector<std::byte>> compress_frame(FrameCodec codec, int level,
                                                    std::span<const std::byte> bytes,
                                                    const std::string& where);

// Whether `bytes` is exactly one whole frame of `codec` (a torn or foreign cache file is not):
// zstd walks the frame's block headers (a torn file ends early); gzip is inflated (CRC32 and
// length checked).
bool is_whole_frame(FrameCodec codec, std::span<const std::byte> bytes);

}  // namespace rootlock::image
