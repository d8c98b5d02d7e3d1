// Digests of large local files without hashing them on every run, and the files rootlock makes
// in its cache from verified inputs (an unpacked tarball base, an assembled Debian base), kept
// with the digest they had when made and checked against it before each use.
#pragma once

#include <string>

#include "index/page_cache.hpp"
#include "util/result.hpp"

namespace rootlock::fetch {

// The sha256 of a large local file, remembered in `pages` under its identity (device, inode,
// size, mtime and ctime, all in nanoseconds), so that a relock does not hash a 1 GB base again.
// Any change to the file changes its ctime, which the user cannot set back.
util::Result<std::string> remembered_sha256(const std::string& path, index::PageCache& pages);

// Remembers `sha256` as the digest of the file at `path` as it is now (for a file whose bytes
// the caller hashed while making it), so that remembered_sha256 need not read it again.
void remember_sha256(const std::string& path, const std::string& sha256, index::PageCache& pages);

// Records that the file at `path`, just made, has `sha256`: in PATH.sha256, written before the
// file is renamed into place (a file never stands without it), and in the memo. Errors are
// ErrorKind::io.
util::Status record_made_file(const std::string& path, const std::string& sha256);

// Whether the cache file at `path` can be used: true when it exists and its digest is the one
// recorded when it was made; false when it is absent, or was made by an earlier version (no
// record), or is damaged: then it is removed (and, when damaged, reported through
// util/cache_damage) for the caller to make again. Offline, a damaged file is an
// ErrorKind::integrity error naming it instead, and stays for the user to see.
util::Result<bool> check_made_file(const std::string& path, index::PageCache& pages, bool offline);

}  // namespace rootlock::fetch
