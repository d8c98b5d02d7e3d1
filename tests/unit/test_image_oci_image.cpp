// OCI layouts and archives as real clients read them: skopeo inspects both forms and finds our
// digests, umoci unpacks the layers into the tree they hold, and one input gives one archive.
#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "image/oci_image.hpp"
#include "image/tar_writer.hpp"
#include "support/host.hpp"
#include "support/temp_dir.hpp"
#include "util/sha256.hpp"

using namespace rootlock;
using namespace rootlock::image;
using rootlock::testing::read_host_text;
using rootlock::testing::run_shell;
using rootlock::testing::TempDir;

namespace {

// One gzip layer holding `files` (path -> content) under their directories.
LayerBlob layer(const TempDir& tmp, const std::string& name,
                const std::vector<std::pair<std::string, std::string>>& files,
                const std::vector<std::string>& directories) {
    TarWriterOptions options;
    options.compression = Compression::gzip;
    options.in_process = true;
    auto writer = TarWriter::create(tmp / name, options);
    REQUIRE(writer.ok());
    std::vector<std::pair<std::string, TarEntry>> entries;
    for (const auto& directory : directories) {
        TarEntry entry;
        entry.path = directory;
        entry.kind = EntryKind::directory;
        entry.mode = 0755;
        REQUIRE((*writer)->add_bytes(entry, "").ok());
    }
    for (const auto& [path, content] : files) {
        TarEntry entry;
        entry.path = path;
        entry.size = content.size();
        REQUIRE((*writer)->add_bytes(entry, content).ok());
    }
    REQUIRE((*writer)->finish().ok());
    LayerBlob blob;
    blob.host_path = tmp / name;
    blob.layer.blob = oci::describe(oci::k_media_layer_gzip, "");
    blob.layer.blob.digest = "sha256:" + util::Sha256::to_hex((*writer)->digest());
    blob.layer.blob.size = (*writer)->size();
    blob.layer.diff_id = "sha256:" + util::Sha256::to_hex((*writer)->uncompressed_digest());
    blob.layer.comment = "rootlock: " + name;
    return blob;
}

OciImageSpec spec() {
    OciImageSpec out;
    out.run.env = {"PATH=/opt/venv/bin:/usr/bin:/bin"};
    out.run.working_dir = "/";
    out.run.labels = {{"org.rootlock.recipe", "demo"}};
    out.run.created = oci::rfc3339_utc(1700000000);
    out.annotations = {{"org.opencontainers.image.title", "demo"}};
    out.ref_name = "demo";
    return out;
}

std::vector<LayerBlob> two_layers(const TempDir& tmp, const std::string& suffix) {
    return {layer(tmp, "base" + suffix, {{"/etc/os-release", "ID=debian\n"}}, {"/etc"}),
            layer(tmp, "venv" + suffix, {{"/opt/venv/lib/x.py", "print(1)\n"}},
                  {"/opt", "/opt/venv", "/opt/venv/lib"})};
}

}  // namespace

TEST_SUITE("rootlock::image") {
    TEST_CASE("an OCI layout and archive are read by skopeo and unpacked by umoci") {
        TempDir tmp;
        const auto layers = two_layers(tmp, "");
        const std::vector<std::string> digests{layers[0].layer.blob.digest,
                                               layers[1].layer.blob.digest};
        // The archive first: the layout moves the layer files.
        auto archived = write_oci_archive(tmp / "demo.oci.tar", layers, spec(), 1700000000);
        REQUIRE(archived.ok());
        auto again = write_oci_archive(tmp / "again.oci.tar", layers, spec(), 1700000000);
        REQUIRE(again.ok());
        CHECK(read_host_text(tmp / "demo.oci.tar") == read_host_text(tmp / "again.oci.tar"));
        auto written = write_oci_layout(tmp / "layout", layers, spec());
        REQUIRE(written.ok());
        CHECK(written->manifest.digest == archived->manifest.digest);
        CHECK_FALSE(write_oci_layout(tmp / "layout", layers, spec()).ok());

        if (run_shell("command -v skopeo && command -v umoci").second != 0) {
            MESSAGE("skopeo or umoci is not installed (make test installs them)");
            CHECK(false);
            return;
        }
        for (const std::string& reference :
             {"oci:" + (tmp / "layout") + ":demo", "oci-archive:" + (tmp / "demo.oci.tar")}) {
            CAPTURE(reference);
            const auto [raw, raw_status] = run_shell("skopeo inspect --raw " + reference);
            REQUIRE(raw_status == 0);
            CHECK(util::sha256_hex(raw) == written->manifest.digest.substr(7));
            const auto [text, status] = run_shell("skopeo inspect " + reference);
            REQUIRE(status == 0);
            const auto inspected = nlohmann::json::parse(text);
            CHECK(inspected["Layers"] == digests);
            CHECK(inspected["Labels"]["org.rootlock.recipe"] == "demo");
            CHECK(inspected["Architecture"] == "amd64");
        }
        const auto [out, status] = run_shell("umoci unpack --rootless --image " + (tmp / "layout") +
                                             ":demo " + (tmp / "bundle"));
        REQUIRE_MESSAGE(status == 0, out);
        CHECK(read_host_text(tmp / "bundle/rootfs/etc/os-release") == "ID=debian\n");
        CHECK(read_host_text(tmp / "bundle/rootfs/opt/venv/lib/x.py") == "print(1)\n");
    }

    TEST_CASE("the SBOM is an artifact about the image manifest, named by the image's entry") {
        TempDir tmp;
        const auto layers = two_layers(tmp, "");
        OciImageSpec plain_spec = spec();
        plain_spec.annotations["org.opencontainers.image.created"] = plain_spec.run.created;
        auto plain = write_oci_archive(tmp / "plain.oci.tar", layers, plain_spec, 1700000000);
        REQUIRE(plain.ok());
        OciImageSpec with_sbom = plain_spec;
        std::string asked;
        with_sbom.sbom = [&asked](const std::string& manifest_digest) {
            asked = manifest_digest;
            return std::string("{\"bomFormat\":\"CycloneDX\"}\n");
        };
        auto archived = write_oci_archive(tmp / "demo.oci.tar", layers, with_sbom, 1700000000);
        REQUIRE(archived.ok());
        auto again = write_oci_archive(tmp / "again.oci.tar", layers, with_sbom, 1700000000);
        REQUIRE(again.ok());
        CHECK(read_host_text(tmp / "demo.oci.tar") == read_host_text(tmp / "again.oci.tar"));
        auto written = write_oci_layout(tmp / "layout", layers, with_sbom);
        REQUIRE(written.ok());
        CHECK(asked == written->manifest.digest);
        CHECK(written->sbom == "{\"bomFormat\":\"CycloneDX\"}\n");
        CHECK(written->sbom_manifest.digest == archived->sbom_manifest.digest);
        // Attaching the SBOM leaves the image's own manifest as it was.
        CHECK(written->manifest.digest == plain->manifest.digest);
        CHECK(plain->sbom_manifest.digest.empty());

        const std::string blobs = tmp / "layout/blobs/sha256/";
        const auto index = nlohmann::json::parse(read_host_text(tmp / "layout/index.json"));
        // index.json lists the image alone: clients need no name to take it.
        REQUIRE(index["manifests"].size() == 1);
        CHECK(index["manifests"][0]["digest"] == written->manifest.digest);
        CHECK(index["manifests"][0]["annotations"]["org.opencontainers.image.ref.name"] == "demo");
        CHECK(index["manifests"][0]["annotations"]["org.rootlock.sbom.manifest"] ==
              written->sbom_manifest.digest);
        const std::string artifact_text =
            read_host_text(blobs + written->sbom_manifest.digest.substr(7));
        CHECK(util::sha256_hex(artifact_text) == written->sbom_manifest.digest.substr(7));
        const auto artifact = nlohmann::json::parse(artifact_text);
        CHECK(artifact["artifactType"] == "application/vnd.cyclonedx+json");
        CHECK(artifact["config"]["mediaType"] == "application/vnd.oci.empty.v1+json");
        CHECK(artifact["config"]["digest"] ==
              "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a");
        CHECK(artifact["config"]["data"] == "e30=");
        CHECK(read_host_text(blobs +
                             "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a") ==
              "{}");
        REQUIRE(artifact["layers"].size() == 1);
        CHECK(artifact["layers"][0]["mediaType"] == "application/vnd.cyclonedx+json");
        CHECK(read_host_text(blobs + artifact["layers"][0]["digest"].get<std::string>().substr(
                                         7)) == written->sbom);
        CHECK(artifact["subject"]["digest"] == written->manifest.digest);
        CHECK(artifact["subject"]["size"] == written->manifest.size);
        CHECK(artifact["annotations"]["org.opencontainers.image.created"] ==
              "2023-11-14T22:13:20Z");

        if (run_shell("command -v skopeo && command -v umoci").second != 0) {
            MESSAGE("skopeo or umoci is not installed (make test installs them)");
            CHECK(false);
            return;
        }
        // With a name and without one (skopeo 1.9 refuses the latter when index.json lists two
        // manifests: "more than one image in oci, choose an image").
        for (const std::string& reference :
             {"oci:" + (tmp / "layout") + ":demo", "oci:" + (tmp / "layout"),
              "oci-archive:" + (tmp / "demo.oci.tar") + ":demo",
              "oci-archive:" + (tmp / "demo.oci.tar")}) {
            CAPTURE(reference);
            const auto [raw, raw_status] = run_shell("skopeo inspect --raw " + reference);
            REQUIRE(raw_status == 0);
            CHECK(util::sha256_hex(raw) == written->manifest.digest.substr(7));
        }
        const auto [copied, copy_status] =
            run_shell("skopeo copy oci-archive:" + (tmp / "demo.oci.tar") +
                      ":demo oci:" + (tmp / "copied") + ":demo 2>&1");
        CHECK_MESSAGE(copy_status == 0, copied);
        const auto [out, status] = run_shell("umoci unpack --rootless --image " + (tmp / "layout") +
                                             ":demo " + (tmp / "bundle"));
        REQUIRE_MESSAGE(status == 0, out);
        CHECK(read_host_text(tmp / "bundle/rootfs/opt/venv/lib/x.py") == "print(1)\n");
    }

    TEST_CASE(
        "a layer whose size differs from its descriptor is refused before anything is written") {
        TempDir tmp;
        auto layers = two_layers(tmp, "");
        layers[1].layer.blob.size += 1;
        auto refused = write_oci_archive(tmp / "x.oci.tar", layers, spec(), 0);
        REQUIRE_FALSE(refused.ok());
        CHECK(refused.error().message.find("its descriptor says") != std::string::npos);
        CHECK_FALSE(std::ifstream(tmp / "x.oci.tar").good());
        CHECK_FALSE(write_oci_layout(tmp / "dir", layers, spec()).ok());
    }
}
