// What keeps the build caches (frames, OCI layers) to about one image per output path: each
// build lists the keys its image used, and files no listed image uses are deleted.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rootlock::image {

// Whether `name` is a cache key (64 lowercase hex digits): anything else in a keyed folder is a
// leftover temporary file.
bool is_cache_key(const std::string& name);

// The image a build renamed into place, as its listing remembers it.
struct ListedImage {
    std::string sha256;
    uint64_t entries = 0;
};

// Records `keys` as what the image at `image_path` holds (in ROOT/images/, one file per image
// path), then, under ROOT/.lock, deletes every file below ROOT/FOLDER (for each of `folders`)
// whose name no recorded image lists. With `built`, the listing also remembers the image file
// as it is now (device, inode, size, mtime, ctime) and its digest, for listed_image(). Failures
// are ignored: a cache is an optimisation.
void keep_listed(const std::string& root, const std::string& image_path,
                 const std::vector<std::string>& keys, const std::vector<std::string>& folders,
                 const ListedImage* built = nullptr);

// What prune_gone_images removed.
struct UnlistedCount {
    uint64_t files = 0;
    uint64_t bytes = 0;
};

// Under ROOT/.lock: drops the listings whose image no longer exists at the path it was built to
// (or that name none), then deletes every file below ROOT/FOLDER that no listing lists.
UnlistedCount prune_gone_images(const std::string& root, const std::vector<std::string>& folders);

// What the last build into `image_path` wrote, when it was made of exactly `keys` (in order)
// and the file there is still the one it renamed into place: then it already holds the bytes a
// build of `keys` would write, since a frame's bytes depend only on its key. Nullopt otherwise,
// and whenever the file was touched since (its ctime moves with any write, chmod or rename).
std::optional<ListedImage> listed_image(const std::string& root, const std::string& image_path,
                                        const std::vector<std::string>& keys);

}  // namespace rootlock::image
