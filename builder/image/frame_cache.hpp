// The frame cache: compressed frames of image segments, each under the key of what it holds
// (frame_plan), so a rebuild copies every unchanged run of members instead of compressing it
// again. Under CACHE/frames/CODEC/KK/KEY; CACHE/frames/images/ lists, per image path, the keys
// of its last build, and frames no listed image uses are deleted after each build, so the cache
// holds about one image's worth of frames per output path.
//
// The cache is an optimisation only: a frame it cannot write or read back whole is compressed
// again, and nothing it holds changes an image's bytes. Each frame's checksum (frame_checksum)
// is kept beside it, under CACHE/frames/sums/KK/KEY, and checked as the frame's bytes are hashed
// into the image (OutputSink::write): a frame changed on disk ends that write, and the build
// discards it and writes the image again with every frame checked as it is loaded.
#pragma once

#include <cstddef>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "image/cache_listing.hpp"
#include "image/frame_codec.hpp"
#include "util/mapped_file.hpp"

namespace rootlock::image {

// A frame from the cache and the checksum it was stored with.
struct CachedFrame {
    util::MappedFile file;
    uint64_t checksum = 0;
};

class FrameCache {
  public:
    // `cache_dir`: the content store's root (the frames live in its "frames" folder).
    FrameCache(const std::string& cache_dir, FrameCodec codec);

    FrameCodec codec() const { return m_codec; }
    // The frame stored under `key`, mapped, or nullopt when absent, unreadable or not one whole
    // frame. Mapped rather than read: a rebuild hands hundreds of MB of cached frames on, and a
    // buffer would be zeroed and filled for each. Safe because a cache file is never changed in
    // place, only replaced by rename or unlinked, which leave a mapping intact. The file stays
    // open beside its mapping, so the sink can clone it into the image (OutputSink::write).
    // A frame stored without a checksum (by an earlier version) is absent.
    std::optional<CachedFrame> load(const std::string& key) const;
    // From now on, load() reads each frame's bytes and checks them against its checksum itself
    // before handing it on, discarding (and reporting, util/cache_damage) the ones that fail:
    // a second read, for the write after one found a damaged frame, so that it cannot fail so.
    void check_on_load() { m_check_on_load = true; }
    // Removes the frame at `path` (one load() gave) and its checksum, and reports it.
    void discard(const std::string& path) const;
    // Offline, a damaged frame is not discarded but refused: load() leaves it in place and
    // reads as absent, and refused() names it for the build to fail with.
    void set_offline(bool offline) { m_offline = offline; }
    std::optional<std::string> refused() const;
    // Stores `frame` under `key` (a temporary file renamed into place); failures are ignored.
    void store(const std::string& key, std::span<const std::byte> frame) const;
    // Records `keys` as what the image at `image_path` holds (and, with `built`, the file
    // itself: see cache_listing.hpp), then deletes the frames (of every codec) that no recorded
    // image holds. Failures are ignored.
    void keep_only_used(const std::string& image_path, const std::vector<std::string>& keys,
                        const ListedImage* built = nullptr) const;
    // `cache prune`: the frames of images that no longer exist removed (cache_listing.hpp).
    UnlistedCount prune_gone_images() const;
    // The image at `image_path` when the last build there wrote exactly `keys` and the file is
    // untouched since: a rebuild of the same frames keeps it instead of writing it again.
    std::optional<ListedImage> unchanged_image(const std::string& image_path,
                                               const std::vector<std::string>& keys) const;

  private:
    std::string path_of(const std::string& key) const;
    std::string checksum_path_of(const std::string& key) const;

    std::string m_root;  // CACHE/frames
    FrameCodec m_codec;
    bool m_check_on_load = false;
    bool m_offline = false;
    mutable std::mutex m_refused_mutex;  // load() runs on the writing thread, refused() after
    mutable std::optional<std::string> m_refused;
    // discard(), or offline, the refusal.
    void damaged(const std::string& path) const;
};

}  // namespace rootlock::image
