// open_oci_tree: an image manifest's config read and checked, its layers named, sized and typed,
// then handed to TarTree::open_layers, which streams and hashes them in place.
#include "oci/oci_tree.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <set>

#include "util/sha256.hpp"

namespace rootlock::oci {

namespace {

constexpr uint64_t k_max_config = 16u << 20;

// The layer media types of image-spec 1.1 and Docker's v2 schema 2, and their compression.
const std::set<std::string>& tar_types() {
    static const std::set<std::string> types{
        k_media_layer_tar, "application/vnd.oci.image.layer.nondistributable.v1.tar",
        "application/vnd.docker.image.rootfs.diff.tar"};
    return types;
}
const std::set<std::string>& gzip_types() {
    static const std::set<std::string> types{
        k_media_layer_gzip, "application/vnd.oci.image.layer.nondistributable.v1.tar+gzip",
        "application/vnd.docker.image.rootfs.diff.tar.gzip",
        "application/vnd.docker.image.rootfs.foreign.diff.tar.gzip"};
    return types;
}
const std::set<std::string>& zstd_types() {
    static const std::set<std::string> types{
        k_media_layer_zstd, "application/vnd.oci.image.layer.nondistributable.v1.tar+zstd",
        "application/vnd.docker.image.rootfs.diff.tar.zstd"};
    return types;
}

bool is_image_config(const std::string& media_type) {
    return media_type == k_media_config ||
           media_type == "application/vnd.docker.container.image.v1+json";
}

// Up to `size` bytes of `range` from its start (a magic number, a small blob).
util::Result<std::string> read_prefix(const fs::FileRange& range, uint64_t size) {
    int fd = ::open(range.file.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return util::make_error(range.file, "cannot open: errno " + std::to_string(errno));
    std::string out(static_cast<size_t>(std::min(size, range.size)), '\0');
    size_t done = 0;
    while (done < out.size()) {
        ssize_t got = ::pread(fd, out.data() + done, out.size() - done,
                              static_cast<off_t>(range.offset + done));
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        done += static_cast<size_t>(got);
    }
    ::close(fd);
    out.resize(done);
    return out;
}

// gzip and zstd by their magic; anything else is read as plain tar (the tar reader judges it).
fs::StreamCompression compression_of(const std::string& head) {
    if (head.size() >= 2 && head[0] == '\x1f' && head[1] == '\x8b')
        return fs::StreamCompression::gzip;
    if (head.size() >= 4 && head.compare(0, 4, "\x28\xb5\x2f\xfd") == 0)
        return fs::StreamCompression::zstd;
    return fs::StreamCompression::none;
}

util::Result<fs::FileRange> locate_sized(const OciSource& source, const Descriptor& descriptor,
                                         const std::string& where) {
    ROOTLOCK_TRY(range, source.locate(descriptor));
    if (range.size != descriptor.size)
        return util::make_error(where, "the blob is " + std::to_string(range.size) +
                                           " bytes, its descriptor says " +
                                           std::to_string(descriptor.size));
    return range;
}

}  // namespace

fs::FileRange to_range(const BlobLocation& location) {
    return fs::FileRange{location.file, location.offset, location.size};
}

util::Result<OciImage> open_oci_tree(const OciSource& source, const fs::TarOptions& options) {
    OciImage image;
    image.manifest_digest = source.manifest_digest;
    std::string where = source.name + ": manifest " + source.manifest_digest;
    ROOTLOCK_TRY(manifest, parse_manifest(source.manifest, where));
    if (!manifest.artifact_type.empty() || !is_image_config(manifest.config.media_type)) {
        const std::string& type =
            manifest.artifact_type.empty() ? manifest.config.media_type : manifest.artifact_type;
        return util::make_error(where, "an artifact (" + util::quote(type) + "), not an image");
    }
    image.manifest = manifest;

    std::string config_where = source.name + ": config " + manifest.config.digest;
    if (manifest.config.size > k_max_config)
        return util::make_error(config_where, "larger than 16 MiB");
    ROOTLOCK_TRY(config_range, locate_sized(source, manifest.config, config_where));
    ROOTLOCK_TRY(config_text, read_prefix(config_range, config_range.size));
    util::Sha256 hasher;
    hasher.update(config_text);
    if (config_text.size() != config_range.size)
        return util::make_error(config_where, "the blob ends early");
    if ("sha256:" + hasher.hex_digest() != manifest.config.digest)
        return util::make_error(config_where, "its sha256 differs from the descriptor's digest");
    ROOTLOCK_TRY(config, parse_image_config(config_text, config_where));
    image.config = config;

    std::vector<fs::TarLayer> layers;
    for (size_t i = 0; i < manifest.layers.size(); ++i) {
        const Descriptor& blob = manifest.layers[i];
        fs::TarLayer layer;
        layer.name = source.name + ": layer " + std::to_string(i + 1) + " (" +
                     blob.digest.substr(0, 19) + ")";
        const std::string& type = blob.media_type;
        if (!tar_types().count(type) && !gzip_types().count(type) && !zstd_types().count(type))
            return util::make_error(layer.name, "unsupported media type " + util::quote(type));
        ROOTLOCK_TRY(range, locate_sized(source, blob, layer.name));
        ROOTLOCK_TRY(head, read_prefix(range, 4));
        layer.range = range;
        layer.compression = compression_of(head);
        layer.sha256 = blob.digest.substr(7);
        layers.push_back(std::move(layer));
    }
    ROOTLOCK_TRY(tree, fs::TarTree::open_layers(source.name, layers, options));
    image.tree = std::move(tree);
    return image;
}

}  // namespace rootlock::oci
