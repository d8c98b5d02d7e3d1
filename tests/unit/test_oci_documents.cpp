// The OCI documents' exact bytes: one key order, no spaces, no clock, so that one lock gives one
// manifest digest everywhere.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "oci/oci_documents.hpp"

using namespace rootlock::oci;

namespace {

const std::string k_hex_a(64, 'a');
const std::string k_hex_b(64, 'b');

Descriptor blob(const char* media_type, std::string digest, uint64_t size) {
    Descriptor out;
    out.media_type = media_type;
    out.digest = std::move(digest);
    out.size = size;
    return out;
}

std::vector<Layer> two_layers() {
    return {Layer{blob(k_media_layer_gzip, "sha256:" + k_hex_a, 100),
                  "sha256:" + std::string(64, 'c'), "rootlock: the Debian base"},
            Layer{blob(k_media_layer_gzip, "sha256:" + k_hex_b, 7),
                  "sha256:" + std::string(64, 'd'), "rootlock: torch 2.8.0"}};
}

}  // namespace

TEST_SUITE("rootlock::oci") {
    TEST_CASE("the config lists the run settings, the diff ids and one history entry a layer") {
        RunConfig run;
        run.env = {"PATH=/opt/venv/bin:/usr/bin", "LANG=C.UTF-8"};
        run.working_dir = "/root";
        run.cmd = {"python3"};
        run.labels = {{"org.rootlock.lock.sha256", k_hex_a}, {"org.rootlock.recipe", "demo"}};
        run.created = rfc3339_utc(1700000000);
        CHECK(run.created == "2023-11-14T22:13:20Z");
        CHECK(config_json(run, two_layers()) ==
              R"({"created":"2023-11-14T22:13:20Z","architecture":"amd64","os":"linux",)"
              R"("config":{"Env":["PATH=/opt/venv/bin:/usr/bin","LANG=C.UTF-8"],"Cmd":["python3"],)"
              R"("WorkingDir":"/root","Labels":{"org.rootlock.lock.sha256":")" +
                  k_hex_a +
                  R"(","org.rootlock.recipe":"demo"}},"rootfs":{"type":"layers","diff_ids":[)"
                  R"("sha256:)" +
                  std::string(64, 'c') + R"(","sha256:)" + std::string(64, 'd') +
                  R"("]},"history":[{"created":"2023-11-14T22:13:20Z","created_by":"rootlock: )"
                  R"(the Debian base"},{"created":"2023-11-14T22:13:20Z","created_by":"rootlock: )"
                  R"(torch 2.8.0"}]})");
        RunConfig arm;
        arm.architecture = "arm64";
        arm.variant = "v8";
        const auto parsed = nlohmann::json::parse(config_json(arm, {}));
        CHECK(parsed["architecture"] == "arm64");
        CHECK(parsed["variant"] == "v8");
        CHECK(parsed["config"].is_object());
        CHECK(parsed["rootfs"]["diff_ids"].empty());
        CHECK_FALSE(parsed.contains("created"));
    }

    TEST_CASE("the manifest and the index name their blobs by digest and size") {
        const Descriptor config = describe(k_media_config, "{}");
        CHECK(config.digest ==
              "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a");
        CHECK(config.size == 2);
        const std::string manifest =
            manifest_json(config, two_layers(), {{"org.opencontainers.image.title", "demo"}});
        CHECK(manifest ==
              R"({"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json",)"
              R"("config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":")" +
                  config.digest +
                  R"(","size":2},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.)"
                  R"(tar+gzip","digest":"sha256:)" +
                  k_hex_a +
                  R"(","size":100},{"mediaType":"application/vnd.oci.image.layer.v1.tar+gzip",)"
                  R"("digest":"sha256:)" +
                  k_hex_b +
                  R"(","size":7}],"annotations":{"org.opencontainers.image.title":"demo"}})");
        const Descriptor described = describe(k_media_manifest, manifest);
        const auto index = nlohmann::json::parse(index_json(described, "demo"));
        CHECK(index["schemaVersion"] == 2);
        CHECK(index["mediaType"] == k_media_index);
        REQUIRE(index["manifests"].size() == 1);
        CHECK(index["manifests"][0]["digest"] == described.digest);
        CHECK(index["manifests"][0]["size"] == manifest.size());
        CHECK(index["manifests"][0]["annotations"]["org.opencontainers.image.ref.name"] == "demo");
        CHECK_FALSE(nlohmann::json::parse(index_json(described, ""))["manifests"][0].contains(
            "annotations"));
        CHECK(oci_layout_json() == R"({"imageLayoutVersion":"1.0.0"})");
    }

    TEST_CASE("an artifact manifest has the empty config, its blobs and the image as subject") {
        const Descriptor empty = empty_descriptor();
        CHECK(empty.media_type == std::string("application/vnd.oci.empty.v1+json"));
        CHECK(empty.digest ==
              "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a");
        CHECK(empty.size == 2);
        CHECK(empty.data == "e30=");
        CHECK(digest_of(empty_json()) == empty.digest);
        const Descriptor image = blob(k_media_manifest, "sha256:" + k_hex_a, 1144);
        const Descriptor sbom = blob(k_media_cyclonedx, "sha256:" + k_hex_b, 900);
        const std::string artifact =
            artifact_manifest_json(k_media_cyclonedx, {sbom}, image,
                                   {{"org.opencontainers.image.created", "2023-11-14T22:13:20Z"}});
        CHECK(artifact ==
              R"({"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json",)"
              R"("artifactType":"application/vnd.cyclonedx+json","config":{"mediaType":)"
              R"("application/vnd.oci.empty.v1+json","digest":"sha256:44136fa355b3678a1146ad16)"
              R"(f7e8649e94fb4fc21fe77e8310c060f61caaff8a","size":2,"data":"e30="},"layers":[{)"
              R"("mediaType":"application/vnd.cyclonedx+json","digest":"sha256:)" +
                  k_hex_b +
                  R"(","size":900}],"subject":{"mediaType":"application/vnd.oci.image.)"
                  R"(manifest.v1+json","digest":"sha256:)" +
                  k_hex_a +
                  R"(","size":1144},"annotations":{"org.opencontainers.image.created":")"
                  R"(2023-11-14T22:13:20Z"}})");
        // The image keeps its name and is the only entry; the artifact is named by annotation.
        const std::string artifact_digest = describe(k_media_manifest, artifact).digest;
        CHECK(index_json(image, "demo", artifact_digest) ==
              R"({"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json",)"
              R"("manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json",)"
              R"("digest":"sha256:)" +
                  k_hex_a +
                  R"(","size":1144,"annotations":{"org.opencontainers.image.ref.name":"demo",)"
                  R"("org.rootlock.sbom.manifest":")" +
                  artifact_digest + R"("}}]})");
        CHECK(index_json(image, "demo") == index_json(image, "demo", ""));
    }

    TEST_CASE("the config writes Entrypoint before Cmd, and neither when unset") {
        RunConfig run;
        run.entrypoint = {"/opt/venv/bin/python", "-m", "serve"};
        run.cmd = {"--port", "8000"};
        CHECK(config_json(run, {}) ==
              R"({"architecture":"amd64","os":"linux","config":{"Entrypoint":["/opt/venv/bin/)"
              R"(python","-m","serve"],"Cmd":["--port","8000"]},"rootfs":{"type":"layers",)"
              R"("diff_ids":[]},"history":[]})");
        CHECK(config_json(RunConfig{}, {}) ==
              R"({"architecture":"amd64","os":"linux","config":{},"rootfs":{"type":"layers",)"
              R"("diff_ids":[]},"history":[]})");
    }

    TEST_CASE("the same inputs give the same bytes, and any change gives another digest") {
        RunConfig run;
        run.env = {"PATH=/usr/bin"};
        const auto layers = two_layers();
        CHECK(config_json(run, layers) == config_json(run, layers));
        auto other = layers;
        other[1].diff_id = "sha256:" + std::string(64, 'e');
        CHECK(digest_of(config_json(run, layers)) != digest_of(config_json(run, other)));
        CHECK(rfc3339_utc(0) == "1970-01-01T00:00:00Z");
    }
}
