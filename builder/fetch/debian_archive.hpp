// One Debian archive as a lock sees it: InRelease fetched and verified against its keyring, its
// Release parsed, and each component's Packages index fetched by the hash Release lists (so
// that a Packages file the signature does not cover is never read).
#pragma once

#include <string>
#include <vector>

#include "debian/packages_index.hpp"
#include "debian/release.hpp"
#include "index/content_store.hpp"
#include "index/http_client.hpp"
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

}  // namespace rootlock::fetch
