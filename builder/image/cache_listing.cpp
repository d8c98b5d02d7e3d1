// One listing per image path, named by the sha256 of its absolute path; one key per line, then
// "built SHA256 ENTRIES STAMP" when the build that wrote it renamed the image into place.
#include "image/cache_listing.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
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

std::string listing_path(const std::string& root, const std::string& image_path) {
    return root + "/images/" + util::sha256_hex(absolute(image_path));
}

std::string keys_text(const std::vector<std::string>& keys) {
    std::string text;
    for (const auto& key : keys)
        text += key + "\n";
    return text;
}

// The file's identity and the times any change to it moves; nullopt when it is not a regular
// file. Never a cache key (it holds spaces), so the pruner ignores it.
std::optional<std::string> stamp_of(const std::string& path) {
    struct stat info {};
    if (::stat(path.c_str(), &info) != 0 || !S_ISREG(info.st_mode))
        return std::nullopt;
    return std::to_string(info.st_dev) + " " + std::to_string(info.st_ino) + " " +
           std::to_string(info.st_size) + " " + std::to_string(info.st_mtim.tv_sec) + "." +
           std::to_string(info.st_mtim.tv_nsec) + " " + std::to_string(info.st_ctim.tv_sec) + "." +
           std::to_string(info.st_ctim.tv_nsec);
}

std::string built_line(const ListedImage& image, const std::string& stamp) {
    return "built " + image.sha256 + " " + std::to_string(image.entries) + " " + stamp + "\n";
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
                 const std::vector<std::string>& keys, const std::vector<std::string>& folders,
                 const ListedImage* built) {
    namespace fs = std::filesystem;
    const std::string images = root + "/images";
    std::string listing = keys_text(keys);
    if (built != nullptr)
        if (auto stamp = stamp_of(image_path))
            listing += built_line(*built, *stamp);
    if (!util::make_directories(images).ok() ||
        !util::write_file_atomically(listing_path(root, image_path), listing).ok())
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

std::optional<ListedImage> listed_image(const std::string& root, const std::string& image_path,
                                        const std::vector<std::string>& keys) {
    auto listing = util::read_host_file(listing_path(root, image_path));
    auto stamp = stamp_of(image_path);
    const std::string expected = keys_text(keys);
    if (!listing.ok() || !stamp || listing->compare(0, expected.size(), expected) != 0)
        return std::nullopt;
    // "built SHA256 ENTRIES STAMP\n", the listing's last line.
    const std::string built = listing->substr(expected.size());
    const std::string prefix = "built ";
    if (built.compare(0, prefix.size(), prefix) != 0 || built.size() < prefix.size() + 66)
        return std::nullopt;
    ListedImage image;
    image.sha256 = built.substr(prefix.size(), 64);
    if (!is_cache_key(image.sha256) || built[prefix.size() + 64] != ' ')
        return std::nullopt;
    const size_t count_at = prefix.size() + 65;
    const size_t count_end = built.find(' ', count_at);
    if (count_end == std::string::npos || count_end == count_at)
        return std::nullopt;
    for (size_t i = count_at; i < count_end; ++i)
        if (built[i] < '0' || built[i] > '9')
            return std::nullopt;
    image.entries = std::stoull(built.substr(count_at, count_end - count_at));
    if (built != built_line(image, *stamp))
        return std::nullopt;
    return image;
}

}  // namespace rootlock::image
