// One library search as glibc's open_path and open_verify do it: try each directory (with its
// hwcaps subdirectories first), accept the first ELF of the right class and machine, skip the
// others, and stop at a file ld.so would reject outright. Directory listings and probes are
// memoised so that checking a whole root costs one listing per directory.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "elf/elf_info.hpp"
#include "fs/file_tree.hpp"
#include "fs/path_resolve.hpp"
#include "loader/ld_so_cache.hpp"
#include "loader/target.hpp"

namespace rootlock::loader {

// A file ld.so would accept for a request.
struct Found {
    std::string path;       // as ld.so names it: the searched directory + "/" + name
    std::string canonical;  // resolved inside the root
    uint64_t identity = 0;  // same file, same identity (hard links, merged /usr)
    std::shared_ptr<const elf::ElfInfo> info;
};

// What trying one candidate path gave.
struct Attempt {
    enum class Outcome : uint8_t { absent, accepted, other_class, other_machine, fatal };
    Outcome outcome = Outcome::absent;
    std::optional<Found> found;  // for accepted
    std::string error;           // for fatal: ld.so's words ("file too short")
};

// The result of searching a list of directories.
struct DirSearch {
    std::optional<Found> found;
    std::string fatal;  // the search stopped at a bad file
    std::string fatal_path;
    bool saw_other_class = false;
};

// The model's world: the tree, the target, the cache, and the environment of the process.
struct LoaderEnvironment {
    std::vector<std::string> ld_library_path;  // already split; empty unless given
    std::set<std::string> host_provided;       // sonames the host supplies at run time
};

class SearchContext {
  public:
    SearchContext(const fs::FileTree& tree, Target target, LoaderEnvironment environment,
                  std::optional<CacheIndex> cache);

    const fs::FileTree& tree() const { return m_tree; }
    const Target& target() const { return m_target; }
    const LoaderEnvironment& environment() const { return m_environment; }
    const fs::Resolver& resolver() const { return m_resolver; }
    bool has_cache() const { return m_cache.has_value(); }

    // Tries one path exactly (no hwcaps subdirectories): for names holding a slash, cache hits
    // and each directory candidate.
    Attempt try_path(const std::string& path);

    // Searches `dirs` (already expanded) for `name`, each directory's hwcaps subdirs first.
    DirSearch search_dirs(std::string_view name, const std::vector<std::string>& dirs);

    // The cache's path for `name`, honouring the target's flags and hwcaps; nullopt if none.
    std::optional<std::string> cache_lookup(std::string_view name) const;

    // Things the model could not know statically, for the report ("$PLATFORM unknown", ...).
    void note(std::string text);
    const std::set<std::string>& notes() const { return m_notes; }

  private:
    struct Listing {
        bool exists = false;
        std::string canonical;
        std::unordered_set<std::string> names;
    };
    const Listing& listing(const std::string& dir);

    const fs::FileTree& m_tree;
    Target m_target;
    LoaderEnvironment m_environment;
    std::optional<CacheIndex> m_cache;
    fs::Resolver m_resolver;
    std::vector<std::string> m_subdirs;
    std::unordered_map<std::string, Listing> m_listings;
    std::unordered_map<std::string, Attempt> m_attempts;
    std::set<std::string> m_notes;
};

}  // namespace rootlock::loader
