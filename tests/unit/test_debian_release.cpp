// Unit tests for Release files: a Debian 12 InRelease body as the archive publishes it, the
// SHA256 section, RFC 2822 dates and snapshot timestamps, and every malformed form's error.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>

#include "debian/release.hpp"

namespace ROOTLOCK_UNIT_ID {

using rootlock::debian::parse_release;
using rootlock::debian::parse_release_date;
using rootlock::debian::Release;
using rootlock::debian::snapshot_timestamp;

namespace {

const std::string k_name = "Release";

const std::string k_sha_contents =
    "3e23a0ec0a9127477a812daecea86f9b154589295016d995c641cb79ba0c7eb3";
const std::string k_sha_packages =
    "a5fcac504951e1ad698631619f02a0e9575cdfc64226106c3083986c5bc80b84";

// The text that InRelease signs, laid out as ftp-master writes it (sizes right-aligned).
const std::string k_bookworm =
    "Origin: Debian\n"
    "Label: Debian\n"
    "Suite: oldstable\n"
    "Version: 12.12\n"
    "Codename: bookworm\n"
    "Changelogs: https://metadata.ftp-master.debian.org/changelogs/@CHANGEPATH@_changelog\n"
    "Date: Sat, 06 Sep 2025 09:43:43 UTC\n"
    "Acquire-By-Hash: yes\n"
    "No-Support-for-Architecture-all: Packages\n"
    "Architectures: all amd64 arm64 armel armhf i386 mips64el mipsel ppc64el s390x\n"
    "Components: main contrib non-free-firmware non-free\n"
    "Description: Debian 12.12 Released 06 September 2025\n"
    "MD5Sum:\n"
    " b4701a4bb8ef3d4eb41516538a84e938  1484322 contrib/Contents-all\n"
    " 0d3a31af2bf9ab78412cbc774364ed6c 45565981 main/binary-amd64/Packages\n"
    " 5ce3dd986801657a384bb130eb44afda 11450912 main/binary-amd64/Packages.gz\n"
    "SHA256:\n"
    " 3e23a0ec0a9127477a812daecea86f9b154589295016d995c641cb79ba0c7eb3   1484322 "
    "contrib/Contents-all\n"
    " a5fcac504951e1ad698631619f02a0e9575cdfc64226106c3083986c5bc80b84  45565981 "
    "main/binary-amd64/Packages\n"
    " 57b3a6c520d45562eb6686875805c4b47cc90a72dfcc5d09e2535fbf3eb58847  11450912 "
    "main/binary-amd64/Packages.gz\n"
    " cc1bc17965c91fb1034bd334d1ff78b081c4539b986e987d407305a3061b8f2e   8792320 "
    "main/binary-amd64/Packages.xz\n"
    " 65b987a25b0fa24fe635748c3a7c5ad582c04d18c742afadfe8f87944a56e690       113 "
    "main/binary-amd64/Release\n"
    " 6088e2068b235c5213fcb06fd7ad7136812ff5c4c8fff4f6ebc88d6e350857e2   6112370 "
    "main/i18n/Translation-en.bz2\n";

// A minimal Release with `extra` fields inserted before its one-line SHA256 section.
std::string minimal(const std::string& extra) {
    return "Suite: stable\nDate: Sat, 09 Nov 2024 10:13:41 UTC\n" + extra + "SHA256:\n " +
           k_sha_packages + " 10 main/binary-amd64/Packages\n";
}

}  // namespace

TEST_SUITE("rootlock::debian") {
    TEST_CASE("a Debian 12 InRelease body gives its identity, offer and SHA256 files") {
        auto parsed = parse_release(k_bookworm, k_name);
        REQUIRE(parsed.ok());
        const Release& release = parsed.value();
        CHECK(release.origin == "Debian");
        CHECK(release.label == "Debian");
        CHECK(release.suite == "oldstable");
        CHECK(release.codename == "bookworm");
        CHECK(release.version == "12.12");
        CHECK(release.date == "Sat, 06 Sep 2025 09:43:43 UTC");
        CHECK(release.valid_until.empty());
        CHECK(release.acquire_by_hash);
        REQUIRE(release.architectures.size() == 10);
        CHECK(release.architectures.front() == "all");
        CHECK(release.architectures[1] == "amd64");
        CHECK(release.architectures.back() == "s390x");
        const std::vector<std::string> components = {"main", "contrib", "non-free-firmware",
                                                     "non-free"};
        CHECK(release.components == components);
        REQUIRE(release.files.size() == 6);  // the MD5Sum section is not read
        CHECK(release.files[0].path == "contrib/Contents-all");
        CHECK(release.files[0].size == 1484322U);
        CHECK(release.files[0].sha256 == k_sha_contents);
        CHECK(release.files[4].path == "main/binary-amd64/Release");
        CHECK(release.files[4].size == 113U);
        const auto* packages = release.find("main/binary-amd64/Packages");
        REQUIRE(packages != nullptr);
        CHECK(packages->sha256 == k_sha_packages);
        CHECK(packages->size == 45565981U);
        CHECK(release.find("main/binary-arm64/Packages") == nullptr);
        CHECK(parse_release_date(release.date).value() == 1757151823);
    }

    TEST_CASE("a security Release with Valid-Until and only a Codename is accepted") {
        const std::string text =
            "Origin: Debian\n"
            "Label: Debian-Security\n"
            "Codename: bookworm-security\n"
            "Date: Sat, 09 Nov 2024 10:13:41 UTC\n"
            "Valid-Until: Sat, 16 Nov 2024 10:13:41 UTC\n"
            "Acquire-By-Hash: no\n"
            "SHA256:\n"
            " " +
            std::string(64, 'A') + " 0 updates/main/binary-amd64/Packages\n";
        auto parsed = parse_release(text, k_name);
        REQUIRE(parsed.ok());
        CHECK(parsed->suite.empty());
        CHECK(parsed->codename == "bookworm-security");
        CHECK(parsed->valid_until == "Sat, 16 Nov 2024 10:13:41 UTC");
        CHECK_FALSE(parsed->acquire_by_hash);
        CHECK(parsed->architectures.empty());
        REQUIRE(parsed->files.size() == 1);
        CHECK(parsed->files[0].sha256 == std::string(64, 'a'));  // stored in lowercase
        CHECK(parsed->files[0].size == 0U);
    }

    TEST_CASE("Release dates read as seconds since the epoch in every zone spelling") {
        struct Case {
            std::string text;
            int64_t seconds;
        };
        const Case cases[] = {
            {"Sat, 09 Nov 2024 10:13:41 UTC", 1731147221},
            {"Sat, 09 Nov 2024 10:13:41 +0000", 1731147221},
            {"Sat, 09 Nov 2024 10:13:41 GMT", 1731147221},
            {"Sat, 09 Nov 2024 10:13:41 Z", 1731147221},
            {"09 Nov 2024 10:13:41 UTC", 1731147221},
            {"Sat,  9 Nov 2024 10:13:41 UTC", 1731147221},
            {"Sat, 09 Nov 2024 10:13:41 +0130", 1731141821},
            {"Sat, 09 Nov 2024 08:43:41 -0130", 1731147221},
            {"Thu, 29 Feb 2024 23:59:59 UTC", 1709251199},
            {"Thu, 01 Jan 1970 00:00:00 UTC", 0},
            {"Wed, 31 Dec 1969 23:59:59 UTC", -1},
            {"Wed, 01 Mar 2000 00:00:00 UTC", 951868800},
            {"Tue, 19 Jan 2038 03:14:08 UTC", 2147483648},
            {"Mon, 01 Mar 2100 12:00:00 UTC", 4107585600},
        };
        for (const Case& c : cases) {
            CAPTURE(c.text);
            auto seconds = parse_release_date(c.text);
            REQUIRE(seconds.ok());
            CHECK(seconds.value() == c.seconds);
        }
    }

    TEST_CASE("snapshot timestamps are the UTC date and time in snapshot.debian.org's form") {
        CHECK(snapshot_timestamp(1731147221) == "20241109T101341Z");
        CHECK(snapshot_timestamp(0) == "19700101T000000Z");
        CHECK(snapshot_timestamp(-1) == "19691231T235959Z");
        CHECK(snapshot_timestamp(1709251199) == "20240229T235959Z");
        CHECK(snapshot_timestamp(4107585600) == "21000301T120000Z");
        CHECK(snapshot_timestamp(parse_release_date("Sat, 06 Sep 2025 09:43:43 UTC").value()) ==
              "20250906T094343Z");
    }

    TEST_CASE("malformed dates are refused with the text named") {
        const std::string k_like = ": not a date like \"Sat, 09 Nov 2024 10:13:41 UTC\"";
        const std::string texts[] = {
            "",
            "yesterday",
            "Sat, 09 Nov 2024 10:13:41",
            "Sat 09 Nov 2024 10:13:41 UTC",
            "Sun, 09 Nov 2024 10:13:41 UTC extra",
            "Xyz, 09 Nov 2024 10:13:41 UTC",
            "Sat, 32 Nov 2024 10:13:41 UTC",
            "Sat, 00 Nov 2024 10:13:41 UTC",
            "Sat, 31 Nov 2024 10:13:41 UTC",
            "Wed, 29 Feb 2023 10:13:41 UTC",
            "Sat, 09 nov 2024 10:13:41 UTC",
            "Sat, 09 Nov 24 10:13:41 UTC",
            "Sat, 009 Nov 2024 10:13:41 UTC",
            "Sat, 09 Nov 2024 24:00:00 UTC",
            "Sat, 09 Nov 2024 10:60:00 UTC",
            "Sat, 09 Nov 2024 10:13:61 UTC",
            "Sat, 09 Nov 2024 10:13 UTC",
            "Sat, 09 Nov 2024 1:13:41 UTC",
            "Sat, 09 Nov 2024 10-13-41 UTC",
            "Sat, 09 Nov 2024 10:13:41 EST",
            "Sat, 09 Nov 2024 10:13:41 +00:00",
            "Sat, 09 Nov 2024 10:13:41 +000a",
            "Sat, 09 Nov 2024 10:13:41 +0060",
            "Sat, -9 Nov 2024 10:13:41 UTC",
        };
        for (const std::string& text : texts) {
            CAPTURE(text);
            auto seconds = parse_release_date(text);
            REQUIRE_FALSE(seconds.ok());
            CHECK(seconds.error().text() == "\"" + text + "\"" + k_like);
        }
    }

    TEST_CASE("malformed Release files are rejected with the file and line") {
        struct Case {
            std::string text;
            std::string error;
        };
        const std::string e = k_name + ":";
        const std::string sha = k_sha_packages;
        const std::string date = "Date: Sat, 09 Nov 2024 10:13:41 UTC\n";
        const Case cases[] = {
            {"", k_name + ": no paragraph"},
            {"# only a comment\n", k_name + ": no paragraph"},
            {minimal("") + "\nSuite: again\n", e + "6: a second paragraph"},
            {"Origin: Debian\n" + date + "SHA256:\n " + sha + " 1 a\n",
             e + "1: no Suite or Codename"},
            {"Label: x\nSuite: stable\nSHA256:\n " + sha + " 1 a\n", e + "1: no Date"},
            {"Suite: stable\nDate: yesterday\nSHA256:\n " + sha + " 1 a\n",
             e + "2: Date \"yesterday\": not a date like \"Sat, 09 Nov 2024 10:13:41 UTC\""},
            {minimal("Valid-Until: Sat, 31 Nov 2024 10:13:41 UTC\n"),
             e + "3: Valid-Until \"Sat, 31 Nov 2024 10:13:41 UTC\": not a date like \"Sat, 09 "
                 "Nov 2024 10:13:41 UTC\""},
            {minimal("Acquire-By-Hash: maybe\n"),
             e + "3: Acquire-By-Hash \"maybe\" is neither yes nor no"},
            {"Suite: stable\n" + date + "MD5Sum:\n 0d3a31af2bf9ab78412cbc774364ed6c 1 a\n",
             e + "1: no SHA256 section"},
            {"Suite: stable\n" + date + "SHA256:\n", e + "3: an empty SHA256 section"},
            {"Suite: stable\n" + date + "SHA256:\n " + sha + " 1\n",
             e + "4: SHA256 line \"" + sha + " 1\": expected HASH SIZE PATH"},
            {"Suite: stable\n" + date + "SHA256:\n " + sha + " 1 a\n " + sha + " 1 b c\n",
             e + "5: SHA256 line \"" + sha + " 1 b c\": expected HASH SIZE PATH"},
            {"Suite: stable\n" + date + "SHA256:\n " + sha.substr(1) + " 1 a\n",
             e + "4: SHA256 line \"" + sha.substr(1) + " 1 a\": the hash is not 64 hex digits"},
            {"Suite: stable\n" + date + "SHA256:\n " + std::string(64, 'g') + " 1 a\n",
             e + "4: SHA256 line \"" + std::string(64, 'g') +
                 " 1 a\": the hash is not 64 hex digits"},
            {"Suite: stable\n" + date + "SHA256:\n " + sha + " -1 a\n",
             e + "4: SHA256 line \"" + sha + " -1 a\": the size is not a number"},
            {"Suite: stable\n" + date + "SHA256:\n " + sha + " 99999999999999999999 a\n",
             e + "4: SHA256 line \"" + sha + " 99999999999999999999 a\": the size is not a number"},
            {"Suite: stable\n" + date + "SHA256:\n " + sha + " 1 /etc/passwd\n",
             e + "4: SHA256 line \"" + sha + " 1 /etc/passwd\": the path is absolute"},
            {"Suite: stable\n" + date + "SHA256:\n " + sha + " 1 main/../../x\n",
             e + "4: SHA256 line \"" + sha + " 1 main/../../x\": the path has \"..\""},
            {"Suite: stable\n" + date + "SHA256:\n " + sha + " 1 a\n " + sha + " 2 a\n",
             e + "5: SHA256 line \"" + sha + " 2 a\": the path is listed twice"},
            {"Suite: stable\nDate: x\nDate: y\n", e + "3: \"Date\" appears twice in one paragraph"},
        };
        for (const Case& c : cases) {
            CAPTURE(c.text);
            auto parsed = parse_release(c.text, k_name);
            REQUIRE_FALSE(parsed.ok());
            CHECK(parsed.error().text() == c.error);
        }
    }

    TEST_CASE("a path merely containing dots is not a parent reference") {
        auto parsed =
            parse_release(minimal("") + " " + k_sha_contents + " 5 main/a..b/..c\n", k_name);
        REQUIRE(parsed.ok());
        CHECK(parsed->find("main/a..b/..c") != nullptr);
    }
}

}  // namespace ROOTLOCK_UNIT_ID
