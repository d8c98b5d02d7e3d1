// Which image a command line names: the path split from its reference, a layout or archive told
// apart from a rootfs by a few bytes, and the manifest found through index.json.
#include "oci/image_select.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <memory>

namespace rootlock::oci {

namespace {

constexpr const char* k_media_docker_list =
    "application/vnd.docker.distribution.manifest.list.v2+json";

bool exists(const std::string& path) {
    struct stat info {};
    return !path.empty() && ::stat(path.c_str(), &info) == 0;
}

bool starts_with(std::string_view text, std::string_view prefix) {
    return text.substr(0, prefix.size()) == prefix;
}

// A tar header's octal size field (the sniff only steps over small extension headers).
uint64_t octal(const char* field, size_t length) {
    uint64_t value = 0;
    for (size_t i = 0; i < length && field[i] >= '0' && field[i] <= '7'; ++i)
        value = value * 8 + static_cast<uint64_t>(field[i] - '0');
    return value;
}

}  // namespace

ImageSpec split_image_spec(const std::string& text) {
    if (exists(text))
        return ImageSpec{text, ""};
    if (size_t at = text.rfind("@sha256:"); at != std::string::npos && exists(text.substr(0, at)))
        return ImageSpec{text.substr(0, at), text.substr(at + 1)};
    size_t colon = text.rfind(':');
    size_t slash = text.rfind('/');
    if (colon != std::string::npos && (slash == std::string::npos || colon > slash) &&
        exists(text.substr(0, colon)))
        return ImageSpec{text.substr(0, colon), text.substr(colon + 1)};
    return ImageSpec{text, ""};
}

bool is_oci_image(const std::string& path) {
    struct stat info {};
    if (::stat(path.c_str(), &info) != 0)
        return false;
    if (S_ISDIR(info.st_mode))
        return exists(path + "/oci-layout");
    if (!S_ISREG(info.st_mode))
        return false;
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0)
        return false;
    bool oci = false;
    uint64_t position = 0;
    std::array<char, 512> block{};
    for (int step = 0; step < 8; ++step) {
        if (::pread(fd, block.data(), block.size(), static_cast<off_t>(position)) !=
                static_cast<ssize_t>(block.size()) ||
            std::string_view(block.data() + 257, 5) != "ustar")
            break;
        char type = block[156];
        uint64_t size = octal(block.data() + 124, 12);
        position += 512 + (size + 511) / 512 * 512;
        if (type == 'x' || type == 'g' || type == 'L' || type == 'K')
            continue;
        std::string name(block.data(), strnlen(block.data(), 100));
        while (starts_with(name, "./"))
            name.erase(0, 2);
        if (name.empty() || name == ".")
            continue;
        oci = name == "oci-layout" || name == "index.json" || name == "blobs" ||
              starts_with(name, "blobs/");
        break;
    }
    ::close(fd);
    return oci;
}

util::Result<OciSource> open_oci_path(const ImageSpec& spec, const Platform& platform) {
    ROOTLOCK_TRY(opened, ImageSource::open(spec.path));
    auto image = std::make_shared<ImageSource>(std::move(opened));
    ROOTLOCK_TRY(entry, image->select(spec.ref));
    Descriptor chosen = entry.descriptor;
    const std::string name = spec.ref.empty() ? spec.path : spec.path + ":" + spec.ref;
    ROOTLOCK_TRY(text, image->read_blob(chosen));
    std::string manifest = std::move(text);
    if (chosen.media_type == k_media_index || chosen.media_type == k_media_docker_list) {
        std::string where = name + ": index " + chosen.digest;
        ROOTLOCK_TRY(entries, parse_platform_index(manifest, where));
        ROOTLOCK_TRY(picked, pick_platform(entries, platform, where));
        if (picked.media_type == k_media_index || picked.media_type == k_media_docker_list)
            return util::make_error(where, "an index inside an index");
        ROOTLOCK_TRY(inner, image->read_blob(picked));
        manifest = std::move(inner);
        chosen = picked;
    }
    OciSource source;
    source.name = name;
    source.manifest = std::move(manifest);
    source.manifest_digest = chosen.digest;
    source.locate = [image](const Descriptor& blob) -> util::Result<fs::FileRange> {
        ROOTLOCK_TRY(location, image->locate(blob.digest));
        return to_range(location);
    };
    return source;
}

}  // namespace rootlock::oci
