// The layer cache: the compressed OCI layers of earlier builds, each under the key of what it
// holds (MembersKey over its entries, with the codec and library versions), so a rebuild after
// a one-package change writes that package's layer and copies the others. Under
// CACHE/layers/blobs/KK/KEY, with KEY's digest, size and diff_id in CACHE/layers/meta/KK/KEY;
// pruned like the frame cache to what the last build of each output path used.
//
// An optimisation only: a layer it cannot hand back intact is written again, and nothing it
// holds changes an image's bytes.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "image/cache_listing.hpp"
#include "util/result.hpp"

namespace rootlock::image {

struct CachedLayer {
    std::string digest;   // "sha256:..." of the compressed blob
    uint64_t size = 0;    // the blob's bytes
    std::string diff_id;  // "sha256:..." of the tar inside
};

class LayerCache {
  public:
    // `cache_dir`: the content store's root (the layers live in its "layers" folder).
    explicit LayerCache(const std::string& cache_dir);

    // Offline, a damaged layer is an error instead of discarded (take()).
    void set_offline(bool offline) { m_offline = offline; }

    // The layer under `key`, put at `host_path` (a hard link, else a copy), or nullopt when
    // absent. One changed since it was stored (its size or modification time, or a record
    // that does not parse) is damaged: removed and reported (util/cache_damage), then absent;
    // offline, an ErrorKind::integrity error naming it.
    util::Result<std::optional<CachedLayer>> take(const std::string& key,
                                                  const std::string& host_path) const;
    // Keeps the finished layer at `host_path` under `key` (a hard link, else a copy).
    void store(const std::string& key, const std::string& host_path,
               const CachedLayer& layer) const;
    // `cache prune`: the layers of images that no longer exist removed (cache_listing.hpp).
    UnlistedCount prune_gone_images() const;
    // keep_listed over the blobs and their records.
    void keep_only_used(const std::string& image_path, const std::vector<std::string>& keys) const;

  private:
    std::string blob_of(const std::string& key) const;
    std::string meta_of(const std::string& key) const;

    std::string m_root;  // CACHE/layers
    bool m_offline = false;
};

}  // namespace rootlock::image
