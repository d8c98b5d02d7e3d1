// What keeps the build caches (frames, OCI layers) to about one image per output path: each
// build lists the keys its image used, and files no listed image uses are deleted.
#pragma once

#include <string>
#include <vector>

namespace rootlock::image {

// Whether `name` is a cache key (64 lowercase hex digits): anything else in a keyed folder is a
// leftover temporary file.
bool is_cache_key(const std::string& name);

// Records `keys` as what the image at `image_path` holds (in ROOT/images/, one file per image
// path), then, under ROOT/.lock, deletes every file below ROOT/FOLDER (for each of `folders`)
// whose name no recorded image lists. Failures are ignored: a cache is an optimisation.
void keep_listed(const std::string& root, const std::string& image_path,
                 const std::vector<std::string>& keys, const std::vector<std::string>& folders);

}  // namespace rootlock::image
