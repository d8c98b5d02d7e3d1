// One listing per image path, named by the sha256 of its absolute path; one key per line, then
// "built SHA256 ENTRIES STAMP" when the build that wrote it renamed the image into place, then
// "image ABSOLUTE_PATH" (so `cache prune` can drop the listings of images that are gone).
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

constexpr std::string_view k_image_prefix = "image ";

std::string image_line(const std::string& image_path) {
    return std::string(k_image_prefix) + absolute(image_path) + "\n";
}

// Every line of every listing under ROOT/images (the keys in use, and more).
std::set<std::string, std::less<>> listed_lines(const std::string& images) {
    std::set<std::string, std::less<>> used;
    std::error_code error;
    for (const auto& list : std::filesystem::directory_iterator(images, error)) {
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
    return used;
}

// Deletes every file below ROOT/FOLDER whose name no line of `used` is; the caller holds the
// lock.
void delete_unlisted(const std::string& root, const std::vector<std::string>& folders,
                     const std::set<std::string, std::less<>>& used, UnlistedCount* count) {
    namespace fs = std::filesystem;
    std::error_code error;
    for (const auto& folder : folders) {
        for (const auto& file : fs::recursive_directory_iterator(root + "/" + folder, error)) {
            if (!file.is_regular_file(error))
                continue;
            const std::string name = file.path().filename().string();
            if (is_cache_key(name) && used.contains(name))
                continue;
            const uint64_t size = file.file_size(error);
            if (fs::remove(file.path(), error) && count != nullptr) {
                ++count->files;
                count->bytes += error ? 0 : size;
            }
        }
    }
}

// ROOT/.lock, held exclusively: one pruner at a time.
class PruneLock {
  public:
    explicit PruneLock(const std::string& root)
        : m_fd(::open((root + "/.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)) {
        if (m_fd >= 0)
            ::flock(m_fd, LOCK_EX);
    }
    ~PruneLock() {
        if (m_fd >= 0)
            ::close(m_fd);
    }
    PruneLock(const PruneLock&) = delete;
    PruneLock& operator=(const PruneLock&) = delete;
    bool held() const { return m_fd >= 0; }

  private:
    int m_fd;
};

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
    const std::string images = root + "/images";
    std::string listing = keys_text(keys);
    if (built != nullptr)
        if (auto stamp = stamp_of(image_path))
            listing += built_line(*built, *stamp);
    listing += image_line(image_path);
    if (!util::make_directories(images).ok() ||
        !util::write_file_atomically(listing_path(root, image_path), listing).ok())
        return;
    // One pruner at a time; a build that loses a file to another's prune makes it again.
    PruneLock lock(root);
    if (!lock.held())
        return;
    delete_unlisted(root, folders, listed_lines(images), nullptr);
}

UnlistedCount prune_gone_images(const std::string& root, const std::vector<std::string>& folders) {
    UnlistedCount count;
    const std::string images = root + "/images";
    if (::access(root.c_str(), F_OK) != 0)
        return count;
    PruneLock lock(root);
    if (!lock.held())
        return count;
    std::error_code error;
    for (const auto& list : std::filesystem::directory_iterator(images, error)) {
        auto text = util::read_host_file(list.path().string());
        if (!text.ok())
            continue;
        const size_t at = text->rfind(k_image_prefix);
        const bool named = at != std::string::npos && (at == 0 || (*text)[at - 1] == '\n');
        const size_t end = named ? text->find('\n', at) : std::string::npos;
        const std::string image =
            named ? text->substr(at + k_image_prefix.size(), end - at - k_image_prefix.size())
                  : std::string();
        // A listing that names no image (an earlier version's) or one that is gone goes.
        if (image.empty() || ::access(image.c_str(), F_OK) != 0)
            std::filesystem::remove(list.path(), error);
    }
    delete_unlisted(root, folders, listed_lines(images), &count);
    return count;
}

std::optional<ListedImage> listed_image(const std::string& root, const std::string& image_path,
                                        const std::vector<std::string>& keys) {
    auto listing = util::read_host_file(listing_path(root, image_path));
    auto stamp = stamp_of(image_path);
    const std::string expected = keys_text(keys);
    if (!listing.ok() || !stamp || listing->compare(0, expected.size(), expected) != 0)
        return std::nullopt;
    // "built SHA256 ENTRIES STAMP\n", then the image line.
    std::string built = listing->substr(expected.size());
    const std::string named = image_line(image_path);
    if (built.size() >= named.size() &&
        built.compare(built.size() - named.size(), named.size(), named) == 0)
        built.resize(built.size() - named.size());
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
