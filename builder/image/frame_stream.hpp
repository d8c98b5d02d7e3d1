// FrameStream: an image's tar, frame by frame, into an OutputSink. Each frame is either taken
// whole from the frame cache or compressed on a worker thread (up to `threads` at once) and
// stored there; frames reach the sink in order, so the bytes are the same whatever was cached
// and however many threads ran.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <future>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "image/frame_cache.hpp"
#include "image/frame_codec.hpp"
#include "image/output_sink.hpp"
#include "util/result.hpp"

namespace rootlock::image {

class FrameStream {
  public:
    // `cache` may be null (every frame compressed, none kept). `where` names the image in errors.
    FrameStream(FrameCodec codec, int level, int threads, const FrameCache* cache, OutputSink& sink,
                std::string where);
    // Waits for the workers; what they made is dropped.
    ~FrameStream();
    FrameStream(const FrameStream&) = delete;
    FrameStream& operator=(const FrameStream&) = delete;

    // Ends the current frame and begins one cached under `key` (empty: never cached, as the
    // end-of-archive frame). True when the cache holds it: the bytes appended until the next
    // begin() are then dropped, the cached frame standing for them.
    util::Result<bool> begin(const std::string& key);
    // The current frame's uncompressed bytes.
    void append(std::span<const std::byte> bytes);
    // Whether the current frame came from the cache (its bytes need not be made at all).
    bool reusing() const { return m_reusing; }
    // Ends the last frame and hands every frame to the sink. Once.
    util::Status finish();

    uint64_t frames() const { return m_frames; }

    // A frame's usual size: frame_plan cuts every 8 MiB of a run, plus a member's headers. A
    // larger frame still fits (the buffer grows, and later frames start that large); a
    // smaller one leaves pages untouched.
    static constexpr size_t k_frame_reserve = (size_t{8} << 20) + (size_t{64} << 10);
    uint64_t reused() const { return m_reused; }

  private:
    // A frame being compressed: filled by its worker before `done` becomes ready.
    struct Job {
        std::vector<std::byte> frame;
        std::optional<util::Error> error;
    };
    struct Pending {
        std::optional<CachedFrame> cached;  // a frame from the cache
        std::shared_ptr<Job> job;
        std::future<void> done;
    };
    util::Status end_frame();
    util::Status drain(size_t keep);

    FrameCodec m_codec;
    int m_level;
    size_t m_threads;
    const FrameCache* m_cache;
    OutputSink& m_sink;
    std::string m_where;
    bool m_open = false;
    bool m_reusing = false;
    std::string m_key;
    std::vector<std::byte> m_current;
    size_t m_largest = 0;  // the largest frame compressed so far
    std::deque<Pending> m_pending;
    uint64_t m_frames = 0;
    uint64_t m_reused = 0;
};

}  // namespace rootlock::image
