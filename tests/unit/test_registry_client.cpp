// The HTTP client's send() and the registry client over a real loopback server scripted as a
// registry: request methods and bodies, the bearer and basic challenges, refused credentials,
// monolithic and chunked uploads, a chunk that fails and resumes, a session that is restarted,
// and a manifest whose digest the registry contradicts.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "index/http_client.hpp"
#include "oci/oci_documents.hpp"
#include "registry/registry_client.hpp"
#include "support/loopback_server.hpp"
#include "support/temp_dir.hpp"
#include "util/hex.hpp"

using namespace rootlock;
using rootlock::testing::LoopbackServer;
using rootlock::testing::Route;
using rootlock::testing::TempDir;

namespace {

Route answer(int status, std::vector<std::pair<std::string, std::string>> headers = {},
             std::string body = "") {
    Route route;
    route.status = status;
    route.headers = std::move(headers);
    route.body = std::move(body);
    return route;
}

registry::ImageReference demo_reference(const LoopbackServer& server) {
    return registry::ImageReference{"127.0.0.1:" + std::to_string(server.port()), "demo", "v1", ""};
}

registry::RegistryOptions plain_options() {
    registry::RegistryOptions options;
    options.insecure = true;
    options.backoff_initial_ms = 1;
    options.credentials = registry::Credentials{"alice", "secret", "", "test.json"};
    return options;
}

const std::string k_basic = "Basic " + util::to_base64("alice:secret");

}  // namespace

TEST_SUITE("rootlock::registry") {
    TEST_CASE("send: methods, request bodies from memory and from a file range, statuses") {
        LoopbackServer server;
        server.route("PUT /put", answer(201, {{"Location", "/next"}}));
        server.route("PATCH /put", answer(202));
        server.route("HEAD /put", answer(200, {}, "twelve bytes"));
        server.route("/busy", answer(503));
        TempDir tmp;
        std::string file = tmp.write_file("blob", "0123456789abcdef");
        index::HttpClient client(testing::loopback_http_options(2));

        index::SendRequest put;
        put.method = "PUT";
        put.url = server.url("/put");
        put.body_file = file;
        put.body_offset = 4;
        put.body_length = 6;
        uint64_t reported = 0;
        put.on_sent = [&](uint64_t sent) { reported = sent; };
        auto stored = client.send(put);
        REQUIRE(stored.ok());
        CHECK(stored->status == 201);
        CHECK(stored->headers.at("location") == "/next");
        CHECK(reported == 6);
        index::SendRequest patch;
        patch.method = "PATCH";
        patch.url = server.url("/put");
        patch.body = "in memory";
        CHECK(client.send(patch)->status == 202);
        index::SendRequest head;
        head.method = "HEAD";
        head.url = server.url("/put");
        auto headed = client.send(head);
        CHECK(headed->status == 200);
        CHECK(headed->body.empty());
        auto seen = server.requests_for("/put");
        REQUIRE(seen.size() == 3);
        CHECK(seen[0].method == "PUT");
        CHECK(seen[0].body == "456789");
        CHECK(seen[1].method == "PATCH");
        CHECK(seen[1].body == "in memory");
        CHECK(seen[2].method == "HEAD");

        // Retried, a 503 is an error at the end; not retried, it is the caller's response.
        index::SendRequest busy;
        busy.url = server.url("/busy");
        CHECK_FALSE(client.send(busy).ok());
        CHECK(server.requests_for("/busy").size() == 3);
        busy.retry = false;
        auto once = client.send(busy);
        REQUIRE(once.ok());
        CHECK(once->status == 503);
        CHECK(server.requests_for("/busy").size() == 4);
    }

    TEST_CASE("a bearer challenge gets a token from its realm with the basic credentials") {
        LoopbackServer server;
        Route v2 = answer(200);
        v2.require_authorization = "Bearer tok-1";
        v2.challenge = "Bearer realm=\"" + server.url("/token") + "\",service=\"test-registry\"";
        server.route("/v2/", v2);
        Route token = answer(200, {}, R"({"token": "tok-1"})");
        token.require_authorization = k_basic;
        server.route("/token", token);
        Route head = answer(404);
        head.require_authorization = "Bearer tok-1";
        server.route("/v2/demo/blobs/sha256:" + std::string(64, 'a'), head);
        index::HttpClient http(testing::loopback_http_options(1));
        registry::RegistryClient client(http, demo_reference(server), plain_options());
        REQUIRE(client.ping().ok());
        oci::Descriptor blob;
        blob.media_type = oci::k_media_layer_gzip;
        blob.digest = "sha256:" + std::string(64, 'a');
        blob.size = 3;
        auto present = client.has_blob(blob);
        REQUIRE(present.ok());
        CHECK_FALSE(*present);
        auto asked = server.requests_for("/token");
        REQUIRE(asked.size() == 1);
        CHECK(asked[0].target ==
              "/token?service=test-registry&scope=repository%3Ademo%3Apull%2Cpush");
    }

    TEST_CASE("an identity token is traded for an access token by the OAuth2 form") {
        LoopbackServer server;
        Route v2 = answer(200);
        v2.require_authorization = "Bearer from-refresh";
        v2.challenge = "Bearer realm=\"" + server.url("/token") + "\",service=\"reg\"";
        server.route("/v2/", v2);
        server.route("POST /token", answer(200, {}, R"({"access_token": "from-refresh"})"));
        index::HttpClient http(testing::loopback_http_options(1));
        auto options = plain_options();
        options.credentials = registry::Credentials{"", "", "refresh-me", "config.json"};
        registry::RegistryClient client(http, demo_reference(server), options);
        REQUIRE(client.ping().ok());
        auto asked = server.requests_for("/token");
        REQUIRE(asked.size() == 1);
        CHECK(asked[0].method == "POST");
        CHECK(asked[0].header("content-type") == "application/x-www-form-urlencoded");
        CHECK(asked[0].body ==
              "service=reg&scope=repository%3Ademo%3Apull%2Cpush&grant_type=refresh_token"
              "&client_id=rootlock&refresh_token=refresh-me");
    }

    TEST_CASE("refused or missing credentials are one network error naming where they came from") {
        LoopbackServer server;
        Route v2 = answer(200);
        v2.require_authorization = "Basic " + util::to_base64("alice:right");
        server.route("/v2/", v2);
        index::HttpClient http(testing::loopback_http_options(1));
        registry::RegistryClient wrong(http, demo_reference(server), plain_options());
        auto refused = wrong.ping();
        REQUIRE_FALSE(refused.ok());
        CHECK(refused.error().kind == util::ErrorKind::network);
        CHECK(refused.error().text().find("refused the credentials from test.json (HTTP 401)") !=
              std::string::npos);
        auto anonymous_options = plain_options();
        anonymous_options.credentials.reset();
        registry::RegistryClient anonymous(http, demo_reference(server), anonymous_options);
        auto missing = anonymous.ping();
        REQUIRE_FALSE(missing.ok());
        CHECK(missing.error().text().find("none were found") != std::string::npos);
    }

    TEST_CASE("a small blob goes in one PUT; a dropped PUT starts a new session") {
        LoopbackServer server;
        TempDir tmp;
        const std::string bytes = "layer bytes";
        std::string file = tmp.write_file("blob", "xx" + bytes);
        oci::Descriptor blob = oci::describe(oci::k_media_layer_gzip, bytes);
        server.route("/v2/", answer(200));
        server.route("POST /v2/demo/blobs/uploads/",
                     answer(202, {{"Location", "/v2/demo/blobs/uploads/u1?_state=s"}}));
        Route put = answer(201, {{"Docker-Content-Digest", blob.digest}});
        put.drop_first = 1;
        put.body = "created";
        server.route("PUT /v2/demo/blobs/uploads/u1", put);
        index::HttpClient http(testing::loopback_http_options(0));
        registry::RegistryClient client(http, demo_reference(server), plain_options());
        REQUIRE(client.ping().ok());
        auto uploaded = client.upload_blob(blob, {file, 2, bytes.size()}, nullptr);
        REQUIRE(uploaded.ok());
        auto puts = server.requests_for("/v2/demo/blobs/uploads/u1");
        REQUIRE(puts.size() == 2);
        CHECK(puts[1].target == "/v2/demo/blobs/uploads/u1?_state=s&digest=" + blob.digest);
        CHECK(puts[1].body == bytes);
        CHECK(server.requests_for("/v2/demo/blobs/uploads/").size() == 2);
    }

    TEST_CASE("a big blob goes in chunks; a failed chunk resumes from the registry's range") {
        LoopbackServer server;
        TempDir tmp;
        const std::string bytes = "0123456789";
        std::string file = tmp.write_file("blob", bytes);
        oci::Descriptor blob = oci::describe(oci::k_media_layer_gzip, bytes);
        server.route("POST /v2/demo/blobs/uploads/",
                     answer(202, {{"Location", "/v2/demo/blobs/uploads/u2"}}));
        Route patch = answer(202, {{"Location", "/v2/demo/blobs/uploads/u2"}});
        patch.fail_first = 1;
        server.route("PATCH /v2/demo/blobs/uploads/u2", patch);
        server.route("GET /v2/demo/blobs/uploads/u2", answer(204, {{"Range", "0-0"}}));
        server.route("PUT /v2/demo/blobs/uploads/u2",
                     answer(201, {{"Docker-Content-Digest", blob.digest}}));
        index::HttpClient http(testing::loopback_http_options(0));
        auto options = plain_options();
        options.chunk_size = 4;
        registry::RegistryClient client(http, demo_reference(server), options);
        std::vector<uint64_t> progress;
        auto uploaded = client.upload_blob(blob, {file, 0, bytes.size()},
                                           [&](uint64_t sent) { progress.push_back(sent); });
        REQUIRE(uploaded.ok());
        std::vector<std::string> ranges;
        std::string received;
        auto seen = server.requests_for("/v2/demo/blobs/uploads/u2");
        for (size_t i = 1; i < seen.size(); ++i)
            if (seen[i].method == "PATCH") {
                ranges.push_back(seen[i].header("content-range"));
                received += seen[i].body;
            }
        CHECK(ranges == std::vector<std::string>{"0-3", "4-7", "8-9"});
        CHECK(received == bytes);
        CHECK(seen.front().method == "PATCH");  // the failed one
        CHECK(seen.back().method == "PUT");
        CHECK(seen.back().body.empty());
        CHECK(progress.back() == bytes.size());
    }

    TEST_CASE("a registry that stores a manifest under another digest is an error") {
        LoopbackServer server;
        server.route("/v2/demo/manifests/v1",
                     answer(201, {{"Docker-Content-Digest", "sha256:" + std::string(64, 'b')}}));
        index::HttpClient http(testing::loopback_http_options(0));
        registry::RegistryClient client(http, demo_reference(server), plain_options());
        auto put = client.put_manifest("v1", oci::k_media_manifest, "{}");
        REQUIRE_FALSE(put.ok());
        CHECK(put.error().text().find("stored the manifest") != std::string::npos);
        auto seen = server.requests_for("/v2/demo/manifests/v1");
        REQUIRE(seen.size() == 1);
        CHECK(seen[0].header("content-type") == oci::k_media_manifest);
        CHECK(seen[0].body == "{}");
    }
}
