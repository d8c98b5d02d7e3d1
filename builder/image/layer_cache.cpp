// A blob is trusted while its size and modification time (nanoseconds) are those recorded when
// it was stored: hashing a GiB layer again would cost what the cache saves. Hard links keep
// both (a link changes only the ctime, which is why the ctime is not part of the stamp), and
// a blob replaced, truncated or written to in place changes them. A change that restores the
// modification time afterwards goes unseen here; the layer's digest in the image then no
// longer matches its bytes, which every OCI client checks on pull (and `check` on read).
#include "image/layer_cache.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <sstream>
#include <system_error>

#include "image/cache_listing.hpp"
#include "util/atomic_file.hpp"
#include "util/cache_damage.hpp"

namespace rootlock::image {

namespace {

std::optional<std::pair<uint64_t, int64_t>> size_and_mtime(const std::string& path) {
    struct stat info {};
    if (::stat(path.c_str(), &info) != 0 || !S_ISREG(info.st_mode))
        return std::nullopt;
    return std::pair{static_cast<uint64_t>(info.st_size),
                     static_cast<int64_t>(info.st_mtim.tv_sec) * 1000000000 + info.st_mtim.tv_nsec};
}

// `to` made a second name of `from` (or a copy of it, across file systems), replacing `to`.
bool place(const std::string& from, const std::string& to) {
    static std::atomic<unsigned> serial{0};
    const std::string temporary =
        to + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(serial++);
    std::error_code error;
    if (::link(from.c_str(), temporary.c_str()) != 0) {
        std::filesystem::copy_file(from, temporary, error);
        if (error)
            return false;
    }
    if (::rename(temporary.c_str(), to.c_str()) != 0) {
        ::unlink(temporary.c_str());
        return false;
    }
    return true;
}

}  // namespace

LayerCache::LayerCache(const std::string& cache_dir) : m_root(cache_dir + "/layers") {}

std::string LayerCache::blob_of(const std::string& key) const {
    return m_root + "/blobs/" + key.substr(0, 2) + "/" + key;
}

std::string LayerCache::meta_of(const std::string& key) const {
    return m_root + "/meta/" + key.substr(0, 2) + "/" + key;
}

util::Result<std::optional<CachedLayer>> LayerCache::take(const std::string& key,
                                                          const std::string& host_path) const {
    using Found = std::optional<CachedLayer>;
    auto text = util::read_host_file(meta_of(key));
    if (!text.ok())
        return Found();
    const std::string blob = blob_of(key);
    auto now = size_and_mtime(blob);
    if (!now)
        return Found();  // a record whose layer was never placed: written again
    std::istringstream in(*text);
    CachedLayer layer;
    int64_t mtime = 0;
    if (!(in >> layer.digest >> layer.size >> layer.diff_id >> mtime) || now->first != layer.size ||
        now->second != mtime) {
        if (auto refused = util::discard_damaged(
                blob, "damaged: changed since it was stored (its size or time)", m_offline,
                "write the layer again", {meta_of(key)}))
            return *refused;
        return Found();
    }
    if (!place(blob, host_path))
        return Found();
    return Found(layer);
}

void LayerCache::store(const std::string& key, const std::string& host_path,
                       const CachedLayer& layer) const {
    const std::string blob = blob_of(key);
    if (!util::make_directories(blob.substr(0, blob.rfind('/'))).ok() ||
        !util::make_directories(meta_of(key).substr(0, meta_of(key).rfind('/'))).ok())
        return;
    if (!place(host_path, blob))
        return;
    auto stored = size_and_mtime(blob);
    if (!stored || stored->first != layer.size)
        return;
    (void)util::write_file_atomically(
        meta_of(key), layer.digest + " " + std::to_string(layer.size) + " " + layer.diff_id + " " +
                          std::to_string(stored->second) + "\n");
}

UnlistedCount LayerCache::prune_gone_images() const {
    return image::prune_gone_images(m_root, {"blobs", "meta"});
}

void LayerCache::keep_only_used(const std::string& image_path,
                                const std::vector<std::string>& keys) const {
    keep_listed(m_root, image_path, keys, {"blobs", "meta"});
}

}  // namespace rootlock::image
