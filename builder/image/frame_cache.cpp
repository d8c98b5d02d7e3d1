// Frames as plain files, one per key; pruned through cache_listing.
#include "image/frame_cache.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <charconv>

#include <fmt/format.h>

#include "util/atomic_file.hpp"
#include "util/cache_damage.hpp"

namespace rootlock::image {

FrameCache::FrameCache(const std::string& cache_dir, FrameCodec codec)
    : m_root(cache_dir + "/frames"), m_codec(codec) {}

std::string FrameCache::path_of(const std::string& key) const {
    return m_root + "/" + frame_codec_name(m_codec) + "/" + key.substr(0, 2) + "/" + key;
}

std::string FrameCache::checksum_path_of(const std::string& key) const {
    return m_root + "/sums/" + key.substr(0, 2) + "/" + key;
}

std::optional<CachedFrame> FrameCache::load(const std::string& key) const {
    auto text = util::read_host_file(checksum_path_of(key));
    if (!text.ok() || text->size() != 17 || text->back() != '\n')
        return std::nullopt;
    uint64_t checksum = 0;
    const char* end = text->data() + 16;
    if (std::from_chars(text->data(), end, checksum, 16).ptr != end)
        return std::nullopt;
    auto frame = util::MappedFile::open(path_of(key), /*keep_descriptor=*/true);
    if (!frame)
        return std::nullopt;  // a checksum without its frame: a store cut short
    if (!is_whole_frame(m_codec, frame->bytes()) ||
        (m_check_on_load && frame_checksum(0, frame->bytes()) != checksum)) {
        damaged(frame->path());
        return std::nullopt;
    }
    return CachedFrame{std::move(*frame), checksum};
}

void FrameCache::damaged(const std::string& path) const {
    if (!m_offline)
        return discard(path);
    std::lock_guard lock(m_refused_mutex);
    if (!m_refused)
        m_refused = path;
}

std::optional<std::string> FrameCache::refused() const {
    std::lock_guard lock(m_refused_mutex);
    return m_refused;
}

void FrameCache::discard(const std::string& path) const {
    const std::string key = path.substr(path.rfind('/') + 1);
    ::unlink(path.c_str());
    ::unlink(checksum_path_of(key).c_str());
    util::report_cache_damage(path +
                              ": damaged: its bytes are not the ones the frame cache stored; "
                              "removed, the frame compressed again");
}

namespace {

// `bytes` at `path` through a temporary renamed into place; false when any step failed (and
// nothing is left behind). No fsync: a frame lost to a crash is compressed again, and a torn
// one is not whole or fails its checksum.
bool place_file(const std::string& path, std::span<const std::byte> bytes) {
    static std::atomic<unsigned> serial{0};
    const std::string folder = path.substr(0, path.rfind('/'));
    if (!util::make_directories(folder).ok())
        return false;
    const std::string temporary =
        folder + "/.tmp-" + std::to_string(::getpid()) + "-" + std::to_string(serial++);
    const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return false;
    size_t done = 0;
    while (done < bytes.size()) {
        const ssize_t wrote = ::write(fd, bytes.data() + done, bytes.size() - done);
        if (wrote <= 0)
            break;
        done += static_cast<size_t>(wrote);
    }
    const bool closed = ::close(fd) == 0;
    if (done != bytes.size() || !closed || ::rename(temporary.c_str(), path.c_str()) != 0) {
        ::unlink(temporary.c_str());
        return false;
    }
    return true;
}

}  // namespace

void FrameCache::store(const std::string& key, std::span<const std::byte> frame) const {
    // The checksum first: a frame is never in place without it.
    const std::string sum = fmt::format("{:016x}\n", frame_checksum(0, frame));
    if (!place_file(checksum_path_of(key), std::as_bytes(std::span(sum))))
        return;
    (void)place_file(path_of(key), frame);
}

void FrameCache::keep_only_used(const std::string& image_path, const std::vector<std::string>& keys,
                                const ListedImage* built) const {
    keep_listed(m_root, image_path, keys, {"zstd", "gzip", "sums"}, built);
}

UnlistedCount FrameCache::prune_gone_images() const {
    return image::prune_gone_images(m_root, {"zstd", "gzip", "sums"});
}

std::optional<ListedImage> FrameCache::unchanged_image(const std::string& image_path,
                                                       const std::vector<std::string>& keys) const {
    return listed_image(m_root, image_path, keys);
}

}  // namespace rootlock::image
