// The registry module's text formats, each against a table of good and malformed inputs: image
// references (distribution's grammar), WWW-Authenticate challenges, auth files, and base64.
#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

#include "registry/auth_challenge.hpp"
#include "registry/credentials.hpp"
#include "registry/image_reference.hpp"
#include "support/temp_dir.hpp"
#include "util/hex.hpp"
#include "util/quote.hpp"

using namespace rootlock;
using rootlock::registry::parse_auth_challenge;
using rootlock::registry::parse_image_reference;

TEST_SUITE("rootlock::registry") {
    TEST_CASE("image references name the host, the repository, a tag or a digest") {
        struct Case {
            const char* text;
            const char* host;
            const char* name;
            const char* tag;
            const char* digest;
        };
        const std::string digest = "sha256:" + std::string(64, 'a');
        const std::vector<Case> cases = {
            {"127.0.0.1:5000/demo", "127.0.0.1:5000", "demo", "latest", ""},
            {"docker://127.0.0.1:5000/team/train-cu130:v2", "127.0.0.1:5000", "team/train-cu130",
             "v2", ""},
            {"localhost/a/b/c:1.0_rc-1", "localhost", "a/b/c", "1.0_rc-1", ""},
            {"registry.example.org/x__y.z--w", "registry.example.org", "x__y.z--w", "latest", ""},
            {"[::1]:5000/demo:t", "[::1]:5000", "demo", "t", ""},
        };
        for (const auto& c : cases) {
            CAPTURE(c.text);
            auto ref = parse_image_reference(c.text);
            REQUIRE(ref.ok());
            CHECK(ref->host == c.host);
            CHECK(ref->name == c.name);
            CHECK(ref->tag == c.tag);
            CHECK(ref->digest == c.digest);
        }
        auto pinned = parse_image_reference("127.0.0.1:5000/demo:v1@" + digest);
        REQUIRE(pinned.ok());
        CHECK(pinned->tag == "v1");
        CHECK(pinned->digest == digest);
        CHECK(pinned->text() == "127.0.0.1:5000/demo@" + digest);
        CHECK(parse_image_reference("h.org/a/b")->text() == "h.org/a/b:latest");
    }

    TEST_CASE("a malformed reference is one line saying what to change") {
        const std::vector<std::pair<std::string, std::string>> cases = {
            {"", "empty"},
            {"demo", "name the registry first"},
            {"team/demo:1", "name the registry first"},
            {"127.0.0.1:5000/", "no repository name"},
            {"127.0.0.1:5000/Demo", "lowercase"},
            {"127.0.0.1:5000/a//b", "name component"},
            {"127.0.0.1:5000/a-", "name component"},
            {"127.0.0.1:5000/a:", "the tag"},
            {"127.0.0.1:5000/a:.x", "the tag"},
            {"127.0.0.1:5000/a:" + std::string(129, 't'), "the tag"},
            {"127.0.0.1:5000/a@sha256:abc", "digest"},
            {"127.0.0.1:5000/a@md5:" + std::string(32, 'a'), "digest"},
            {"127.0.0.1:/a", "host[:port]"},
            {"127.0.0.1:50000000/a", "host[:port]"},
            {"bad_host.org/a", "host[:port]"},
            {"h.org/" + std::string(256, 'a'), "longer than 255"},
            {"h.org/a\n:b", "name component"},
            {std::string("h.org/a\x1b[31m"), "name component"},
        };
        for (const auto& [text, expected] : cases) {
            CAPTURE(text);
            auto ref = parse_image_reference(text);
            REQUIRE_FALSE(ref.ok());
            CHECK(ref.error().text().find(expected) != std::string::npos);
            CHECK(util::is_one_line(ref.error().text()));
        }
    }

    TEST_CASE("challenges: the scheme and its parameters, quoted or not") {
        auto bearer = parse_auth_challenge(
            R"(Bearer realm="https://auth.example/token",service="registry.example",)"
            R"(scope="repository:team/app:pull,push")");
        REQUIRE(bearer.ok());
        CHECK(bearer->scheme == "bearer");
        CHECK(bearer->param("realm") == "https://auth.example/token");
        CHECK(bearer->param("service") == "registry.example");
        CHECK(bearer->param("scope") == "repository:team/app:pull,push");
        auto basic = parse_auth_challenge(R"(Basic realm="Registry \"Realm\"")");
        REQUIRE(basic.ok());
        CHECK(basic->scheme == "basic");
        CHECK(basic->param("realm") == "Registry \"Realm\"");
        auto tokens = parse_auth_challenge("BEARER Realm=http://h:1/t , Service=s");
        REQUIRE(tokens.ok());
        CHECK(tokens->param("realm") == "http://h:1/t");
        CHECK(tokens->param("service") == "s");
        auto two = parse_auth_challenge(R"(Basic realm="a", Bearer realm="b")");
        REQUIRE(two.ok());
        CHECK(two->scheme == "basic");
        CHECK(two->param("realm") == "a");
        CHECK(parse_auth_challenge("Negotiate")->params.empty());
    }

    TEST_CASE("a malformed challenge is one line") {
        const std::vector<std::pair<std::string, std::string>> cases = {
            {"", "no authentication scheme"},
            {"  ", "no authentication scheme"},
            {"=x", "no authentication scheme"},
            {"Bearer realm", "has no '='"},
            {"Bearer realm=", "has no value"},
            {"Bearer realm=\"open", "is not closed"},
            {"Bearer realm=\"a\" service=\"b\"", "a ',' was expected"},
            {"Bearer realm=\"a\",=b", "a parameter name was expected"},
            {"Bearer realm=\"a\x01\n\"x", "a ',' was expected"},
        };
        for (const auto& [text, expected] : cases) {
            CAPTURE(text);
            auto parsed = parse_auth_challenge(text);
            REQUIRE_FALSE(parsed.ok());
            CHECK(parsed.error().text().find(expected) != std::string::npos);
            CHECK(util::is_one_line(parsed.error().text()));
        }
    }

    TEST_CASE("base64 round-trips and refuses what no encoder writes") {
        for (std::string text : {"", "f", "fo", "foo", "foob", "fooba", "foobar", "u:p\xff"}) {
            CAPTURE(text);
            auto encoded = util::to_base64(text);
            CHECK(util::from_base64(encoded) == text);
        }
        CHECK(util::to_base64("user:pass") == "dXNlcjpwYXNz");
        CHECK(util::from_base64("dXNlcjpwYXNz") == "user:pass");
        CHECK(util::from_base64("Zm9vYg") == "foob");  // unpadded
        CHECK_FALSE(util::from_base64("Zm9vY").has_value());
        CHECK_FALSE(util::from_base64("Zm9v!g==").has_value());
        CHECK_FALSE(util::from_base64("Zm=vYg==").has_value());
    }

    TEST_CASE("auth files: the most specific key wins; URL keys and helper entries") {
        const std::string auth = util::to_base64("alice:secret");
        const std::string text = R"({"auths": {
            "https://127.0.0.1:5000/v1/": {"auth": ")" +
                                 util::to_base64("host:wide") + R"("},
            "127.0.0.1:5000/team": {"auth": ")" +
                                 auth + R"("},
            "127.0.0.1:6000": {},
            "127.0.0.1:7000": {"username": "bob", "password": "pw", "identitytoken": "tok"}
        }, "credsStore": "secretservice"})";
        auto team =
            registry::credentials_from_auth_json(text, "auth.json", "127.0.0.1:5000", "team/app");
        REQUIRE(team.ok());
        REQUIRE(team->has_value());
        CHECK((*team)->username == "alice");
        CHECK((*team)->password == "secret");
        CHECK((*team)->source == "auth.json");
        auto other =
            registry::credentials_from_auth_json(text, "auth.json", "127.0.0.1:5000", "other");
        REQUIRE(other.ok());
        CHECK((*other)->username == "host");
        auto helper_only =
            registry::credentials_from_auth_json(text, "auth.json", "127.0.0.1:6000", "x");
        REQUIRE(helper_only.ok());
        CHECK_FALSE(helper_only->has_value());
        auto fields =
            registry::credentials_from_auth_json(text, "auth.json", "127.0.0.1:7000", "x");
        REQUIRE(fields.ok());
        CHECK((*fields)->username == "bob");
        CHECK((*fields)->identity_token == "tok");
        auto none =
            registry::credentials_from_auth_json(R"({"credHelpers": {}})", "c.json", "h.org", "x");
        REQUIRE(none.ok());
        CHECK_FALSE(none->has_value());
    }

    TEST_CASE("a malformed auth file is one line naming the file and the key") {
        const std::vector<std::pair<std::string, std::string>> cases = {
            {"", "c.json: not a JSON object"},
            {"[]", "c.json: not a JSON object"},
            {R"({"auths": []})", "\"auths\" is not an object"},
            {R"({"auths": {"h.org": []}})", "c.json: auths.h.org: is not an object"},
            {R"({"auths": {"h.org": {"auth": 7}}})", "auth is not a string"},
            {R"({"auths": {"h.org": {"auth": "!!"}}})", "not the base64"},
            {R"({"auths": {"h.org": {"auth": "bm9jb2xvbg=="}}})", "not the base64"},
        };
        for (const auto& [text, expected] : cases) {
            CAPTURE(text);
            auto found = registry::credentials_from_auth_json(text, "c.json", "h.org", "x");
            REQUIRE_FALSE(found.ok());
            CHECK(found.error().text().find(expected) != std::string::npos);
            CHECK(util::is_one_line(found.error().text()));
        }
    }

    TEST_CASE("credential sources: the environment first, a named file must exist") {
        testing::TempDir tmp;
        std::string file = tmp.write_file("auth.json", R"({"auths": {"h.org": {"auth": ")" +
                                                           util::to_base64("file:pw") + R"("}}})");
        registry::CredentialSources sources;
        sources.authfile = file;
        auto from_file = registry::find_credentials(sources, "h.org", "x");
        REQUIRE(from_file.ok());
        CHECK((*from_file)->username == "file");
        sources.env_username = "env";
        sources.env_password = "pw";
        auto from_env = registry::find_credentials(sources, "h.org", "x");
        CHECK((*from_env)->username == "env");
        registry::CredentialSources missing;
        missing.authfile = tmp / "nope.json";
        CHECK_FALSE(registry::find_credentials(missing, "h.org", "x").ok());
        registry::CredentialSources optional;
        optional.optional_files = {tmp / "nope.json", file};
        auto second = registry::find_credentials(optional, "h.org", "x");
        REQUIRE(second.ok());
        CHECK((*second)->username == "file");
        CHECK_FALSE(registry::find_credentials(optional, "other.org", "x")->has_value());
    }
}
