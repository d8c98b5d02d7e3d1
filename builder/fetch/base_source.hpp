// The base a lock is made over: a pinned tarball (downloaded into the content store, or a local
// file, sha256 verified either way) or a Debian base made once with mmdebstrap and cached by its
// parameters. Either way it is read as a tarball, never extracted.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "fs/file_tree.hpp"
#include "index/content_store.hpp"
#include "index/http_client.hpp"
#include "index/page_cache.hpp"
#include "pylock/pylock.hpp"
#include "recipe/recipe.hpp"
#include "util/byte_source.hpp"
#include "util/result.hpp"

namespace rootlock::fetch {

struct BaseOptions {
    std::string recipe_dir;  // relative tarball paths are taken from here
    std::string cache_dir;   // the content store's root
    bool offline = false;
    // SOURCE_DATE_EPOCH handed to mmdebstrap, so a rebuilt Debian base keeps its timestamps.
    std::string debian_epoch = "1700000000";
    // The previous lock's base: a Debian base made from the same request keeps its packages
    // unless `upgrade` asks for the archives' newest.
    const pylock::LockBase* previous = nullptr;
    bool upgrade = false;
    // Shown each ELF member of the base as its tarball is read (the recipe's GPUs need the
    // base's device code too: a Debian base may hold CUDA libraries).
    std::function<std::unique_ptr<util::StreamObserver>(const std::string&, uint64_t)> observe_elf;
};

struct AcquiredBase {
    std::shared_ptr<const fs::FileTree> tree;
    pylock::LockBase record;  // what the lock says about it
    std::string host_path;    // the tarball read
};

util::Result<AcquiredBase> acquire_base(const recipe::BaseSection& base, const BaseOptions& options,
                                        index::HttpClient& http, index::ContentStore& store,
                                        index::PageCache& pages);

// The base a lock records, acquired for a build: a Debian base assembled from its pinned .debs,
// or the pinned tarball. A Debian base recorded without its packages (a lock from before
// rootlock pinned them) is refused: "relock it: this lock pins its Debian base only by the
// tarball made on the machine that locked it".
util::Result<AcquiredBase> acquire_locked_base(const pylock::LockBase& base,
                                               const BaseOptions& options, index::HttpClient& http,
                                               index::ContentStore& store, index::PageCache& pages);

}  // namespace rootlock::fetch
