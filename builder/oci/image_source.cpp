// Layouts are read from their directory; archives are listed once with libarchive, and each
// member's data offset found from its tar header blocks, so blobs are then read with pread().
#include "oci/image_source.hpp"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include <nlohmann/json.hpp>

#include "util/quote.hpp"
#include "util/sha256.hpp"

namespace rootlock::oci {

namespace {

constexpr uint64_t k_block = 512;
constexpr size_t k_max_document = 16u << 20;

struct ArchiveDeleter {
    void operator()(archive* a) const { archive_read_free(a); }
};

struct Fd {
    int fd = -1;
    explicit Fd(int f) : fd(f) {}
    ~Fd() {
        if (fd >= 0)
            ::close(fd);
    }
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
};

bool is_digest(const std::string& digest) {
    if (digest.size() != 71 || digest.compare(0, 7, "sha256:") != 0)
        return false;
    for (size_t i = 7; i < digest.size(); ++i) {
        char c = digest[i];
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
            return false;
    }
    return true;
}

// A tar header's numeric field: octal digits (NUL or space ended), or base-256 when the first
// byte's high bit is set (GNU and star, for sizes of 8 GiB and more).
std::optional<uint64_t> tar_number(const unsigned char* field, size_t length) {
    uint64_t value = 0;
    if ((field[0] & 0x80U) != 0) {
        for (size_t i = 1; i < length; ++i) {
            if (value >> 56U)
                return std::nullopt;
            value = (value << 8U) | field[i];
        }
        return value;
    }
    size_t i = 0;
    while (i < length && field[i] == ' ')
        ++i;
    for (; i < length && field[i] >= '0' && field[i] <= '7'; ++i)
        value = value * 8 + (field[i] - '0');
    return value;
}

bool all_zero(const unsigned char* block) {
    for (uint64_t i = 0; i < k_block; ++i)
        if (block[i] != 0)
            return false;
    return true;
}

// The offset of the data of the entry whose header (or first extension header) starts at
// `position`: extension headers (pax 'x'/'g', GNU long names 'L'/'K') are stepped over.
util::Result<uint64_t> data_offset(int fd, uint64_t position, const std::string& where) {
    unsigned char block[k_block];
    for (int steps = 0; steps < 64; ++steps) {
        ssize_t got = ::pread(fd, block, k_block, static_cast<off_t>(position));
        if (got != static_cast<ssize_t>(k_block))
            return util::make_error(where, "a tar header ends early");
        if (all_zero(block)) {
            position += k_block;  // padding of the entry before
            continue;
        }
        char type = static_cast<char>(block[156]);
        if (type == 'x' || type == 'g' || type == 'L' || type == 'K') {
            auto size = tar_number(block + 124, 12);
            if (!size)
                return util::make_error(where, "a tar extension header's size is not a number");
            position += k_block + (*size + k_block - 1) / k_block * k_block;
            continue;
        }
        return position + k_block;
    }
    return util::make_error(where, "too many tar extension headers");
}

util::Result<Descriptor> parse_descriptor(const nlohmann::json& value, const std::string& where) {
    if (!value.is_object())
        return util::make_error(where, "a descriptor is not an object");
    Descriptor out;
    auto media = value.find("mediaType");
    auto digest = value.find("digest");
    auto size = value.find("size");
    if (media == value.end() || !media->is_string())
        return util::make_error(where, "a descriptor has no mediaType");
    if (digest == value.end() || !digest->is_string() || !is_digest(digest->get<std::string>()))
        return util::make_error(where, "a descriptor's digest is not sha256:<64 hex digits>");
    if (size == value.end() || !size->is_number_unsigned())
        return util::make_error(where, "a descriptor's size is not a whole number");
    out.media_type = media->get<std::string>();
    out.digest = digest->get<std::string>();
    out.size = size->get<uint64_t>();
    if (auto notes = value.find("annotations"); notes != value.end() && notes->is_object())
        for (const auto& [key, note] : notes->items())
            if (note.is_string())
                out.annotations[key] = note.get<std::string>();
    return out;
}

util::Result<nlohmann::json> parse_document(const std::string& text, const std::string& where) {
    auto document = nlohmann::json::parse(text, nullptr, false);
    if (document.is_discarded() || !document.is_object())
        return util::make_error(where, "not a JSON object");
    auto version = document.find("schemaVersion");
    if (version == document.end() || !version->is_number_integer() || *version != 2)
        return util::make_error(where, "schemaVersion is not 2");
    return document;
}

std::string string_field(const nlohmann::json& document, const char* name) {
    auto it = document.find(name);
    return it != document.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

util::Result<std::vector<IndexEntry>> parse_index(const std::string& text,
                                                  const std::string& where) {
    ROOTLOCK_TRY(document, parse_document(text, where));
    auto manifests = document.find("manifests");
    if (manifests == document.end() || !manifests->is_array())
        return util::make_error(where, "no \"manifests\" array");
    std::vector<IndexEntry> out;
    for (const auto& value : *manifests) {
        ROOTLOCK_TRY(descriptor, parse_descriptor(value, where));
        IndexEntry entry;
        entry.descriptor = descriptor;
        if (auto ref = descriptor.annotations.find("org.opencontainers.image.ref.name");
            ref != descriptor.annotations.end())
            entry.ref_name = ref->second;
        entry.artifact_type = string_field(value, "artifactType");
        out.push_back(std::move(entry));
    }
    return out;
}

util::Result<ManifestBlobs> parse_manifest(const std::string& text, const std::string& where) {
    ROOTLOCK_TRY(document, parse_document(text, where));
    ManifestBlobs out;
    out.media_type = string_field(document, "mediaType");
    if (out.media_type == k_media_index || document.contains("manifests"))
        return util::make_error(where, "an image index, not a manifest");
    if (out.media_type.empty())
        out.media_type = k_media_manifest;
    out.artifact_type = string_field(document, "artifactType");
    auto config = document.find("config");
    if (config == document.end())
        return util::make_error(where, "no config descriptor");
    ROOTLOCK_TRY(config_descriptor, parse_descriptor(*config, where));
    out.config = config_descriptor;
    auto layers = document.find("layers");
    if (layers == document.end() || !layers->is_array())
        return util::make_error(where, "no \"layers\" array");
    for (const auto& value : *layers) {
        ROOTLOCK_TRY(layer, parse_descriptor(value, where));
        out.layers.push_back(layer);
    }
    if (auto subject = document.find("subject"); subject != document.end()) {
        ROOTLOCK_TRY(subject_descriptor, parse_descriptor(*subject, where));
        out.subject = subject_descriptor;
    }
    return out;
}

util::Result<std::string> read_location(const BlobLocation& location) {
    Fd fd(::open(location.file.c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.fd < 0)
        return util::make_error(location.file, std::strerror(errno));
    std::string out(location.size, '\0');
    uint64_t done = 0;
    while (done < location.size) {
        ssize_t got = ::pread(fd.fd, out.data() + done, location.size - done,
                              static_cast<off_t>(location.offset + done));
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return util::make_error(location.file,
                                    got < 0 ? std::strerror(errno) : std::string("ends early"));
        done += static_cast<uint64_t>(got);
    }
    return out;
}

util::Result<ImageSource> ImageSource::open(const std::string& path) {
    ImageSource source;
    source.m_path = path;
    struct stat info {};
    if (::stat(path.c_str(), &info) != 0)
        return util::make_error(path, std::strerror(errno));
    source.m_archive = !S_ISDIR(info.st_mode);
    if (source.m_archive) {
        std::unique_ptr<archive, ArchiveDeleter> reader(archive_read_new());
        archive_read_support_format_tar(reader.get());
        if (archive_read_open_filename(reader.get(), path.c_str(), 1 << 16) != ARCHIVE_OK)
            return util::make_error(path, archive_error_string(reader.get()));
        Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
        if (fd.fd < 0)
            return util::make_error(path, std::strerror(errno));
        archive_entry* entry = nullptr;
        while (true) {
            int rc = archive_read_next_header(reader.get(), &entry);
            if (rc == ARCHIVE_EOF)
                break;
            if (rc != ARCHIVE_OK && rc != ARCHIVE_WARN)
                return util::make_error(path, archive_error_string(reader.get()));
            const char* raw = archive_entry_pathname(entry);
            std::string name = raw != nullptr ? raw : "";
            while (name.rfind("./", 0) == 0)
                name.erase(0, 2);
            if (archive_entry_filetype(entry) != AE_IFREG)
                continue;
            auto size = static_cast<uint64_t>(archive_entry_size(entry));
            ROOTLOCK_TRY(
                offset,
                data_offset(fd.fd,
                            static_cast<uint64_t>(archive_read_header_position(reader.get())),
                            path + ": " + util::printable(name)));
            if (offset + size > static_cast<uint64_t>(info.st_size))
                return util::make_error(path + ": " + util::printable(name),
                                        "the member runs past the end of the archive");
            source.m_members[name] = BlobLocation{path, offset, size};
        }
        if (!source.m_members.count("oci-layout"))
            return util::make_error(path, "not an OCI archive (no oci-layout member)");
    } else {
        struct stat marker {};
        if (::stat((path + "/oci-layout").c_str(), &marker) != 0)
            return util::make_error(path, "not an OCI layout (no oci-layout)");
    }
    BlobLocation index_location;
    if (source.m_archive) {
        auto it = source.m_members.find("index.json");
        if (it == source.m_members.end())
            return util::make_error(path, "no index.json");
        index_location = it->second;
    } else {
        struct stat index_info {};
        std::string index_path = path + "/index.json";
        if (::stat(index_path.c_str(), &index_info) != 0)
            return util::make_error(path, "no index.json");
        index_location = BlobLocation{index_path, 0, static_cast<uint64_t>(index_info.st_size)};
    }
    if (index_location.size > k_max_document)
        return util::make_error(path + ": index.json", "larger than 16 MiB");
    ROOTLOCK_TRY(index_text, read_location(index_location));
    ROOTLOCK_TRY(manifests, parse_index(index_text, path + ": index.json"));
    source.m_manifests = std::move(manifests);
    return source;
}

util::Result<BlobLocation> ImageSource::locate(const std::string& digest) const {
    if (!is_digest(digest))
        return util::make_error(m_path, "not a sha256 digest: " + util::quote_prefix(digest, 80));
    std::string member = "blobs/sha256/" + digest.substr(7);
    if (m_archive) {
        auto it = m_members.find(member);
        if (it == m_members.end())
            return util::make_error(m_path, "no blob " + digest);
        return it->second;
    }
    std::string file = m_path + "/" + member;
    struct stat info {};
    if (::stat(file.c_str(), &info) != 0 || !S_ISREG(info.st_mode))
        return util::make_error(m_path, "no blob " + digest);
    return BlobLocation{file, 0, static_cast<uint64_t>(info.st_size)};
}

util::Result<std::string> ImageSource::read_blob(const Descriptor& descriptor,
                                                 uint64_t max_size) const {
    ROOTLOCK_TRY(location, locate(descriptor.digest));
    std::string where = m_path + ": " + descriptor.digest;
    if (location.size != descriptor.size)
        return util::make_error(where, "the blob is " + std::to_string(location.size) +
                                           " bytes, its descriptor says " +
                                           std::to_string(descriptor.size));
    if (location.size > max_size)
        return util::make_error(where, "larger than " + std::to_string(max_size) + " bytes");
    ROOTLOCK_TRY(bytes, read_location(location));
    util::Sha256 hasher;
    hasher.update(bytes);
    if ("sha256:" + hasher.hex_digest() != descriptor.digest)
        return util::make_error(where, "the blob's sha256 differs from its digest");
    return std::move(bytes);
}

util::Result<IndexEntry> ImageSource::select(const std::string& ref) const {
    std::vector<const IndexEntry*> images;
    std::string names;
    for (const auto& entry : m_manifests) {
        if (!entry.artifact_type.empty())
            continue;
        images.push_back(&entry);
        if (!entry.ref_name.empty())
            names += (names.empty() ? "" : ", ") + util::quote(entry.ref_name);
    }
    if (ref.empty()) {
        if (images.size() == 1)
            return *images.front();
        if (images.empty())
            return util::make_error(m_path, "index.json lists no image");
        return util::make_error(m_path, "index.json lists " + std::to_string(images.size()) +
                                            " images: name one (" + names + ")");
    }
    for (const IndexEntry* entry : images)
        if (entry->ref_name == ref || entry->descriptor.digest == ref)
            return *entry;
    return util::make_error(m_path, "no image " + util::quote(ref) + " in index.json" +
                                        (names.empty() ? "" : " (there are " + names + ")"));
}

}  // namespace rootlock::oci
