// OCI layouts and archives from layer blobs; see oci_image.hpp.
#include "image/oci_image.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <memory>

#include "fs/tree_errors.hpp"
#include "image/tar_writer.hpp"
#include "util/atomic_file.hpp"
#include "util/byte_source.hpp"
#include "util/sha256.hpp"

namespace rootlock::image {

namespace {

// The documents every form holds, in the order blobs are listed.
struct Documents {
    std::string config;
    std::string manifest;
    std::string index;
    std::string artifact;  // the SBOM's artifact manifest, or ""
    OciImageWritten written;

    // The blobs beside the layers: digest -> bytes.
    std::map<std::string, const std::string*> blobs() const {
        std::map<std::string, const std::string*> out;
        out.emplace(written.config.digest, &config);
        out.emplace(written.manifest.digest, &manifest);
        if (!artifact.empty()) {
            out.emplace(written.sbom_manifest.digest, &artifact);
            out.emplace(oci::empty_descriptor().digest, &k_empty);
            out.emplace(oci::digest_of(written.sbom), &written.sbom);
        }
        return out;
    }
    inline static const std::string k_empty = oci::empty_json();
};

util::Result<Documents> documents(const std::vector<LayerBlob>& layers, const OciImageSpec& spec) {
    std::vector<oci::Layer> described;
    for (const auto& blob : layers) {
        ROOTLOCK_TRY(size, util::read_host_file_size(blob.host_path));
        if (size != blob.layer.blob.size)
            return util::make_error(blob.host_path, "has " + std::to_string(size) +
                                                        " bytes, its descriptor says " +
                                                        std::to_string(blob.layer.blob.size));
        described.push_back(blob.layer);
    }
    Documents out;
    out.config = oci::config_json(spec.run, described);
    out.written.config = oci::describe(oci::k_media_config, out.config);
    out.manifest = oci::manifest_json(out.written.config, described, spec.annotations);
    out.written.manifest = oci::describe(oci::k_media_manifest, out.manifest);
    std::string sbom_manifest;
    if (spec.sbom) {
        out.written.sbom = spec.sbom(out.written.manifest.digest);
        std::map<std::string, std::string> annotations;
        if (auto created = spec.annotations.find("org.opencontainers.image.created");
            created != spec.annotations.end())
            annotations.insert(*created);
        out.artifact = oci::artifact_manifest_json(
            oci::k_media_cyclonedx, {oci::describe(oci::k_media_cyclonedx, out.written.sbom)},
            out.written.manifest, annotations);
        out.written.sbom_manifest = oci::describe(oci::k_media_manifest, out.artifact);
        out.written.sbom_manifest.artifact_type = oci::k_media_cyclonedx;
        sbom_manifest = out.written.sbom_manifest.digest;
    }
    out.index = oci::index_json(out.written.manifest, spec.ref_name, sbom_manifest);
    return out;
}

// "sha256:HEX" -> "blobs/sha256/HEX".
std::string blob_path(const std::string& digest) {
    const size_t colon = digest.find(':');
    return "blobs/" + digest.substr(0, colon) + "/" + digest.substr(colon + 1);
}

class FileStream final : public util::ByteStream {
  public:
    explicit FileStream(std::unique_ptr<util::FileSource> source) : m_source(std::move(source)) {}
    util::Result<size_t> read(std::span<std::byte> out) override {
        const uint64_t left = m_source->size() - m_offset;
        const size_t count = static_cast<size_t>(std::min<uint64_t>(left, out.size()));
        if (count == 0)
            return size_t{0};
        if (auto status = m_source->read_at(m_offset, out.first(count)); !status.ok())
            return status.error();
        m_offset += count;
        return count;
    }

  private:
    std::unique_ptr<util::FileSource> m_source;
    uint64_t m_offset = 0;
};

TarEntry archive_entry(std::string path, EntryKind kind, uint64_t size, int64_t mtime) {
    TarEntry entry;
    entry.path = std::move(path);
    entry.kind = kind;
    entry.mode = kind == EntryKind::directory ? 0755 : 0644;
    entry.size = size;
    entry.mtime = mtime;
    return entry;
}

}  // namespace

util::Result<OciImageWritten> write_oci_layout(const std::string& dir,
                                               const std::vector<LayerBlob>& layers,
                                               const OciImageSpec& spec) {
    struct stat st {};
    if (::lstat(dir.c_str(), &st) == 0)
        return util::make_error(dir, "exists");
    ROOTLOCK_TRY(docs, documents(layers, spec));
    const std::string temporary = dir + ".partial";
    std::error_code ec;
    std::filesystem::remove_all(temporary, ec);
    std::filesystem::create_directories(temporary + "/blobs/sha256", ec);
    if (ec)
        return util::make_error(temporary, ec.message());
    auto put = [&](const std::string& relative, const std::string& bytes) {
        return util::write_file_atomically(temporary + "/" + relative, bytes);
    };
    for (const auto& blob : layers) {
        const std::string to = temporary + "/" + blob_path(blob.layer.blob.digest);
        if (::rename(blob.host_path.c_str(), to.c_str()) != 0)
            return util::make_io_error(blob.host_path, fs::errno_text(errno));
    }
    for (const auto& [digest, bytes] : docs.blobs())
        if (auto status = put(blob_path(digest), *bytes); !status.ok())
            return status.error();
    for (const auto& [relative, bytes] :
         {std::pair{std::string("index.json"), docs.index},
          std::pair{std::string("oci-layout"), oci::oci_layout_json()}})
        if (auto status = put(relative, bytes); !status.ok())
            return status.error();
    if (::rename(temporary.c_str(), dir.c_str()) != 0)
        return util::make_io_error(dir, fs::errno_text(errno));
    return docs.written;
}

util::Result<OciImageWritten> write_oci_archive(
    const std::string& path, const std::vector<LayerBlob>& layers, const OciImageSpec& spec,
    int64_t mtime, const std::function<util::Status(const OciImageWritten&)>& before_rename) {
    ROOTLOCK_TRY(docs, documents(layers, spec));
    // Every member in component order: blobs/ first, its files by digest, then the two files.
    std::map<std::string, const LayerBlob*> layer_files;
    std::map<std::string, const std::string*> document_files;
    for (const auto& blob : layers)
        layer_files.emplace("/" + blob_path(blob.layer.blob.digest), &blob);
    for (const auto& [digest, bytes] : docs.blobs())
        document_files.emplace("/" + blob_path(digest), bytes);
    std::map<std::string, bool> blob_names;  // path -> is a layer
    for (const auto& [name, _] : layer_files)
        blob_names.emplace(name, true);
    for (const auto& [name, _] : document_files)
        blob_names.emplace(name, false);

    const std::string temporary = path + ".partial";
    TarWriterOptions options;
    options.compression = Compression::none;
    options.dot_slash = false;
    ROOTLOCK_TRY(writer, TarWriter::create(temporary, options));
    auto fail = [&](const util::Error& error) {
        writer.reset();
        ::unlink(temporary.c_str());
        return error;
    };
    for (const char* directory : {"/blobs", "/blobs/sha256"})
        if (auto status =
                writer->add_bytes(archive_entry(directory, EntryKind::directory, 0, mtime), "");
            !status.ok())
            return fail(status.error());
    for (const auto& [name, is_layer] : blob_names) {
        util::Status status = util::ok_status();
        if (is_layer) {
            const LayerBlob& blob = *layer_files.at(name);
            ROOTLOCK_TRY(source, util::FileSource::open(blob.host_path, blob.host_path));
            FileStream stream(std::move(source));
            status = writer->add(
                archive_entry(name, EntryKind::regular, blob.layer.blob.size, mtime), &stream);
        } else {
            const std::string& bytes = *document_files.at(name);
            status = writer->add_bytes(archive_entry(name, EntryKind::regular, bytes.size(), mtime),
                                       bytes);
        }
        if (!status.ok())
            return fail(status.error());
    }
    const std::string layout = oci::oci_layout_json();
    using Named = std::pair<std::string, const std::string*>;
    for (const auto& [name, bytes] :
         {Named{"/index.json", &docs.index}, Named{"/oci-layout", &layout}})
        if (auto status = writer->add_bytes(
                archive_entry(name, EntryKind::regular, bytes->size(), mtime), *bytes);
            !status.ok())
            return fail(status.error());
    if (auto status = writer->finish(); !status.ok())
        return fail(status.error());
    docs.written.archive_sha256 = util::Sha256::to_hex(writer->digest());
    if (before_rename)
        if (auto ready = before_rename(docs.written); !ready.ok())
            return fail(ready.error());
    if (::rename(temporary.c_str(), path.c_str()) != 0)
        return fail(util::make_io_error(path, fs::errno_text(errno)));
    return docs.written;
}

}  // namespace rootlock::image
