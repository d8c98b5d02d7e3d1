// Index pages kept with their HTTP validators (ETag, Last-Modified): a relock revalidates them
// cheaply with a conditional GET, and --offline relocks read them without touching the network.
#pragma once

#include <optional>
#include <string>

#include "util/result.hpp"

namespace rootlock::index {

struct CachedPage {
    std::string url;  // the URL the page came from, after redirects
    std::string content_type;
    std::string etag;
    std::string last_modified;
    std::string body;
};

// One JSON file per page, <root>/pages/<sha256(key)>.json, sealed with its own digest
// (util/sealed_text) and holding the key too so that a file is only ever read back for the key
// it was written for. A body that is not UTF-8 is stored as hex. A file whose seal does not
// match is damaged: removed, reported (util/cache_damage) and absent, or, offline, an
// ErrorKind::integrity error naming it. A whole file of another shape reads as absent: the
// cache is only ever a shortcut, and the caller then fetches the page again.
class PageCache {
  public:
    explicit PageCache(std::string root);

    // Offline, a damaged page cannot be fetched again: get() then refuses it instead.
    void set_offline(bool offline) { m_offline = offline; }

    // key: url + "\n" + accept header. Errors only for files that exist but cannot be read.
    util::Result<std::optional<CachedPage>> get(const std::string& key) const;
    // Atomic: written to a temp file in <root>/pages, fsynced, then renamed over the old one.
    util::Status put(const std::string& key, const CachedPage& page);

    // The host path of the file for this key.
    std::string path_for(const std::string& key) const;

  private:
    std::string m_root;
    bool m_offline = false;
};

}  // namespace rootlock::index
