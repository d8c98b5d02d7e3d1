// The OCI form of a build; see oci_build.hpp.
#include "image/oci_build.hpp"

#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "util/sha256.hpp"

namespace rootlock::image {

util::Result<OciBuilt> build_oci(const OciBuildInput& input, const std::string& output, bool layout,
                                 const std::string& scratch_prefix) {
    const auto plans = plan_layers(input.entries, input.plan);
    std::vector<LayerBlob> blobs;
    auto cleanup = [&] {
        for (const auto& blob : blobs)
            ::unlink(blob.host_path.c_str());
    };
    OciBuilt built;
    std::vector<std::string> keys;
    // A layer's file from the cache, or written; either way described in `built`.
    auto add_blob = [&](LayerBlob blob, size_t n) {
        blob.layer.comment = layer_comment(plans[n]);
        built.layers.push_back(fmt::format("{} {} ({} bytes)", blob.layer.comment,
                                           blob.layer.blob.digest, blob.layer.blob.size));
        blobs.push_back(std::move(blob));
    };
    for (size_t n = 0; n < plans.size(); ++n) {
        const std::string path = scratch_prefix + ".layer-" + std::to_string(n);
        int64_t mtime = -1;
        for (const auto& wheel : plans[n].wheels)
            if (auto dated = input.wheel_mtime.find(wheel); dated != input.wheel_mtime.end())
                mtime = std::max(mtime, dated->second);
        if (mtime < 0)
            mtime = input.plain_mtime;
        std::string key;
        if (input.cache != nullptr && input.identities.size() == input.entries.size()) {
            MembersKey members(input.identity + (input.zstd ? " zstd" : " gzip"));
            for (size_t index : plans[n].entries)
                members.add(input.identities[index], input.entries[index].from_base ? -1 : mtime);
            key = members.hex();
            keys.push_back(key);
            auto cached = input.cache->take(key, path);
            if (!cached.ok()) {
                cleanup();
                return cached.error();
            }
            if (*cached) {
                LayerBlob blob;
                blob.host_path = path;
                blob.layer.blob.media_type =
                    input.zstd ? oci::k_media_layer_zstd : oci::k_media_layer_gzip;
                blob.layer.blob.digest = (*cached)->digest;
                blob.layer.blob.size = (*cached)->size;
                blob.layer.diff_id = (*cached)->diff_id;
                ++built.layers_reused;
                add_blob(std::move(blob), n);
                continue;
            }
        }
        TarWriterOptions options;
        options.compression = input.zstd ? Compression::zstd : Compression::gzip;
        options.in_process = true;
        options.threads = std::max(1, input.threads);
        auto writer = TarWriter::create(path, options);
        if (!writer.ok()) {
            cleanup();
            return writer.error();
        }
        // This layer's file and every earlier one go on any error.
        auto abandon = [&](const util::Error& error) {
            writer->reset();
            ::unlink(path.c_str());
            cleanup();
            return error;
        };
        for (size_t index : plans[n].entries)
            if (auto written =
                    input.write_entry(**writer, index, input.entries[index].from_base ? -1 : mtime);
                !written.ok())
                return abandon(written.error());
        if (auto finished = (*writer)->finish(); !finished.ok())
            return abandon(finished.error());
        LayerBlob blob;
        blob.host_path = path;
        blob.layer.blob.media_type = input.zstd ? oci::k_media_layer_zstd : oci::k_media_layer_gzip;
        blob.layer.blob.digest = "sha256:" + util::Sha256::to_hex((*writer)->digest());
        blob.layer.blob.size = (*writer)->size();
        blob.layer.diff_id = "sha256:" + util::Sha256::to_hex((*writer)->uncompressed_digest());
        writer->reset();
        if (!key.empty())
            input.cache->store(key, path,
                               {blob.layer.blob.digest, blob.layer.blob.size, blob.layer.diff_id});
        add_blob(std::move(blob), n);
    }
    built.entries = input.entries.size();
    // Once the image is in place, the cache keeps what it used (and what other outputs do).
    auto keep_used = [&] {
        if (input.cache != nullptr && !keys.empty())
            input.cache->keep_only_used(output, keys);
    };

    if (layout) {
        // Written beside, then put in place of an earlier layout of the same name.
        const std::string fresh = scratch_prefix + ".layout";
        auto written = write_oci_layout(fresh, blobs, input.spec);
        if (!written.ok()) {
            cleanup();
            std::error_code ignored;
            std::filesystem::remove_all(fresh + ".partial", ignored);
            return written.error();
        }
        std::error_code ec;
        if (input.before_publish)
            if (auto ready =
                    input.before_publish(written->manifest.digest.substr(7), written->sbom);
                !ready.ok()) {
                std::filesystem::remove_all(fresh, ec);
                return ready.error();
            }
        std::filesystem::remove_all(output, ec);
        if (::rename(fresh.c_str(), output.c_str()) != 0) {
            std::filesystem::remove_all(fresh, ec);
            return util::make_error(output, "cannot put the layout in place");
        }
        built.manifest_digest = written->manifest.digest;
        built.sha256 = written->manifest.digest.substr(7);
        built.sbom_digest = written->sbom_manifest.digest;
        built.sbom = std::move(written->sbom);
        keep_used();
        return built;
    }
    auto written = write_oci_archive(
        output, blobs, input.spec, input.mtime, [&](const OciImageWritten& image) {
            return input.before_publish ? input.before_publish(image.archive_sha256, image.sbom)
                                        : util::ok_status();
        });
    cleanup();
    if (!written.ok())
        return written.error();
    built.manifest_digest = written->manifest.digest;
    built.sha256 = written->archive_sha256;
    built.sbom_digest = written->sbom_manifest.digest;
    built.sbom = std::move(written->sbom);
    keep_used();
    return built;
}

}  // namespace rootlock::image
