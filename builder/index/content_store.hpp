// The content-addressed blob store: downloaded files and small metadata kept under their sha256,
// so a lock or a build never fetches the same bytes twice and never serves bytes that changed.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "util/cache_lock.hpp"
#include "util/result.hpp"

namespace rootlock::index {

// A blob in the store: its digest, its size, and its host path inside the store.
struct StoredBlob {
    std::string sha256;
    uint64_t size = 0;
    std::string path;
};

// Layout: <root>/blobs/sha256/<first two hex>/<remaining 62 hex> for blobs, <root>/tmp/ for
// files being written (same filesystem, so the final rename is atomic). Directories are made on
// demand (0755), blobs are 0644. Errors read "HOST_PATH: strerror" (ErrorKind::io, exit 3), or
// "DIGEST: not a sha256 digest" ('"": ...' when empty) for a digest that is not 64 lowercase
// hexadecimal digits.
//
// Verification is memoised per instance: a blob whose inode, size, mtime and ctime are the
// ones seen when it last hashed correctly is not hashed again, so one run (one store) does not
// read a 900 MB wheel twice. The memo is guarded by a mutex.
class ContentStore {
  public:
    explicit ContentStore(std::string root);

    const std::string& root() const { return m_root; }

    // Where the blob with this digest lives (or would live); no check that it exists.
    std::string blob_path(std::string_view sha256) const;

    // Offline, a damaged blob cannot be fetched again: find() then refuses it instead.
    void set_offline(bool offline) { m_offline = offline; }

    // The blob's host path if it is present AND its sha256 verifies; a blob that fails
    // verification is deleted, reported (util/cache_damage) and absent, never served poisoned;
    // offline, it is an ErrorKind::integrity error naming it, and kept for the user to see.
    util::Result<std::optional<std::string>> find(const std::string& sha256);

    // A new, empty, unique file in <root>/tmp for the caller to fill.
    util::Result<std::string> temp_path();

    // fsyncs the finished temp file, makes it 0644 and renames it to the blob's place. The
    // caller vouches that `sha256` is the digest of the file's content (it hashed it while
    // writing); the blob is remembered as verified.
    util::Result<std::string> commit(const std::string& temp_path, const std::string& sha256);

    // Removes a temp file that will not be committed; a missing file is fine.
    void discard(const std::string& temp_path);

    // Stores small bytes (metadata, scan results) under their digest.
    util::Result<StoredBlob> put_bytes(std::string_view bytes);

  private:
    // What identifies one version of a file on disk, short of hashing it again.
    struct FileStamp {
        uint64_t device = 0;
        uint64_t inode = 0;
        uint64_t size = 0;
        int64_t mtime_ns = 0;
        int64_t ctime_ns = 0;
        bool operator==(const FileStamp&) const = default;
    };

    util::Status make_dirs(const std::string& path) const;
    void remember(const std::string& path, const FileStamp& stamp);
    bool remembered(const std::string& path, const FileStamp& stamp) const;
    void forget(const std::string& path);

    std::string m_root;
    // Held shared while the store lives: `cache verify` and `cache prune` wait for it.
    util::CacheLock m_in_use;
    bool m_offline = false;
    mutable std::mutex m_memo_mutex;
    std::map<std::string, FileStamp> m_verified;
};

}  // namespace rootlock::index
