// One listing per image path, named by the sha256 of its absolute path; one key per line.
#include "image/cache_listing.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <system_error>

#include "util/atomic_file.hpp"
#include "util/sha256.hpp"

namespace rootlock::image {

namespace {

std::string absolute(const std::string& path) {
    std::error_code error;
    auto made = std::filesystem::absolute(path, error);
    return error ? path : made.lexically_normal().string();
}

}  // namespace

bool is_cache_key(const std::string& name) {
    if (name.size() != 64)
        return false;
    for (char c : name)
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
            return false;
    return true;
}

void keep_listed(const std::string& root, const std::string& image_path,
                 const std::vector<std::string>& keys, const std::vector<std::string>& folders) {
    namespace fs = std::filesystem;
    const std::string images = root + "/images";
    std::string listing;
    for (const auto& key : keys)
        listing += key + "\n";
    if (!util::make_directories(images).ok() ||
        !util::write_file_atomically(images + "/" + util::sha256_hex(absolute(image_path)), listing)
             .ok())
        return;
    // One pruner at a time; a build that loses a file to another's prune makes it again.
    const int lock = ::open((root + "/.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (lock < 0)
        return;
    ::flock(lock, LOCK_EX);
    std::set<std::string, std::less<>> used;
    std::error_code error;
    for (const auto& list : fs::directory_iterator(images, error)) {
        auto text = util::read_host_file(list.path().string());
        if (!text.ok())
            continue;
        size_t start = 0;
        while (start < text->size()) {
            size_t end = text->find('\n', start);
            if (end == std::string::npos)
                end = text->size();
            used.insert(text->substr(start, end - start));
            start = end + 1;
        }
    }
    for (const auto& folder : folders) {
        for (const auto& file : fs::recursive_directory_iterator(root + "/" + folder, error)) {
            if (!file.is_regular_file(error))
                continue;
            const std::string name = file.path().filename().string();
            if (!is_cache_key(name) || !used.contains(name))
                fs::remove(file.path(), error);
        }
    }
    ::close(lock);
}

}  // namespace rootlock::image
