// OCI JSON documents in one fixed key order; see oci_documents.hpp.
#include "oci/oci_documents.hpp"

#include <ctime>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "util/json_text.hpp"
#include "util/sha256.hpp"

namespace rootlock::oci {

namespace {

using Json = nlohmann::ordered_json;

Json string_map(const std::map<std::string, std::string>& values) {
    Json out = Json::object();
    for (const auto& [key, value] : values)
        out[key] = value;
    return out;
}

Json descriptor_json(const Descriptor& descriptor) {
    Json out;
    out["mediaType"] = descriptor.media_type;
    out["digest"] = descriptor.digest;
    out["size"] = descriptor.size;
    if (!descriptor.data.empty())
        out["data"] = descriptor.data;
    if (!descriptor.artifact_type.empty())
        out["artifactType"] = descriptor.artifact_type;
    if (!descriptor.annotations.empty())
        out["annotations"] = string_map(descriptor.annotations);
    return out;
}

Json string_array(const std::vector<std::string>& values) {
    Json out = Json::array();
    for (const auto& value : values)
        out.push_back(value);
    return out;
}

}  // namespace

std::string config_json(const RunConfig& run, const std::vector<Layer>& layers) {
    Json out;
    if (!run.created.empty())
        out["created"] = run.created;
    out["architecture"] = run.architecture;
    if (!run.variant.empty())
        out["variant"] = run.variant;
    out["os"] = run.os;
    Json config = Json::object();
    if (!run.env.empty())
        config["Env"] = string_array(run.env);
    if (!run.entrypoint.empty())
        config["Entrypoint"] = string_array(run.entrypoint);
    if (!run.cmd.empty())
        config["Cmd"] = string_array(run.cmd);
    if (!run.working_dir.empty())
        config["WorkingDir"] = run.working_dir;
    if (!run.labels.empty())
        config["Labels"] = string_map(run.labels);
    out["config"] = config;
    Json rootfs;
    rootfs["type"] = "layers";
    Json diff_ids = Json::array();
    for (const auto& layer : layers)
        diff_ids.push_back(layer.diff_id);
    rootfs["diff_ids"] = diff_ids;
    out["rootfs"] = rootfs;
    Json history = Json::array();
    for (const auto& layer : layers) {
        Json entry;
        if (!run.created.empty())
            entry["created"] = run.created;
        entry["created_by"] = layer.comment;
        history.push_back(entry);
    }
    out["history"] = history;
    return util::json_text(out);
}

std::string manifest_json(const Descriptor& config, const std::vector<Layer>& layers,
                          const std::map<std::string, std::string>& annotations) {
    Json out;
    out["schemaVersion"] = 2;
    out["mediaType"] = k_media_manifest;
    out["config"] = descriptor_json(config);
    Json blobs = Json::array();
    for (const auto& layer : layers)
        blobs.push_back(descriptor_json(layer.blob));
    out["layers"] = blobs;
    if (!annotations.empty())
        out["annotations"] = string_map(annotations);
    return util::json_text(out);
}

std::string artifact_manifest_json(const std::string& artifact_type,
                                   const std::vector<Descriptor>& blobs, const Descriptor& subject,
                                   const std::map<std::string, std::string>& annotations) {
    Json out;
    out["schemaVersion"] = 2;
    out["mediaType"] = k_media_manifest;
    out["artifactType"] = artifact_type;
    out["config"] = descriptor_json(empty_descriptor());
    Json layers = Json::array();
    for (const auto& blob : blobs)
        layers.push_back(descriptor_json(blob));
    out["layers"] = layers;
    out["subject"] = descriptor_json(subject);
    if (!annotations.empty())
        out["annotations"] = string_map(annotations);
    return util::json_text(out);
}

std::string empty_json() {
    return "{}";
}

Descriptor empty_descriptor() {
    Descriptor out = describe(k_media_empty, empty_json());
    out.data = "e30=";  // base64 of "{}"
    return out;
}

std::string index_json(const Descriptor& manifest, const std::string& ref_name,
                       const std::string& sbom_manifest) {
    Descriptor named = manifest;
    if (!ref_name.empty())
        named.annotations["org.opencontainers.image.ref.name"] = ref_name;
    if (!sbom_manifest.empty())
        named.annotations[k_annotation_sbom] = sbom_manifest;
    Json out;
    out["schemaVersion"] = 2;
    out["mediaType"] = k_media_index;
    Json manifests = Json::array();
    manifests.push_back(descriptor_json(named));
    out["manifests"] = manifests;
    return util::json_text(out);
}

std::string oci_layout_json() {
    return R"({"imageLayoutVersion":"1.0.0"})";
}

std::string digest_of(const std::string& bytes) {
    return "sha256:" + util::sha256_hex(bytes);
}

Descriptor describe(const std::string& media_type, const std::string& bytes) {
    Descriptor out;
    out.media_type = media_type;
    out.digest = digest_of(bytes);
    out.size = bytes.size();
    return out;
}

std::string rfc3339_utc(int64_t seconds) {
    const std::time_t t = static_cast<std::time_t>(seconds);
    std::tm utc{};
    ::gmtime_r(&t, &utc);
    return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", utc.tm_year + 1900, utc.tm_mon + 1,
                       utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec);
}

}  // namespace rootlock::oci
