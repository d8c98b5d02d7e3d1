// The push plan: which blobs each manifest needs, each sent at most once and only when the
// registry lacks it, then the manifests in an order where nothing refers to what is not there.
#include "registry/push.hpp"

#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "util/atomic_file.hpp"
#include "util/json_text.hpp"

namespace rootlock::registry {

namespace {

// <record_dir>/<host>.json: {"blobs": {"sha256:...": ["repo", ...]}}.
std::string record_path(const std::string& dir, const std::string& host) {
    std::string name;
    for (char c : host)
        name.push_back(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' ? c
                                                                                           : '_');
    return dir + "/" + name + ".json";
}

nlohmann::json read_record(const std::string& path) {
    auto text = util::read_host_file(path);
    if (!text)
        return nlohmann::json::object();
    auto document = nlohmann::json::parse(*text, nullptr, false);
    if (document.is_discarded() || !document.is_object() || !document.contains("blobs") ||
        !document["blobs"].is_object())
        return nlohmann::json::object();  // a damaged record only costs mounts
    return document;
}

// The referrers fallback (distribution spec 1.1): an image index tagged "sha256-<hex>" listing
// the artifacts whose subject is that manifest.
util::Result<std::string> update_referrers(RegistryClient& client, const std::string& subject,
                                           const std::vector<oci::Descriptor>& artifacts,
                                           const std::vector<std::string>& artifact_types) {
    std::string tag = "sha256-" + subject.substr(7);
    ROOTLOCK_TRY(existing, client.get_manifest(tag, oci::k_media_index));
    nlohmann::ordered_json index;
    if (existing) {
        auto parsed = nlohmann::ordered_json::parse(existing->body, nullptr, false);
        if (!parsed.is_discarded() && parsed.is_object() && parsed.contains("manifests") &&
            parsed["manifests"].is_array())
            index = parsed;
    }
    if (index.is_null()) {
        index["schemaVersion"] = 2;
        index["mediaType"] = oci::k_media_index;
        index["manifests"] = nlohmann::ordered_json::array();
    }
    bool changed = false;
    for (size_t i = 0; i < artifacts.size(); ++i) {
        bool listed = false;
        for (const auto& entry : index["manifests"])
            listed =
                listed || (entry.is_object() && entry.value("digest", "") == artifacts[i].digest);
        if (listed)
            continue;
        nlohmann::ordered_json entry;
        entry["mediaType"] = artifacts[i].media_type;
        entry["digest"] = artifacts[i].digest;
        entry["size"] = artifacts[i].size;
        entry["artifactType"] = artifact_types[i];
        index["manifests"].push_back(entry);
        changed = true;
    }
    if (changed) {
        ROOTLOCK_TRY(put, client.put_manifest(tag, oci::k_media_index, util::json_text(index)));
        (void)put;
    }
    return tag;
}

}  // namespace

util::Result<PushReport> push_image(const oci::ImageSource& source, RegistryClient& client,
                                    const PushOptions& options) {
    ROOTLOCK_TRY(image, source.select(options.image));
    ROOTLOCK_TRY(image_bytes, source.read_blob(image.descriptor));
    ROOTLOCK_TRY(image_blobs,
                 oci::parse_manifest(image_bytes, source.path() + ": " + image.descriptor.digest));

    // The artifacts that refer to this image, with what each needs.
    struct Artifact {
        oci::Descriptor descriptor;
        std::string bytes;
        oci::ManifestBlobs blobs;
    };
    // rootlock's own SBOM, named by the image's entry; artifacts other tools list in index.json.
    std::vector<oci::Descriptor> candidates;
    if (auto named = image.descriptor.annotations.find(oci::k_annotation_sbom);
        named != image.descriptor.annotations.end()) {
        ROOTLOCK_TRY(location, source.locate(named->second));
        oci::Descriptor sbom;
        sbom.media_type = oci::k_media_manifest;
        sbom.digest = named->second;
        sbom.size = location.size;
        candidates.push_back(sbom);
    }
    for (const auto& entry : source.manifests())
        if (!entry.artifact_type.empty())
            candidates.push_back(entry.descriptor);
    std::vector<Artifact> artifacts;
    std::set<std::string> considered;
    for (const auto& candidate : candidates) {
        if (!considered.insert(candidate.digest).second)
            continue;
        ROOTLOCK_TRY(bytes, source.read_blob(candidate));
        ROOTLOCK_TRY(blobs, oci::parse_manifest(bytes, source.path() + ": " + candidate.digest));
        if (blobs.artifact_type.empty() || !blobs.subject ||
            blobs.subject->digest != image.descriptor.digest)
            continue;
        oci::Descriptor descriptor = candidate;
        descriptor.annotations.clear();
        artifacts.push_back({descriptor, bytes, blobs});
    }

    std::vector<oci::Descriptor> needed;
    std::set<std::string> seen;
    auto want = [&](const oci::ManifestBlobs& blobs) {
        if (seen.insert(blobs.config.digest).second)
            needed.push_back(blobs.config);
        for (const auto& layer : blobs.layers)
            if (seen.insert(layer.digest).second)
                needed.push_back(layer);
    };
    want(image_blobs);
    for (const auto& artifact : artifacts)
        want(artifact.blobs);

    ROOTLOCK_TRY(reachable, client.ping());
    (void)reachable;

    const ImageReference& reference = client.reference();
    std::string record_file =
        options.record_dir.empty() ? "" : record_path(options.record_dir, reference.host);
    nlohmann::json record =
        record_file.empty() ? nlohmann::json::object() : read_record(record_file);

    PushReport report;
    report.reference = reference.text();
    report.manifest_digest = image.descriptor.digest;
    PushProgress progress;
    progress.blobs_total = needed.size();
    uint64_t bytes_before = 0;  // of uploads finished
    for (const auto& blob : needed) {
        PushedBlob pushed;
        pushed.descriptor = blob;
        progress.current = blob.digest;
        ROOTLOCK_TRY(present, client.has_blob(blob));
        if (!present) {
            std::vector<std::string> sources = options.mount_from;
            if (record.contains("blobs") && record["blobs"].contains(blob.digest) &&
                record["blobs"][blob.digest].is_array())
                for (const auto& repo : record["blobs"][blob.digest])
                    if (repo.is_string())
                        sources.push_back(repo.get<std::string>());
            for (const auto& from : sources) {
                if (from == reference.name)
                    continue;
                ROOTLOCK_TRY(mounted, client.mount_blob(blob, from));
                if (mounted) {
                    pushed.outcome = BlobOutcome::mounted;
                    pushed.mounted_from = from;
                    break;
                }
            }
            if (pushed.outcome != BlobOutcome::mounted) {
                ROOTLOCK_TRY(location, source.locate(blob.digest));
                if (location.size != blob.size)
                    return util::make_error(source.path() + ": " + blob.digest,
                                            "the blob is " + std::to_string(location.size) +
                                                " bytes, its descriptor says " +
                                                std::to_string(blob.size));
                progress.bytes_total += blob.size;
                auto on_sent = [&](uint64_t sent) {
                    progress.bytes_sent = bytes_before + sent;
                    if (options.progress)
                        options.progress(progress);
                };
                ROOTLOCK_TRY(uploaded, client.upload_blob(blob, location, on_sent));
                (void)uploaded;
                pushed.outcome = BlobOutcome::uploaded;
                bytes_before += blob.size;
                report.bytes_uploaded += blob.size;
            }
        }
        ++progress.blobs_done;
        progress.bytes_sent = bytes_before;
        if (options.progress)
            options.progress(progress);
        auto& repos = record["blobs"][blob.digest];
        if (!repos.is_array())
            repos = nlohmann::json::array();
        bool listed = false;
        for (const auto& repo : repos)
            listed = listed || repo == reference.name;
        if (!listed)
            repos.push_back(reference.name);
        report.blobs.push_back(std::move(pushed));
    }

    const std::string& target = reference.digest.empty() ? reference.tag : reference.digest;
    if (!reference.digest.empty() && reference.digest != image.descriptor.digest)
        return util::make_error(reference.text(), "the image's manifest is " +
                                                      image.descriptor.digest +
                                                      ", not the digest the reference names");
    ROOTLOCK_TRY(image_put, client.put_manifest(target, image.descriptor.media_type, image_bytes));
    (void)image_put;
    bool keeps_referrers = true;
    std::vector<oci::Descriptor> artifact_descriptors;
    std::vector<std::string> artifact_types;
    for (const auto& artifact : artifacts) {
        ROOTLOCK_TRY(subject_kept,
                     client.put_manifest(artifact.descriptor.digest, artifact.descriptor.media_type,
                                         artifact.bytes));
        keeps_referrers = keeps_referrers && subject_kept;
        artifact_descriptors.push_back(artifact.descriptor);
        artifact_types.push_back(artifact.blobs.artifact_type);
    }
    if (!artifacts.empty() && !keeps_referrers) {
        ROOTLOCK_TRY(tag, update_referrers(client, image.descriptor.digest, artifact_descriptors,
                                           artifact_types));
        report.referrers_tag = tag;
    }
    report.artifacts = std::move(artifact_descriptors);
    if (!record_file.empty()) {
        // Only a help for later pushes: failing to remember is not failing to push.
        (void)util::write_file_atomically(record_file, util::json_text(record));
    }
    report.requests = client.requests();
    return report;
}

}  // namespace rootlock::registry
