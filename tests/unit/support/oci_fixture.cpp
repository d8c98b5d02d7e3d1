// The OCI fixtures of oci_fixture.hpp, written with libarchive and the project's SHA-256 so that
// nothing binary is committed and the tests do not depend on the image builder they check.
#include "support/oci_fixture.hpp"

#include <archive.h>
#include <archive_entry.h>

#include <clocale>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "util/sha256.hpp"

namespace rootlock::testing {

namespace {

la_ssize_t append(struct archive*, void* data, const void* buffer, size_t length) {
    static_cast<std::string*>(data)->append(static_cast<const char*>(buffer), length);
    return static_cast<la_ssize_t>(length);
}

void write_file(const std::string& path, const std::string& bytes) {
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out)
        throw std::runtime_error("cannot write " + path);
}

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

std::string tar_bytes(const std::vector<TarMember>& members, const std::string& filter) {
    std::setlocale(LC_ALL, "C.UTF-8");
    std::string out;
    struct archive* writer = archive_write_new();
    archive_write_set_format_pax_restricted(writer);
    if (filter == "gzip")
        archive_write_add_filter_gzip(writer);
    else if (filter == "zstd")
        archive_write_add_filter_zstd(writer);
    archive_write_set_bytes_in_last_block(writer, 1);
    if (archive_write_open(writer, &out, nullptr, append, nullptr) != ARCHIVE_OK)
        throw std::runtime_error(archive_error_string(writer));
    for (const auto& member : members) {
        struct archive_entry* entry = archive_entry_new();
        archive_entry_set_pathname(entry, member.name.c_str());
        archive_entry_set_perm(entry, member.mode);
        switch (member.type) {
            case 'd':
                archive_entry_set_filetype(entry, AE_IFDIR);
                break;
            case 'l':
                archive_entry_set_filetype(entry, AE_IFLNK);
                archive_entry_set_symlink(entry, member.data.c_str());
                break;
            case 'h':
                archive_entry_set_filetype(entry, AE_IFREG);
                archive_entry_set_hardlink(entry, member.data.c_str());
                break;
            default:
                archive_entry_set_filetype(entry, AE_IFREG);
                archive_entry_set_size(entry, static_cast<la_int64_t>(member.data.size()));
        }
        if (archive_write_header(writer, entry) != ARCHIVE_OK)
            throw std::runtime_error(archive_error_string(writer));
        if (member.type == 'f' && !member.data.empty())
            archive_write_data(writer, member.data.data(), member.data.size());
        archive_entry_free(entry);
    }
    archive_write_close(writer);
    archive_write_free(writer);
    return out;
}

std::string digest_of(const std::string& bytes) {
    util::Sha256 hasher;
    hasher.update(bytes);
    return "sha256:" + hasher.hex_digest();
}

std::string descriptor_json(const std::string& media_type, const std::string& bytes) {
    return R"({"mediaType":")" + media_type + R"(","digest":")" + digest_of(bytes) +
           R"(","size":)" + std::to_string(bytes.size()) + "}";
}

std::string fixture_config() {
    return R"({"architecture":"amd64","os":"linux","config":{"Env":["PATH=/opt/venv/bin:/usr/bin",)"
           R"("VIRTUAL_ENV=/opt/venv"],"Labels":{"org.rootlock.recipe":"app"}},)"
           R"("rootfs":{"type":"layers","diff_ids":[]}})";
}

std::string fixture_manifest(const std::string& config, const std::vector<FixtureLayer>& layers) {
    std::string text =
        R"({"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json",)"
        R"("config":)" +
        descriptor_json("application/vnd.oci.image.config.v1+json", config) + R"(,"layers":[)";
    for (size_t i = 0; i < layers.size(); ++i)
        text += (i == 0 ? "" : ",") + descriptor_json(layers[i].media_type, layers[i].bytes);
    return text + "]}";
}

std::string write_blob(const std::string& dir, const std::string& bytes) {
    std::string digest = digest_of(bytes);
    write_file(dir + "/blobs/sha256/" + digest.substr(7), bytes);
    return digest;
}

std::string write_layout(const std::string& dir, const std::vector<FixtureLayer>& layers,
                         const std::string& ref) {
    std::string config = fixture_config();
    write_blob(dir, config);
    for (const auto& layer : layers)
        write_blob(dir, layer.bytes);
    std::string manifest = fixture_manifest(config, layers);
    write_blob(dir, manifest);
    std::string entry = descriptor_json("application/vnd.oci.image.manifest.v1+json", manifest);
    if (!ref.empty())
        entry.insert(entry.size() - 1,
                     R"(,"annotations":{"org.opencontainers.image.ref.name":")" + ref + R"("})");
    write_file(dir + "/index.json", R"({"schemaVersion":2,"manifests":[)" + entry + "]}");
    write_file(dir + "/oci-layout", R"({"imageLayoutVersion":"1.0.0"})");
    return manifest;
}

void write_archive(const std::string& dir, const std::string& archive_path) {
    std::vector<TarMember> members{{"blobs/", 'd', "", 0755}, {"blobs/sha256/", 'd', "", 0755}};
    for (const auto& file : std::filesystem::directory_iterator(dir + "/blobs/sha256"))
        members.push_back(
            {"blobs/sha256/" + file.path().filename().string(), 'f', read_file(file.path())});
    members.push_back({"index.json", 'f', read_file(dir + "/index.json")});
    members.push_back({"oci-layout", 'f', read_file(dir + "/oci-layout")});
    write_file(archive_path, tar_bytes(members));
}

}  // namespace rootlock::testing
