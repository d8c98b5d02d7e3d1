// Tests for reading OCI images as one root: layouts and archives made while the test runs,
// manifest choice (ref, digest, SBOM artifact, multi-arch index), blob checks, malformed input.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "oci/image_config.hpp"
#include "oci/image_select.hpp"
#include "oci/oci_tree.hpp"
#include "support/oci_fixture.hpp"
#include "support/temp_dir.hpp"

namespace ROOTLOCK_UNIT_ID {

using namespace rootlock;
using namespace rootlock::oci;
using rootlock::testing::descriptor_json;
using rootlock::testing::FixtureLayer;
using rootlock::testing::tar_bytes;
using rootlock::testing::TempDir;
using rootlock::testing::write_archive;
using rootlock::testing::write_blob;
using rootlock::testing::write_layout;

namespace {

const char* k_manifest_type = "application/vnd.oci.image.manifest.v1+json";

std::vector<FixtureLayer> two_layers() {
    return {{k_media_layer_gzip, tar_bytes({{"etc/", 'd'},
                                            {"etc/os-release", 'f', "ID=debian\n"},
                                            {"usr/lib/libgone.so", 'f', "x"}},
                                           "gzip")},
            {k_media_layer_zstd, tar_bytes({{"usr/lib/", 'd'},
                                            {"usr/lib/.wh.libgone.so", 'f'},
                                            {"opt/venv/pyvenv.cfg", 'f', "home = /usr/bin\n"}},
                                           "zstd")}};
}

util::Result<OciImage> open_image(const std::string& text, const Platform& platform = {}) {
    auto source = open_oci_path(split_image_spec(text), platform);
    if (!source.ok())
        return source.error();
    return open_oci_tree(*source, fs::TarOptions{});
}

std::string error_of(const std::string& text) {
    auto image = open_image(text);
    REQUIRE_FALSE(image.ok());
    return image.error().text();
}

void write_index(const TempDir& tmp, const std::string& entries) {
    tmp.write_file("img.oci/index.json", R"({"schemaVersion":2,"manifests":[)" + entries + "]}");
}

std::string named(std::string descriptor, const std::string& ref) {
    descriptor.insert(descriptor.size() - 1,
                      R"(,"annotations":{"org.opencontainers.image.ref.name":")" + ref + R"("})");
    return descriptor;
}

}  // namespace

TEST_SUITE("rootlock::oci") {
    TEST_CASE("an OCI layout and its archive give the same flattened tree") {
        TempDir tmp;
        write_layout(tmp / "img.oci", two_layers());
        write_archive(tmp / "img.oci", tmp / "img.oci.tar");
        CHECK(is_oci_image(tmp / "img.oci"));
        CHECK(is_oci_image(tmp / "img.oci.tar"));
        for (const std::string& path : {tmp / "img.oci", tmp / "img.oci.tar"}) {
            auto image = open_image(path);
            REQUIRE_MESSAGE(image.ok(), (image.ok() ? "" : image.error().text()));
            CHECK(image->tree->read_file("/etc/os-release").ok());
            CHECK(image->tree->read_file("/opt/venv/pyvenv.cfg").ok());
            CHECK_FALSE(image->tree->lstat("/usr/lib/libgone.so").has_value());
            CHECK(env_value(image->config, "VIRTUAL_ENV") == "/opt/venv");
            CHECK(image->config.labels.at("org.rootlock.recipe") == "app");
        }
    }

    TEST_CASE("a rootfs tarball or directory is not taken for an OCI image") {
        TempDir tmp;
        tmp.write_file("root/etc/os-release", "ID=debian\n");
        tmp.write_file("root.tar", tar_bytes({{"./", 'd'}, {"./etc/", 'd'}}));
        tmp.write_file("blobs.tar.gz", tar_bytes({{"blobs/", 'd'}}, "gzip"));
        CHECK_FALSE(is_oci_image(tmp / "root"));
        CHECK_FALSE(is_oci_image(tmp / "root.tar"));
        CHECK_FALSE(is_oci_image(tmp / "blobs.tar.gz"));
        CHECK_FALSE(is_oci_image(tmp / "absent"));
    }

    TEST_CASE("an OCI image is named with :REF or @DIGEST after its path") {
        TempDir tmp;
        write_layout(tmp / "img.oci", two_layers());
        CHECK(split_image_spec(tmp / "img.oci").ref.empty());
        CHECK(split_image_spec(tmp / "img.oci:app").path == tmp / "img.oci");
        CHECK(split_image_spec(tmp / "img.oci:app").ref == "app");
        std::string digest = "sha256:" + std::string(64, 'a');
        CHECK(split_image_spec(tmp / "img.oci@" + digest).ref == digest);
        CHECK(split_image_spec("no/such:thing").path == "no/such:thing");
    }

    TEST_CASE("an OCI index's SBOM artifact is skipped and refs pick among images") {
        TempDir tmp;
        std::string manifest = write_layout(tmp / "img.oci", two_layers());
        std::string other_layers_manifest =
            rootlock::testing::fixture_manifest(rootlock::testing::fixture_config(), {});
        write_blob(tmp / "img.oci", other_layers_manifest);
        std::string sbom = R"({"schemaVersion":2,"mediaType":")" + std::string(k_manifest_type) +
                           R"(","artifactType":"application/vnd.cyclonedx+json","config":)" +
                           descriptor_json(k_media_empty, "{}") + R"(,"layers":[]})";
        write_blob(tmp / "img.oci", sbom);
        std::string sbom_entry = descriptor_json(k_manifest_type, sbom);
        sbom_entry.insert(sbom_entry.size() - 1,
                          R"(,"artifactType":"application/vnd.cyclonedx+json")");
        write_index(tmp,
                    named(descriptor_json(k_manifest_type, manifest), "app") + "," + sbom_entry);
        auto image = open_image(tmp / "img.oci");
        REQUIRE(image.ok());
        CHECK(image->manifest_digest == digest_of(manifest));

        write_index(
            tmp, named(descriptor_json(k_manifest_type, manifest), "app") + "," +
                     named(descriptor_json(k_manifest_type, other_layers_manifest), "empty") + "," +
                     sbom_entry);
        CHECK(error_of(tmp / "img.oci") ==
              tmp / "img.oci" + ": index.json lists 2 images: name one (\"app\", \"empty\")");
        auto by_name = open_image(tmp / "img.oci:empty");
        REQUIRE(by_name.ok());
        CHECK(by_name->tree->lstat("/etc").has_value() == false);
        auto by_digest = open_image(tmp / "img.oci@" + digest_of(manifest));
        REQUIRE(by_digest.ok());
        CHECK(by_digest->tree->lstat("/etc/os-release").has_value());
        CHECK(error_of(tmp / "img.oci:nope").find("no image \"nope\" in index.json") !=
              std::string::npos);
    }

    TEST_CASE("an OCI artifact manifest named on purpose is refused as not an image") {
        TempDir tmp;
        write_layout(tmp / "img.oci", two_layers());
        std::string sbom = R"({"schemaVersion":2,"mediaType":")" + std::string(k_manifest_type) +
                           R"(","config":)" + descriptor_json(k_media_empty, "{}") +
                           R"(,"layers":[]})";
        write_blob(tmp / "img.oci", sbom);
        write_index(tmp, named(descriptor_json(k_manifest_type, sbom), "sbom"));
        CHECK(error_of(tmp / "img.oci") ==
              tmp / "img.oci: manifest " + digest_of(sbom) +
                  ": an artifact (\"application/vnd.oci.empty.v1+json\"), not an image");
    }

    TEST_CASE("linux/amd64 is picked from a multi-arch OCI index, or the one asked for") {
        TempDir tmp;
        std::string amd64 = write_layout(tmp / "img.oci", two_layers());
        std::string arm64 =
            rootlock::testing::fixture_manifest(rootlock::testing::fixture_config(), {});
        write_blob(tmp / "img.oci", arm64);
        auto with_platform = [](std::string descriptor, const std::string& platform) {
            descriptor.insert(descriptor.size() - 1, R"(,"platform":)" + platform);
            return descriptor;
        };
        std::string nested =
            R"({"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[)" +
            with_platform(descriptor_json(k_manifest_type, arm64),
                          R"({"architecture":"arm64","os":"linux","variant":"v8"})") +
            "," +
            with_platform(descriptor_json(k_manifest_type, amd64),
                          R"({"architecture":"amd64","os":"linux"})") +
            "]}";
        write_blob(tmp / "img.oci", nested);
        write_index(tmp, named(descriptor_json(k_media_index, nested), "multi"));
        auto image = open_image(tmp / "img.oci");
        REQUIRE_MESSAGE(image.ok(), (image.ok() ? "" : image.error().text()));
        CHECK(image->manifest_digest == digest_of(amd64));
        auto arm = open_image(tmp / "img.oci", Platform{"linux", "arm64", ""});
        REQUIRE(arm.ok());
        CHECK(arm->manifest_digest == digest_of(arm64));
        auto none = open_image(tmp / "img.oci", Platform{"linux", "s390x", ""});
        REQUIRE_FALSE(none.ok());
        CHECK(none.error().text() == tmp / "img.oci: index " + digest_of(nested) +
                                         ": no linux/s390x image (there are linux/arm64/v8, "
                                         "linux/amd64)");
    }

    TEST_CASE("an OCI layer blob that differs from its digest is one error line") {
        TempDir tmp;
        auto layers = two_layers();
        write_layout(tmp / "img.oci", layers);
        std::string blob = tmp / "img.oci/blobs/sha256/" + digest_of(layers[1].bytes).substr(7);
        std::string bytes = layers[1].bytes;
        bytes[bytes.size() - 5] = static_cast<char>(bytes[bytes.size() - 5] ^ 1);
        tmp.write_file("img.oci/blobs/sha256/" + digest_of(layers[1].bytes).substr(7), bytes);
        CHECK(error_of(tmp / "img.oci") ==
              tmp / "img.oci: layer 2 (" + digest_of(layers[1].bytes).substr(0, 19) +
                  "): its sha256 differs from the descriptor's digest");
        write_archive(tmp / "img.oci", tmp / "img.oci.tar");
        CHECK(
            error_of(tmp / "img.oci.tar").find("its sha256 differs from the descriptor's digest") !=
            std::string::npos);
    }

    TEST_CASE("a truncated OCI layer blob is one error line") {
        TempDir tmp;
        auto layers = two_layers();
        write_layout(tmp / "img.oci", layers);
        std::string name = "img.oci/blobs/sha256/" + digest_of(layers[0].bytes).substr(7);
        tmp.write_file(name, layers[0].bytes.substr(0, 40));
        CHECK(error_of(tmp / "img.oci") == tmp / "img.oci: layer 1 (" +
                                               digest_of(layers[0].bytes).substr(0, 19) +
                                               "): the blob is 40 bytes, its descriptor says " +
                                               std::to_string(layers[0].bytes.size()));
    }

    TEST_CASE("an OCI layer of an unknown media type is refused") {
        TempDir tmp;
        write_layout(tmp / "img.oci",
                     {{"application/vnd.oci.image.layer.v1.tar+encrypted", tar_bytes({})}});
        CHECK(error_of(tmp / "img.oci")
                  .find("unsupported media type "
                        "\"application/vnd.oci.image.layer.v1.tar+encrypted\"") !=
              std::string::npos);
    }

    TEST_CASE("malformed OCI index.json and manifests each give one clear line") {
        struct Case {
            std::string index;     // index.json; "" keeps the good one
            std::string manifest;  // a manifest blob named by the index; "" for none
            std::string expected;  // a part of the message
        };
        const std::string good_config = rootlock::testing::fixture_config();
        const std::string config = descriptor_json(k_media_config, good_config);
        const std::vector<Case> cases{
            {"{", "", "not a JSON object"},
            {"[]", "", "not a JSON object"},
            {R"({"schemaVersion":1,"manifests":[]})", "", "schemaVersion is not 2"},
            {R"({"schemaVersion":2})", "", "no \"manifests\" array"},
            {R"({"schemaVersion":2,"manifests":[]})", "", "index.json lists no image"},
            {R"({"schemaVersion":2,"manifests":[{"digest":"sha256:00","size":1}]})", "",
             "a descriptor has no mediaType"},
            {R"({"schemaVersion":2,"manifests":[{"mediaType":"x","digest":"md5:00","size":1}]})",
             "", "digest is not sha256"},
            {R"({"schemaVersion":2,"manifests":[{"mediaType":"x","digest":"sha256:)" +
                 std::string(64, 'a') + R"(","size":-1}]})",
             "", "size is not a whole number"},
            {R"({"schemaVersion":2,"manifests":[{"mediaType":"x","digest":"sha256:)" +
                 std::string(64, 'a') + R"(","size":1}]})",
             "", "no blob sha256:"},
            {"", "\x01\x02", "not a JSON object"},
            {"", R"({"schemaVersion":2,"layers":[]})", "no config descriptor"},
            {"", R"({"schemaVersion":2,"config":)" + config + "}", "no \"layers\" array"},
            {"", R"({"schemaVersion":2,"config":)" + config + R"(,"layers":[7]})",
             "a descriptor is not an object"},
            {"", R"({"schemaVersion":2,"manifests":[]})", "an image index, not a manifest"},
        };
        for (const auto& item : cases) {
            TempDir tmp;
            write_layout(tmp / "img.oci", {});
            if (!item.manifest.empty()) {
                write_blob(tmp / "img.oci", item.manifest);
                write_index(tmp, descriptor_json(k_manifest_type, item.manifest));
            } else {
                tmp.write_file("img.oci/index.json", item.index);
            }
            auto image = open_image(tmp / "img.oci");
            CAPTURE(item.index);
            CAPTURE(item.manifest);
            REQUIRE_FALSE(image.ok());
            const std::string text = image.error().text();
            CHECK(text.find(item.expected) != std::string::npos);
            CHECK(text.find('\n') == std::string::npos);
            CHECK(util::is_one_line(text));
        }
    }

    TEST_CASE("malformed OCI image configs each give one exact line") {
        const std::vector<std::pair<std::string, std::string>> cases{
            {"", "c: not a JSON object"},
            {"[1]", "c: not a JSON object"},
            {R"({"architecture":7})", "c: architecture, os or variant is not a string"},
            {R"({"config":[]})", "c: \"config\" is not an object"},
            {R"({"config":{"Env":"PATH=/bin"}})", "c: config.Env is not an array of strings"},
            {R"({"config":{"Env":[1]}})", "c: config.Env is not an array of strings"},
            {R"({"config":{"Labels":{"a":1}}})", "c: config.Labels is not an object of strings"},
            {R"({"config":{"WorkingDir":false}})", "c: config.WorkingDir is not a string"},
        };
        for (const auto& [text, expected] : cases) {
            auto config = parse_image_config(text, "c");
            REQUIRE_FALSE(config.ok());
            CHECK(config.error().text() == expected);
        }
        auto good = parse_image_config(R"({"config":{"Env":null,"Labels":null}})", "c");
        CHECK(good.ok());
    }

    TEST_CASE("an OCI --image-platform is OS/ARCH[/VARIANT]") {
        CHECK(to_string(*parse_platform("linux/arm64/v8")) == "linux/arm64/v8");
        CHECK(parse_platform("linux").error().text() ==
              "--image-platform: \"linux\" is not OS/ARCH[/VARIANT]");
        CHECK_FALSE(parse_platform("linux//v8").ok());
        CHECK_FALSE(parse_platform("a/b/c/d").ok());
    }
}

}  // namespace ROOTLOCK_UNIT_ID
