// A Debian base locked per package and assembled from exactly those .debs. Lock time: the
// archives' signed indexes are loaded, apt (through mmdebstrap --simulate) says which packages
// the variant and includes resolve to, and each is pinned as its Packages entry lists it. Build
// time: the pinned .debs are fetched (content store, the archive's pool, its snapshot), and
// mmdebstrap installs them from a local repository holding nothing else, so maintainer scripts
// run as on Debian and every machine gets the same root.
#pragma once

#include <string>
#include <vector>

#include "index/content_store.hpp"
#include "index/http_client.hpp"
#include "pylock/pylock.hpp"
#include "recipe/recipe.hpp"
#include "util/result.hpp"

namespace rootlock::fetch {

struct DebianOptions {
    std::string recipe_dir;  // relative keyring paths are taken from here
    std::string cache_dir;   // the content store, where the keyrings are kept by hash too
    std::string architecture = "amd64";
    bool offline = false;
    std::string epoch = "1700000000";  // SOURCE_DATE_EPOCH for mmdebstrap
};

// The recipe's archives as the lock records them, the recipe's mirror first (named "debian"),
// with each keyring's sha256; dates are filled in by resolve_debian_base.
util::Result<std::vector<pylock::LockDebArchive>> debian_archives(const recipe::DebianBase& debian,
                                                                  const DebianOptions& options);

// Resolves the recipe's Debian base into a lock record: kind, suite, mirror, variant, include,
// archives (with their Release dates) and every .deb. Errors: an archive's (load_archive);
// mmdebstrap's, with its E: and W: lines and the command to rerun; "apt chose NAME VERSION
// (ARCH), which no archive of the recipe lists".
util::Result<pylock::LockBase> resolve_debian_base(const recipe::DebianBase& debian,
                                                   const DebianOptions& options,
                                                   index::HttpClient& http,
                                                   index::ContentStore& store);

// The .debs of `base` in the content store: from the store, the archive's pool, then the
// archive's snapshot. One error names every package that could not be had and every URL tried
// (ErrorKind::network); a .deb whose bytes are not the lock's is refused at once.
util::Status fetch_debs(const pylock::LockBase& base, index::HttpClient& http,
                        index::ContentStore& store, bool offline);

// The host path of the base tarball assembled from `base`'s .debs (cached under the hash of
// what goes in: variant, every .deb's sha256, the epoch). Fetches what is missing first. The
// assembled root's dpkg database must list exactly the locked packages, or it is an error.
util::Result<std::string> assemble_debian_base(const pylock::LockBase& base,
                                               const DebianOptions& options,
                                               index::HttpClient& http, index::ContentStore& store);

// The Debian architecture a locked base is for ("amd64" when the lock names none).
std::string debian_architecture(const pylock::LockBase& base);

// The image's /etc/apt/sources.list for `base`: one "deb" line per archive, with signed-by for
// archives that bring their own keyring (installed as /etc/apt/keyrings/rootlock-NAME.gpg).
std::string apt_sources(const pylock::LockBase& base);

// The first E: lines of an apt or mmdebstrap output, or else its W: lines, or else its last line.
std::string apt_complaints(const std::string& output);

}  // namespace rootlock::fetch
