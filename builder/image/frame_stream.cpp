// Frames in flight are bounded by the thread count, so memory stays at a few frames whatever
// the image's size.
#include "image/frame_stream.hpp"

#include <algorithm>
#include <chrono>
#include <memory>

namespace rootlock::image {

FrameStream::FrameStream(FrameCodec codec, int level, int threads, const FrameCache* cache,
                         OutputSink& sink, std::string where)
    : m_codec(codec),
      m_level(level),
      m_threads(static_cast<size_t>(std::max(threads, 1))),
      m_cache(cache),
      m_sink(sink),
      m_where(std::move(where)) {}

FrameStream::~FrameStream() {
    for (auto& pending : m_pending)
        if (pending.done.valid())
            pending.done.wait();
}

util::Status FrameStream::end_frame() {
    if (!m_open)
        return util::ok_status();
    m_open = false;
    ++m_frames;
    if (m_reusing) {
        m_reusing = false;
        return util::ok_status();  // its Pending went in when it began
    }
    m_largest = std::max(m_largest, m_current.size());
    // The bytes go to the worker behind a pointer: one allocation handed over, never copied.
    auto bytes = std::make_shared<std::vector<std::byte>>(std::move(m_current));
    Pending pending;
    pending.job = std::make_shared<Job>();
    pending.done =
        std::async(std::launch::async, [codec = m_codec, level = m_level, cache = m_cache,
                                        key = m_key, bytes, job = pending.job, where = m_where] {
            auto frame = compress_frame(codec, level, *bytes, where);
            if (!frame.ok()) {
                job->error = frame.error();
                return;
            }
            if (cache != nullptr && !key.empty())
                cache->store(key, *frame);
            job->frame = std::move(*frame);
        });
    m_current = {};
    m_pending.push_back(std::move(pending));
    return drain(m_threads);
}

util::Status FrameStream::drain(size_t keep) {
    // Frames that are done go out at once; beyond `keep` in flight, the oldest is waited for.
    while (!m_pending.empty()) {
        Pending& front = m_pending.front();
        if (front.cached) {
            CachedFrame frame = std::move(*front.cached);
            m_pending.pop_front();
            if (auto written = m_sink.write(std::move(frame.file), frame.checksum); !written.ok())
                return written;
            continue;
        }
        const bool done = front.done.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
        if (!done && m_pending.size() <= keep)
            break;
        front.done.get();
        if (front.job->error) {
            util::Error error = *front.job->error;
            m_pending.pop_front();
            return error;
        }
        std::vector<std::byte> bytes = std::move(front.job->frame);
        m_pending.pop_front();
        if (auto written = m_sink.write(std::move(bytes)); !written.ok())
            return written;
    }
    return util::ok_status();
}

util::Result<bool> FrameStream::begin(const std::string& key) {
    if (auto ended = end_frame(); !ended.ok())
        return ended.error();
    m_open = true;
    m_key = key;
    if (m_cache != nullptr && !key.empty()) {
        if (auto frame = m_cache->load(key)) {
            Pending pending;
            pending.cached = std::move(*frame);
            m_pending.push_back(std::move(pending));
            m_reusing = true;
            ++m_reused;
            if (auto drained = drain(m_threads); !drained.ok())
                return drained.error();
            return true;
        }
        if (auto refused = m_cache->refused())
            return util::make_integrity_error(
                *refused,
                "damaged: not the frame the frame cache stored (--offline: remove it, "
                "or run without --offline to compress it again)");
    }
    // Room for a whole frame at once: grown from empty, the vector would copy each frame's
    // bytes about twice more on the way (a fifth of a full build's time went there).
    m_current.reserve(std::max(k_frame_reserve, m_largest));
    return false;
}

void FrameStream::append(std::span<const std::byte> bytes) {
    if (!m_reusing)
        m_current.insert(m_current.end(), bytes.begin(), bytes.end());
}

util::Status FrameStream::finish() {
    if (auto ended = end_frame(); !ended.ok())
        return ended;
    return drain(0);
}

}  // namespace rootlock::image
