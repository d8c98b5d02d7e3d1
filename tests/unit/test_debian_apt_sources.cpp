// apt's source entries, one-line and deb822, keys by path or written in the entry, flat
// repositories; every malformed .sources stanza is one located error. And armoured keys turned
// into the packets gpgv reads.
#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

#include "debian/apt_sources.hpp"
#include "debian/armor.hpp"
#include "util/hex.hpp"

using namespace rootlock;

namespace {

// A key block as gpg --export --armor writes it: a header, a blank line, base64 in 64-column
// lines and the CRC-24 line.
std::string armoured(const std::string& packets) {
    const std::string body = util::to_base64(packets);
    std::string out = "-----BEGIN PGP PUBLIC KEY BLOCK-----\nComment: test key\n\n";
    for (size_t at = 0; at < body.size(); at += 64)
        out += body.substr(at, 64) + "\n";
    return out + "=abcd\n-----END PGP PUBLIC KEY BLOCK-----\n";
}

const std::string k_packets = std::string("\x99\x01\x0d\x04", 4) + std::string(300, '\x42');

}  // namespace

TEST_SUITE("rootlock::debian") {
    TEST_CASE("deb822 sources: one entry per URI and suite; disabled and deb-src stanzas skipped") {
        auto parsed = debian::parse_deb822_sources(
            "# Debian's own container images write this\n"
            "Types: deb\n"
            "URIs: http://deb.debian.org/debian/ http://mirror.example/debian\n"
            "Suites: bookworm bookworm-updates\n"
            "Components: main contrib\n"
            "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n"
            "\n"
            "Types: deb-src\n"
            "URIs: http://deb.debian.org/debian\n"
            "Suites: bookworm\n"
            "Components: main\n"
            "\n"
            "Enabled: no\n"
            "Types: deb\n"
            "URIs: http://off.example\n"
            "Suites: x\n"
            "Components: main\n"
            "\n"
            "Types: deb deb-src\n"
            "URIs: https://cuda.example/repos/debian12/x86_64/\n"
            "Suites: /\n",
            "/etc/apt/sources.list.d/debian.sources");
        REQUIRE(parsed.ok());
        REQUIRE(parsed->size() == 5);
        CHECK((*parsed)[0].url == "http://deb.debian.org/debian");
        CHECK((*parsed)[0].suite == "bookworm");
        CHECK((*parsed)[1].suite == "bookworm-updates");
        CHECK((*parsed)[2].url == "http://mirror.example/debian");
        CHECK((*parsed)[0].components == std::vector<std::string>{"main", "contrib"});
        CHECK((*parsed)[0].signed_by == "/usr/share/keyrings/debian-archive-keyring.gpg");
        CHECK((*parsed)[0].from == "/etc/apt/sources.list.d/debian.sources:2");
        CHECK((*parsed)[4].suite == "/");
        CHECK((*parsed)[4].components.empty());
        CHECK((*parsed)[4].url == "https://cuda.example/repos/debian12/x86_64");
    }

    TEST_CASE("a key written in Signed-By is kept as text, fingerprints are not keyrings") {
        auto parsed = debian::parse_deb822_sources(
            "Types: deb\nURIs: https://v.example/apt\nSuites: stable\nComponents: main\n"
            "Signed-By:\n -----BEGIN PGP PUBLIC KEY BLOCK-----\n .\n mQINBF\n"
            " -----END PGP PUBLIC KEY BLOCK-----\n\n"
            "Types: deb\nURIs: https://w.example/apt\nSuites: stable\nComponents: main\n"
            "Signed-By: 0123456789ABCDEF0123456789ABCDEF01234567 /etc/apt/keyrings/w.asc\n",
            "v.sources");
        REQUIRE(parsed.ok());
        REQUIRE(parsed->size() == 2);
        CHECK((*parsed)[0].signed_by.empty());
        CHECK((*parsed)[0].signed_by_key.find("-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nmQINBF\n") !=
              std::string::npos);
        CHECK((*parsed)[1].signed_by == "/etc/apt/keyrings/w.asc");
        CHECK((*parsed)[1].signed_by_key.empty());
    }

    TEST_CASE("malformed deb822 sources are one located error each") {
        const std::vector<std::pair<std::string, std::string>> cases{
            {"URIs: http://a\nSuites: s\nComponents: main\n",
             "x.sources:1: a stanza without Types"},
            {"Types: deb\nSuites: s\nComponents: main\n", "x.sources:1: a stanza without URIs"},
            {"Types: deb\nURIs: http://a\nComponents: main\n",
             "x.sources:1: a stanza without Suites"},
            {"Types: deb\nURIs: http://a\nSuites: s\n", "x.sources:1: a stanza without Components"},
            {"\nTypes: deb\nURIs: http://a\nSuites: ./\nComponents: main\n",
             "x.sources:2: Components given for the flat suite \"./\""},
            {" continued\nTypes: deb\n", "x.sources:1: a continuation line before any field"},
            {"Types deb\n", "x.sources:1: a line without ':'"},
            {"Types: deb\nURIs: ///\nSuites: s\nComponents: main\n",
             "x.sources:1: a URI of slashes only"},
        };
        for (const auto& [text, message] : cases) {
            CAPTURE(text);
            auto parsed = debian::parse_deb822_sources(text, "x.sources");
            REQUIRE_FALSE(parsed.ok());
            CHECK(parsed.error().text() == message);
        }
    }

    TEST_CASE("armoured keys become their packets; other bytes pass unchanged") {
        auto one = debian::dearmor_key(armoured(k_packets), "k.asc");
        REQUIRE(one.ok());
        CHECK(*one == k_packets);
        auto two = debian::dearmor_key(armoured(k_packets) + armoured("\x98\x33"), "k.asc");
        REQUIRE(two.ok());
        CHECK(*two == k_packets + "\x98\x33");
        // As a deb822 Signed-By field gives it: no header, the blank line a " ." line.
        auto inline_key = debian::dearmor_key("\n-----BEGIN PGP PUBLIC KEY BLOCK-----\n\n" +
                                                  util::to_base64(k_packets) +
                                                  "\n-----END PGP PUBLIC KEY BLOCK-----\n",
                                              "v.sources:1");
        REQUIRE(inline_key.ok());
        CHECK(*inline_key == k_packets);
        auto binary = debian::dearmor_key(k_packets, "k.gpg");
        REQUIRE(binary.ok());
        CHECK(*binary == k_packets);
    }

    TEST_CASE("malformed armour is one located error") {
        const std::string begin = "-----BEGIN PGP PUBLIC KEY BLOCK-----\n\n";
        const std::string end = "-----END PGP PUBLIC KEY BLOCK-----\n";
        const std::vector<std::pair<std::string, std::string>> cases{
            {begin + "mQINBF\n", "k.asc: an armoured key block without its END line"},
            {begin + "m!QINBF\n" + end, "k.asc: an armoured key block whose body is not base64"},
            {begin + end, "k.asc: an armoured key block with no key in it"},
        };
        for (const auto& [text, message] : cases) {
            CAPTURE(text);
            auto packets = debian::dearmor_key(text, "k.asc");
            REQUIRE_FALSE(packets.ok());
            CHECK(packets.error().text() == message);
        }
    }
}
