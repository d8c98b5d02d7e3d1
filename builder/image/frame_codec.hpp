// One independent compressed frame per segment of an image's tar: a zstd frame, or a gzip
// member. Frames concatenate into one valid stream (zstd and gzip readers go on to the next
// frame or member), so an image can be cut at member boundaries and each piece compressed, or
// taken from the frame cache, on its own. The bytes depend only on the input, the codec, its
// level and the library's version: never on threads, the cache or the machine.
//
// Each frame ends with padding that readers skip (a zstd skippable frame, an empty gzip member
// whose header carries an extra field) up to the next multiple of k_frame_alignment, so every
// frame of an image starts on a block boundary of its file: a filesystem that shares blocks
// between files (XFS, btrfs) can then clone a cached frame into a new image instead of writing
// its bytes again (FileWriter::clone).
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "util/result.hpp"

namespace rootlock::image {

enum class FrameCodec { zstd, gzip };

// The block size frames are padded to: a multiple of every filesystem block size in use on
// x86-64 and arm64 hosts with 4 KiB pages (XFS, btrfs and ext4 default to 4 KiB).
constexpr size_t k_frame_alignment = 4096;

// "zstd" or "gzip": the frame cache's folder for the codec.
const char* frame_codec_name(FrameCodec codec);

// What else the bytes of a frame depend on besides its input: codec, level and the compression
// library's version ("zstd-3-10505"), so that frames from another libzstd are never reused.
std::string frame_codec_identity(FrameCodec codec, int level);

// The whole of `bytes` as one frame, then its padding: zstd at `level` (1..22),
// single-threaded, with the content size and checksum in the frame; gzip: zlib's deflate at
// `level` (1..9), a header with no name and mtime 0. The result's size is a multiple of
// k_frame_alignment. Errors read "WHERE: problem".
util::Result<std::vector<std::byte>> compress_frame(FrameCodec codec, int level,
                                                    std::span<const std::byte> bytes,
                                                    const std::string& where);

// The padding compress_frame appends to a frame of `size` bytes: the fewest bytes that end on
// a multiple of k_frame_alignment and still hold the padding's header (so 0, or 8 bytes up
// for zstd, 26 up for gzip); zeros inside.
std::vector<std::byte> frame_padding(FrameCodec codec, size_t size);

// Whether `bytes` is exactly one whole frame of `codec` and its padding, as compress_frame
// writes them (a torn or foreign cache file is not): zstd walks the frame's block headers (a
// torn file ends early); gzip is inflated (CRC32 and length checked); the padding must be
// exactly the bytes compress_frame would append.
bool is_whole_frame(FrameCodec codec, std::span<const std::byte> bytes);

// The checksum the frame cache keeps beside each frame (CRC-64/ECMA-182, ISA-L's): `running`
// carried on over `bytes`, starting from 0. A frame's bytes are checked against it as they pass
// on their way into an image, beside the image's own SHA-256 in the same read, at several GB/s
// where that SHA-256 runs at one: a cache entry changed on disk is found without a second hash
// of the image's bytes. Not a defence against someone who can write the cache (they could
// write the checksum too); a defence against disks and hands.
uint64_t frame_checksum(uint64_t running, std::span<const std::byte> bytes);

}  // namespace rootlock::image
