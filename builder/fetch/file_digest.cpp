// The memo lives in the page cache (sealed, so a damaged memo is found too); the record of a
// made file is one line beside it, "SHA256\n".
#include "fetch/file_digest.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "util/atomic_file.hpp"
#include "util/cache_damage.hpp"
#include "util/sha256.hpp"

namespace rootlock::fetch {

namespace {

// The memo's key for the file at `path` as it is now; nullopt when it cannot be stat'ed.
util::Result<std::string> memo_key(const std::string& path) {
    struct stat info {};
    if (::stat(path.c_str(), &info) != 0)
        return util::make_io_error(path, std::strerror(errno));
    auto nanoseconds = [](const timespec& time) {
        return std::to_string(time.tv_sec) + "." + std::to_string(time.tv_nsec);
    };
    return "file-sha256\n" + path + "\n" + std::to_string(info.st_dev) + ":" +
           std::to_string(info.st_ino) + ":" + std::to_string(info.st_size) + ":" +
           nanoseconds(info.st_mtim) + ":" + nanoseconds(info.st_ctim);
}

std::string record_path(const std::string& path) {
    return path + ".sha256";
}

}  // namespace

util::Result<std::string> remembered_sha256(const std::string& path, index::PageCache& pages) {
    ROOTLOCK_TRY(key, memo_key(path));
    auto cached = pages.get(key);
    if (cached.ok() && cached->has_value() && util::is_sha256_hex((*cached)->body))
        return (*cached)->body;
    ROOTLOCK_TRY(digest, util::sha256_file(path));
    std::string hex = util::Sha256::to_hex(digest);
    (void)pages.put(key, index::CachedPage{path, "text/plain", "", "", hex});
    return hex;
}

void remember_sha256(const std::string& path, const std::string& sha256, index::PageCache& pages) {
    auto key = memo_key(path);
    if (key.ok())
        (void)pages.put(*key, index::CachedPage{path, "text/plain", "", "", sha256});
}

util::Status record_made_file(const std::string& path, const std::string& sha256) {
    return util::write_file_atomically(record_path(path), sha256 + "\n");
}

util::Result<bool> check_made_file(const std::string& path, index::PageCache& pages, bool offline) {
    if (::access(path.c_str(), F_OK) != 0)
        return false;
    auto record = util::read_host_file(record_path(path));
    if (!record.ok()) {
        ::unlink(path.c_str());  // made by an earlier version: made again, silently
        return false;
    }
    ROOTLOCK_TRY(actual, remembered_sha256(path, pages));
    if (record->size() == 65 && record->compare(0, 64, actual) == 0 && record->back() == '\n')
        return true;
    if (auto refused =
            util::discard_damaged(path,
                                  "damaged: its sha256 is " + actual + ", it was made with " +
                                      util::printable(record->substr(0, 64)),
                                  offline, "make it again", {record_path(path)}))
        return *refused;
    return false;
}

}  // namespace rootlock::fetch
