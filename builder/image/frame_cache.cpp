// Frames as plain files, one per key; pruned through cache_listing.
#include "image/frame_cache.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>

#include "util/atomic_file.hpp"

namespace rootlock::image {

FrameCache::FrameCache(const std::string& cache_dir, FrameCodec codec)
    : m_root(cache_dir + "/frames"), m_codec(codec) {}

std::string FrameCache::path_of(const std::string& key) const {
    return m_root + "/" + frame_codec_name(m_codec) + "/" + key.substr(0, 2) + "/" + key;
}

std::optional<util::MappedFile> FrameCache::load(const std::string& key) const {
    auto frame = util::MappedFile::open(path_of(key), /*keep_descriptor=*/true);
    if (!frame || !is_whole_frame(m_codec, frame->bytes()))
        return std::nullopt;
    return frame;
}

void FrameCache::store(const std::string& key, std::span<const std::byte> frame) const {
    // No fsync: a frame lost to a crash is compressed again, and a torn one is not whole.
    static std::atomic<unsigned> serial{0};
    const std::string path = path_of(key);
    const std::string folder = path.substr(0, path.rfind('/'));
    if (!util::make_directories(folder).ok())
        return;
    const std::string temporary =
        folder + "/.tmp-" + std::to_string(::getpid()) + "-" + std::to_string(serial++);
    const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return;
    size_t done = 0;
    while (done < frame.size()) {
        const ssize_t wrote = ::write(fd, frame.data() + done, frame.size() - done);
        if (wrote <= 0)
            break;
        done += static_cast<size_t>(wrote);
    }
    const bool closed = ::close(fd) == 0;
    if (done != frame.size() || !closed || ::rename(temporary.c_str(), path.c_str()) != 0)
        ::unlink(temporary.c_str());
}

void FrameCache::keep_only_used(const std::string& image_path, const std::vector<std::string>& keys,
                                const ListedImage* built) const {
    keep_listed(m_root, image_path, keys, {"zstd", "gzip"}, built);
}

std::optional<ListedImage> FrameCache::unchanged_image(const std::string& image_path,
                                                       const std::vector<std::string>& keys) const {
    return listed_image(m_root, image_path, keys);
}

}  // namespace rootlock::image
