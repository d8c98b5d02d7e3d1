// The frame cache's readers of cached frames: any bytes may be a torn or foreign cache file,
// and one whole frame of the input compressed (padded to a block boundary) must be recognised,
// its truncation not.
#include <span>

#include "fuzz_common.hpp"
#include "image/frame_codec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace rootlock::image;
    const auto bytes = std::as_bytes(std::span(data, size));
    for (auto codec : {FrameCodec::zstd, FrameCodec::gzip}) {
        (void)is_whole_frame(codec, bytes);  // must return, whatever the bytes
        auto frame = compress_frame(codec, 1, bytes, "fuzz");
        if (!rootlock::fuzz::check(frame))
            rootlock::fuzz::fail("a frame could not be compressed");
        if (frame->size() % k_frame_alignment != 0)
            rootlock::fuzz::fail("a frame does not end on a block boundary:",
                                 frame_codec_name(codec));
        if (!is_whole_frame(codec, *frame))
            rootlock::fuzz::fail("a frame just compressed is not whole:", frame_codec_name(codec));
        if (is_whole_frame(codec, std::span(*frame).first(frame->size() - 1)))
            rootlock::fuzz::fail("a frame cut by one byte reads as whole:",
                                 frame_codec_name(codec));
    }
    return 0;
}
