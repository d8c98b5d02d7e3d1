// Unit tests for the CycloneDX SBOM: the golden bytes for a small lock, purl escaping, the
// serial number and timestamp, determinism, and what is left out of foreign or odd locks.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "image/sbom.hpp"

using namespace rootlock::image;
using namespace rootlock;
using Json = nlohmann::ordered_json;

namespace {

const std::string k_image_sha = std::string(63, '0') + "1";
const std::string k_sha_a = std::string(64, 'a');
const std::string k_sha_b = std::string(64, 'b');
const std::string k_sha_c = std::string(64, 'c');

pylock::LockPackage package(std::string name, std::string version, const std::string& sha) {
    pylock::LockPackage p;
    p.name = std::move(name);
    p.version = std::move(version);
    pylock::LockWheel wheel;
    wheel.name = p.name + "-" + p.version + "-py3-none-any.whl";
    wheel.url = "https://files.example/" + wheel.name;
    wheel.hashes["sha256"] = sha;
    p.wheels.push_back(wheel);
    return p;
}

pylock::Lock small_lock() {
    pylock::Lock lock;
    pylock::LockPackage torch = package("torch", "2.8.0+cu128", k_sha_a);
    torch.dependencies = {{"numpy", std::nullopt}};
    torch.rootlock = pylock::PackageRootlockData{
        {"libtorch.so"}, {"libcudart.so.12", "libc.so.6"}, true, {}, std::nullopt, {}};
    pylock::LockPackage numpy = package("numpy", "2.1.0", k_sha_b);
    numpy.rootlock = pylock::PackageRootlockData{{}, {"libm.so.6"}, false, {}, std::nullopt, {}};
    lock.packages = {torch, numpy};
    pylock::LockRootlockData data;
    data.recipe_sha256 = k_sha_c;
    data.source_date_epoch = 1700000000;
    data.target = pylock::LockTarget{"3.11", "3.11.2", "2.36", "x86_64", "12.8", "", "", {}};
    data.base.kind = "tarball";
    data.base.url = "https://example.org/bases/bookworm.tar.zst?x=1";
    data.base.sha256 = k_sha_c;
    lock.rootlock = data;
    return lock;
}

Json parse(const std::string& text) {
    return Json::parse(text);
}

// "urn:uuid:xxxxxxxx-xxxx-5xxx-[89ab]xxx-xxxxxxxxxxxx" in lowercase hex (std::regex trips g++ 12's
// -Wmaybe-uninitialized under the sanitizers).
bool is_v5_uuid_urn(const std::string& text) {
    const std::string prefix = "urn:uuid:";
    if (text.size() != prefix.size() + 36 || text.compare(0, prefix.size(), prefix) != 0)
        return false;
    const std::string uuid = text.substr(prefix.size());
    for (size_t i = 0; i < uuid.size(); ++i) {
        const char c = uuid[i];
        if (i == 8 || i == 13 || i == 18 || i == 23) {
            if (c != '-')
                return false;
        } else if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
            return false;
        }
    }
    return uuid[14] == '5' && std::string("89ab").find(uuid[19]) != std::string::npos;
}

}  // namespace

TEST_SUITE("rootlock::image") {
    TEST_CASE("a small lock gives this SBOM byte for byte") {
        // The serial number is checked independently in Python: uuid.UUID(bytes=...) of
        // sha256(k_image_sha) with the version 5 and RFC 4122 variant bits set.
        const std::string expected = R"json({
  "$schema": "http://cyclonedx.org/schema/bom-1.5.schema.json",
  "bomFormat": "CycloneDX",
  "specVersion": "1.5",
  "serialNumber": "urn:uuid:c386d8e8-d073-52f2-a39e-189c8e6c57bb",
  "version": 1,
  "metadata": {
    "timestamp": "2023-11-14T22:13:20Z",
    "tools": {
      "components": [
        {
          "type": "application",
          "name": "rootlock"
        }
      ]
    },
    "component": {
      "type": "container",
      "bom-ref": "image",
      "name": "demo",
      "hashes": [
        {
          "alg": "SHA-256",
          "content": "0000000000000000000000000000000000000000000000000000000000000001"
        }
      ],
      "properties": [
        {
          "name": "rootlock:target-arch",
          "value": "x86_64"
        },
        {
          "name": "rootlock:target-glibc",
          "value": "2.36"
        },
        {
          "name": "rootlock:target-python",
          "value": "3.11.2"
        },
        {
          "name": "rootlock:target-cuda",
          "value": "12.8"
        },
        {
          "name": "rootlock:recipe-sha256",
          "value": "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"
        }
      ]
    }
  },
  "components": [
    {
      "type": "operating-system",
      "bom-ref": "base",
      "name": "bookworm.tar.zst",
      "hashes": [
        {
          "alg": "SHA-256",
          "content": "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"
        }
      ],
      "externalReferences": [
        {
          "type": "distribution",
          "url": "https://example.org/bases/bookworm.tar.zst?x=1"
        }
      ],
      "properties": [
        {
          "name": "rootlock:base-kind",
          "value": "tarball"
        }
      ]
    },
    {
      "type": "library",
      "bom-ref": "pkg:pypi/numpy@2.1.0",
      "name": "numpy",
      "version": "2.1.0",
      "hashes": [
        {
          "alg": "SHA-256",
          "content": "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
        }
      ],
      "purl": "pkg:pypi/numpy@2.1.0",
      "externalReferences": [
        {
          "type": "distribution",
          "url": "https://files.example/numpy-2.1.0-py3-none-any.whl",
          "hashes": [
            {
              "alg": "SHA-256",
              "content": "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
            }
          ]
        }
      ],
      "properties": [
        {
          "name": "rootlock:needs",
          "value": "libm.so.6"
        }
      ]
    },
    {
      "type": "library",
      "bom-ref": "pkg:pypi/torch@2.8.0%2Bcu128",
      "name": "torch",
      "version": "2.8.0+cu128",
      "hashes": [
        {
          "alg": "SHA-256",
          "content": "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
        }
      ],
      "purl": "pkg:pypi/torch@2.8.0%2Bcu128",
      "externalReferences": [
        {
          "type": "distribution",
          "url": "https://files.example/torch-2.8.0+cu128-py3-none-any.whl",
          "hashes": [
            {
              "alg": "SHA-256",
              "content": "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
            }
          ]
        }
      ],
      "properties": [
        {
          "name": "rootlock:provides",
          "value": "libtorch.so"
        },
        {
          "name": "rootlock:needs",
          "value": "libc.so.6"
        },
        {
          "name": "rootlock:needs",
          "value": "libcudart.so.12"
        }
      ]
    }
  ],
  "dependencies": [
    {
      "ref": "image",
      "dependsOn": [
        "base",
        "pkg:pypi/torch@2.8.0%2Bcu128"
      ]
    },
    {
      "ref": "pkg:pypi/numpy@2.1.0",
      "dependsOn": []
    },
    {
      "ref": "pkg:pypi/torch@2.8.0%2Bcu128",
      "dependsOn": [
        "pkg:pypi/numpy@2.1.0"
      ]
    }
  ]
}
)json";
        const std::string sbom = cyclonedx_sbom(small_lock(), "demo", k_image_sha);
        CHECK(sbom == expected);
        CHECK(parse(sbom).is_object());
    }

    TEST_CASE("the SBOM is the same whatever order the lock lists its packages in") {
        pylock::Lock lock = small_lock();
        const std::string first = cyclonedx_sbom(lock, "demo", k_image_sha);
        std::swap(lock.packages[0], lock.packages[1]);
        auto& torch_needs = lock.packages[1].rootlock->needs;  // torch, now second
        REQUIRE(torch_needs.size() == 2);
        std::swap(torch_needs[0], torch_needs[1]);
        CHECK(cyclonedx_sbom(lock, "demo", k_image_sha) == first);
        CHECK(cyclonedx_sbom(lock, "demo", k_image_sha) == first);
    }

    TEST_CASE("purls lowercase the name and percent-encode both parts") {
        struct Case {
            std::string name, version, purl;
        };
        const Case cases[] = {
            {"torch", "2.8.0+cu128", "pkg:pypi/torch@2.8.0%2Bcu128"},
            {"Foo_Bar", "1.0", "pkg:pypi/foo-bar@1.0"},
            {"zope.interface", "6.0", "pkg:pypi/zope.interface@6.0"},
            {"x", "1!2.0", "pkg:pypi/x@1%212.0"},
            {"x", "1.0 a/b~", "pkg:pypi/x@1.0%20a%2Fb~"},
            {"x", "", "pkg:pypi/x"},
            {"caf\xc3\xa9", "1", "pkg:pypi/caf%C3%A9@1"},
        };
        for (const auto& c : cases) {
            CAPTURE(c.name);
            CHECK(pypi_purl(c.name, c.version) == c.purl);
        }
    }

    TEST_CASE("timestamps are RFC 3339 UTC up to the year 9999") {
        CHECK(rfc3339_utc(0) == "1970-01-01T00:00:00Z");
        CHECK(rfc3339_utc(68256000) == "1972-03-01T00:00:00Z");
        CHECK(rfc3339_utc(951782400) == "2000-02-29T00:00:00Z");
        CHECK(rfc3339_utc(1700000000) == "2023-11-14T22:13:20Z");
        CHECK(rfc3339_utc(4107542399) == "2100-02-28T23:59:59Z");
        CHECK(rfc3339_utc(253402300799) == "9999-12-31T23:59:59Z");
        CHECK(rfc3339_utc(253402300800) == std::nullopt);
        CHECK(rfc3339_utc(UINT64_MAX) == std::nullopt);
    }

    TEST_CASE("serial numbers are version 5 UUIDs, one per image") {
        const std::string a = sbom_serial_number(k_image_sha);
        const std::string b = sbom_serial_number(k_sha_a);
        CHECK(is_v5_uuid_urn(a));
        CHECK(is_v5_uuid_urn(b));
        CHECK_FALSE(is_v5_uuid_urn("urn:uuid:c386d8e8-d073-42f2-a39e-189c8e6c57bb"));
        CHECK_FALSE(is_v5_uuid_urn("urn:uuid:c386d8e8-d073-52f2-c39e-189c8e6c57bb"));
        CHECK(a != b);
        CHECK(a == sbom_serial_number(k_image_sha));
        CHECK(parse(cyclonedx_sbom(small_lock(), "demo", k_sha_a))["serialNumber"] == b);
    }

    TEST_CASE("a foreign lock has no timestamp, no base, and the image needs every package") {
        pylock::Lock lock = small_lock();
        lock.rootlock.reset();
        lock.packages[0].rootlock.reset();
        Json bom = parse(cyclonedx_sbom(lock, "demo", k_image_sha));
        CHECK_FALSE(bom["metadata"].contains("timestamp"));
        CHECK_FALSE(bom["metadata"]["component"].contains("properties"));
        REQUIRE(bom["components"].size() == 2);
        CHECK(bom["components"][0]["name"] == "numpy");
        CHECK(bom["components"][1]["name"] == "torch");
        CHECK_FALSE(bom["components"][1].contains("properties"));
        CHECK(bom["dependencies"][0] ==
              Json::parse(R"({"ref": "image", "dependsOn": ["pkg:pypi/numpy@2.1.0",
                              "pkg:pypi/torch@2.8.0%2Bcu128"]})"));
    }

    TEST_CASE("a Debian base is named debian with its suite and parameters") {
        pylock::Lock lock = small_lock();
        pylock::LockBase base;
        base.kind = "debian";
        base.suite = "bookworm";
        base.mirror = "http://deb.debian.org/debian";
        base.variant = "minbase";
        base.include = {"python3", "ca-certificates"};
        base.sha256 = k_sha_c;
        lock.rootlock->base = base;
        Json component = parse(cyclonedx_sbom(lock, "demo", k_image_sha))["components"][0];
        CHECK(component == Json::parse(R"({
            "type": "operating-system", "bom-ref": "base", "name": "debian",
            "version": "bookworm",
            "hashes": [{"alg": "SHA-256", "content": ")" +
                                       k_sha_c + R"("}],
            "properties": [
              {"name": "rootlock:base-kind", "value": "debian"},
              {"name": "rootlock:debian-mirror", "value": "http://deb.debian.org/debian"},
              {"name": "rootlock:debian-variant", "value": "minbase"},
              {"name": "rootlock:debian-include", "value": "ca-certificates"},
              {"name": "rootlock:debian-include", "value": "python3"}]})"));
    }

    TEST_CASE("a local tarball base is named by its file and keeps its path") {
        pylock::Lock lock = small_lock();
        lock.rootlock->base.url.clear();
        lock.rootlock->base.path = "bases/local.tar";
        Json component = parse(cyclonedx_sbom(lock, "demo", k_image_sha))["components"][0];
        CHECK(component["name"] == "local.tar");
        CHECK_FALSE(component.contains("externalReferences"));
        CHECK(component["properties"][1] ==
              Json::parse(R"({"name": "rootlock:base-path", "value": "bases/local.tar"})"));
    }

    TEST_CASE("hashes CycloneDX cannot name or that are malformed are left out") {
        pylock::Lock lock = small_lock();
        auto& hashes = lock.packages[0].wheels[0].hashes;  // torch
        hashes.clear();
        hashes["sha256"] = "xyz";
        hashes["sha512"] = std::string(128, 'D');
        hashes["crc32"] = "00000000";
        Json bom = parse(cyclonedx_sbom(lock, "demo", "not-a-digest"));
        CHECK_FALSE(bom["metadata"]["component"].contains("hashes"));
        CHECK(bom["components"][2]["hashes"] == Json::parse(R"([{"alg": "SHA-512", "content": ")" +
                                                            std::string(128, 'd') + R"("}])"));
    }

    TEST_CASE("a package with several wheels has one reference per wheel URL") {
        pylock::Lock lock = small_lock();
        pylock::LockWheel second = lock.packages[1].wheels[0];  // numpy
        second.url = "https://files.example/numpy-2.1.0-cp311-manylinux.whl";
        second.hashes["sha256"] = k_sha_c;
        pylock::LockWheel local = second;
        local.url.clear();
        local.path = "wheels/numpy.whl";
        lock.packages[1].wheels.push_back(second);
        lock.packages[1].wheels.push_back(local);
        Json numpy = parse(cyclonedx_sbom(lock, "demo", k_image_sha))["components"][1];
        CHECK(numpy["name"] == "numpy");
        CHECK_FALSE(numpy.contains("hashes"));
        REQUIRE(numpy["externalReferences"].size() == 2);
        CHECK(numpy["externalReferences"][1]["url"] == second.url);
        CHECK(numpy["externalReferences"][1]["hashes"][0]["content"] == k_sha_c);
    }

    TEST_CASE("bom-refs stay unique when a lock lists one version twice") {
        pylock::Lock lock = small_lock();
        pylock::LockPackage again = lock.packages[1];  // numpy 2.1.0
        again.marker = "sys_platform == \"win32\"";
        lock.packages.push_back(again);
        lock.packages[0].dependencies = {{"numpy", "2.1.0"}};
        Json bom = parse(cyclonedx_sbom(lock, "demo", k_image_sha));
        REQUIRE(bom["components"].size() == 4);
        CHECK(bom["components"][1]["bom-ref"] == "pkg:pypi/numpy@2.1.0");
        CHECK(bom["components"][2]["bom-ref"] == "pkg:pypi/numpy@2.1.0?rootlock-entry=2");
        CHECK(bom["components"][2]["purl"] == "pkg:pypi/numpy@2.1.0");
        CHECK(bom["dependencies"][3]["dependsOn"] ==
              Json::parse(R"(["pkg:pypi/numpy@2.1.0", "pkg:pypi/numpy@2.1.0?rootlock-entry=2"])"));
    }

    TEST_CASE("a dependency pinned to a version not in the lock is left out") {
        pylock::Lock lock = small_lock();
        lock.packages[0].dependencies = {{"numpy", "1.0"}, {"absent", std::nullopt}};
        Json bom = parse(cyclonedx_sbom(lock, "demo", k_image_sha));
        CHECK(bom["dependencies"][2]["ref"] == "pkg:pypi/torch@2.8.0%2Bcu128");
        CHECK(bom["dependencies"][2]["dependsOn"] == Json::array());
    }

    TEST_CASE("bytes that are not UTF-8 are replaced rather than thrown on") {
        std::string sbom = cyclonedx_sbom(small_lock(), "bad\xff", k_image_sha);
        CHECK(parse(sbom)["metadata"]["component"]["name"] == "bad\xef\xbf\xbd");
        CHECK(sbom.back() == '\n');
    }

    TEST_CASE("a Debian package's purl follows the deb type: version encoded, arch and distro") {
        CHECK(deb_purl("libc6", "2.36-9+deb12u13", "amd64", "bookworm") ==
              "pkg:deb/debian/libc6@2.36-9%2Bdeb12u13?arch=amd64&distro=debian-12");
        CHECK(deb_purl("tzdata", "2025b-0+deb12u1", "all", "bookworm-updates") ==
              "pkg:deb/debian/tzdata@2025b-0%2Bdeb12u1?arch=all&distro=debian-12");
        CHECK(deb_purl("libx", "1:2.0~rc1-1", "arm64", "trixie") ==
              "pkg:deb/debian/libx@1%3A2.0~rc1-1?arch=arm64&distro=debian-13");
    }

    TEST_CASE("every locked .deb is a component with its purl and hash, and the base needs each") {
        pylock::Lock lock;
        pylock::LockRootlockData data;
        data.base.kind = "debian";
        data.base.suite = "bookworm";
        data.base.archives = {{"debian",
                               "http://deb.debian.org/debian",
                               "bookworm",
                               {"main"},
                               "1762077600",
                               "",
                               "",
                               ""}};
        data.base.debs = {{"libc6", "2.36-9+deb12u13", "amd64", "debian", "main",
                           "pool/main/g/glibc/libc6_2.36-9+deb12u13_amd64.deb", 2757936,
                           std::string(64, 'a'), "glibc", ""}};
        lock.rootlock = data;
        const Json bom = Json::parse(cyclonedx_sbom(lock, "demo", ""));
        const std::string purl =
            "pkg:deb/debian/libc6@2.36-9%2Bdeb12u13?arch=amd64&distro=debian-12";
        REQUIRE(bom["components"].size() == 2);
        const Json& deb = bom["components"][1];
        CHECK(deb["purl"] == purl);
        CHECK(deb["bom-ref"] == purl);
        CHECK(deb["hashes"][0]["content"] == std::string(64, 'a'));
        CHECK(deb["externalReferences"][0]["url"] ==
              "http://deb.debian.org/debian/pool/main/g/glibc/libc6_2.36-9+deb12u13_amd64.deb");
        CHECK(deb["properties"][1]["value"] == "glibc 2.36-9+deb12u13");
        bool base_needs_it = false;
        for (const auto& dependency : bom["dependencies"]) {
            if (dependency["ref"] == "base")
                base_needs_it = dependency["dependsOn"] == Json::array({purl});
        }
        CHECK(base_needs_it);
    }
}
