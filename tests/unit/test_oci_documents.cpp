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

std::vector<Layer> two_layers() {
    return {Layer{Descriptor{k_media_layer_gzip, "sha256:" + k_hex_a, 100, {}},
                  "sha256:" + std::string(64, 'c'), "rootlock: the Debian base"},
            Layer{Descriptor{k_media_layer_gzip, "sha256:" + k_hex_b, 7, {}},
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
