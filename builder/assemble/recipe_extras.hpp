// What a recipe adds to the final tree besides the venv: its [files], and its [loader]
// library directories as /etc/ld.so.conf.d/rootlock.conf with the /etc/ld.so.cache that glibc's
// ldconfig would write for the result. Lock and build both call it, so both check one tree.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "fs/overlay_tree.hpp"
#include "util/result.hpp"

namespace rootlock::assemble {

inline constexpr const char* k_rootlock_ld_conf = "/etc/ld.so.conf.d/rootlock.conf";

// Adds each file (0644; a path that is a directory is refused: "PATH: is a directory in the
// base; [files] writes files") and, when `library_paths` is not empty, the conf file and the
// regenerated cache (keeping the generator string of the base's cache, so the bytes are what
// the base's own ldconfig writes). Errors: the overlay's ("PATH: /a is not a directory"), and
// "/etc/ld.so.conf: does not include /etc/ld.so.conf.d/rootlock.conf, so [loader]
// library-paths would be ignored" when the base's conf would never read the file.
util::Status add_recipe_extras(fs::OverlayTree& tree, const std::vector<std::string>& library_paths,
                               const std::vector<std::pair<std::string, std::string>>& files);

// Replaces /etc/ld.so.cache with the one glibc's ldconfig would write for the tree as it is now
// (its ld.so.conf, the target's built-in directories), under the generator string of the cache
// already there, so the bytes are what the base's own ldconfig writes.
util::Status regenerate_ld_so_cache(fs::OverlayTree& tree);

}  // namespace rootlock::assemble
