// One Debian archive as a lock sees it: InRelease fetched and verified against its keyring, its
// Release parsed, and each component's Packages index fetched by the hash Release lists (so
// that a Packages file the signature does not cover is never read).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "debian/packages_index.hpp"
#include "debian/release.hpp"
#include "index/content_store.hpp"
#include "index/http_client.hpp"
#include "pylock/pylock.hpp"
#include "util/result.hpp"

namespace rootlock::fetch {

struct ArchiveSpec {
    std::string name;   // "debian" for the recipe's mirror, else the recipe's archive name
    std::string url;    // mirror root, no trailing '/'
    std::string suite;  // "bookworm"
    std::vector<std::string> components;
    std::string keyring;  // host path of the keyring; "" = Debian's archive keyring
};

struct ComponentIndex {
    std::string component;
    std::vector<debian::BinaryPackage> packages;
};

struct LoadedArchive {
    ArchiveSpec spec;
    debian::Release release;
    int64_t date = 0;  // the Release's Date, seconds since the epoch
    std::vector<ComponentIndex> components;
};

// Loads `spec` for `architecture` ("amd64"). The Packages file is taken as Packages.xz, .gz or
// plain, whichever Release lists first in that order. Errors (ErrorKind::network, exit 3):
// the InRelease fetch ("URL: HTTP 404"), its signature (debian::verify_clearsigned), a component
// Release does not list ("URL/dists/SUITE/InRelease: lists no Packages index for main/amd64"),
// a Packages file whose hash or size is not the one Release lists ("URL: sha256 mismatch:
// Release lists X, the file has Y"); a Release or Packages that does not parse is an input error.
util::Result<LoadedArchive> load_archive(const ArchiveSpec& spec, const std::string& architecture,
                                         index::HttpClient& http, index::ContentStore& store);

// Every package some loaded archive offers, by (name, version, architecture); the first archive
// in the given order that lists one wins, as apt's priority would have it.
class OfferedPackages {
  public:
    explicit OfferedPackages(const std::vector<LoadedArchive>& archives);

    // The entry as the lock pins it, `archive` named as the lock names it; an arch-all package
    // answers for any architecture. nullopt when no archive lists that exact version.
    std::optional<pylock::LockDeb> pin(const std::string& name, const std::string& version,
                                       const std::string& architecture) const;

  private:
    struct Offer {
        const LoadedArchive* archive;
        const std::string* component;
        const debian::BinaryPackage* package;
    };
    std::map<std::tuple<std::string, std::string, std::string>, Offer> m_offers;
};

}  // namespace rootlock::fetch
