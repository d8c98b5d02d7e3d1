// Unit tests for the HTTP client against a real loopback server: GETs, retries, redirects and
// their scheme limit, netrc, stalls, offline, redaction, and downloads into the content store
// (resume, digest and size checks, reuse of stored blobs, parallelism, progress).
#include <doctest/doctest.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include "index/content_store.hpp"
#include "index/http_client.hpp"
#include "support/loopback_server.hpp"
#include "support/temp_dir.hpp"
#include "util/sha256.hpp"

using rootlock::index::ContentStore;
using rootlock::index::FetchRequest;
using rootlock::index::HttpClient;
using rootlock::index::HttpOptions;
using rootlock::index::redact_url;
using rootlock::testing::LoopbackServer;
using rootlock::testing::Route;
using rootlock::testing::TempDir;
using rootlock::util::ErrorKind;
using rootlock::util::sha256_hex;

namespace {

HttpOptions test_options() {
    return rootlock::testing::loopback_http_options(3);
}

Route ok_route(std::string body) {
    Route route;
    route.body = std::move(body);
    return route;
}

}  // namespace

TEST_SUITE("rootlock::index") {
    TEST_CASE("redact_url drops user:password@ and nothing else") {
        CHECK(redact_url("https://u:p@host/simple/") == "https://host/simple/");
        CHECK(redact_url("https://token@host:8443/a?b=c") == "https://host:8443/a?b=c");
        CHECK(redact_url("https://a@b:c@host/x@y") == "https://host/x@y");
        CHECK(redact_url("https://host/path@x") == "https://host/path@x");
        CHECK(redact_url("http://host?q=a@b") == "http://host?q=a@b");
        CHECK(redact_url("not a url") == "not a url");
        CHECK(redact_url("") == "");
    }

    TEST_CASE("a GET returns status, body, lowercased headers and sends the request headers") {
        LoopbackServer server;
        Route route = ok_route("{\"files\": []}");
        route.headers = {{"Content-Type", "application/vnd.pypi.simple.v1+json"},
                         {"ETag", "\"v1\""},
                         {"X-Twice", "first"},
                         {"X-Twice", "second"}};
        server.route("/simple/numpy/", route);
        HttpClient client(test_options());
        FetchRequest request{server.url("/simple/numpy/"),
                             {{"Accept", "application/vnd.pypi.simple.v1+json"}}};
        auto response = client.get(request);
        REQUIRE(response.ok());
        CHECK(response->status == 200);
        CHECK(response->body == "{\"files\": []}");
        CHECK(response->headers.at("content-type") == "application/vnd.pypi.simple.v1+json");
        CHECK(response->headers.at("etag") == "\"v1\"");
        CHECK(response->headers.at("x-twice") == "second");
        CHECK(response->effective_url == server.url("/simple/numpy/"));
        auto seen = server.requests();
        REQUIRE(seen.size() == 1);
        CHECK(seen[0].method == "GET");
        CHECK(seen[0].header("accept") == "application/vnd.pypi.simple.v1+json");
        CHECK(seen[0].header("user-agent") == "rootlock/test");
        CHECK(client.requests_made() == 1U);
    }

    TEST_CASE("a 404 is returned to the caller, not retried") {
        LoopbackServer server;
        HttpClient client(test_options());
        auto response = client.get({server.url("/missing/"), {}});
        REQUIRE(response.ok());
        CHECK(response->status == 404);
        CHECK(server.requests().size() == 1U);
    }

    TEST_CASE("two 500s then a 200 succeeds, and the server saw three requests") {
        LoopbackServer server;
        Route route = ok_route("finally");
        route.fail_first = 2;
        server.route("/flaky", route);
        HttpClient client(test_options());
        auto response = client.get({server.url("/flaky"), {}});
        REQUIRE(response.ok());
        CHECK(response->status == 200);
        CHECK(response->body == "finally");
        CHECK(server.requests().size() == 3U);
        CHECK(client.requests_made() == 3U);
    }

    TEST_CASE("429 is retried like a 5xx") {
        LoopbackServer server;
        Route route = ok_route("ok");
        route.fail_first = 1;
        route.fail_status = 429;
        server.route("/busy", route);
        HttpClient client(test_options());
        auto response = client.get({server.url("/busy"), {}});
        REQUIRE(response.ok());
        CHECK(response->body == "ok");
        CHECK(server.requests().size() == 2U);
    }

    TEST_CASE("a 503 on every attempt is a network error after the last retry") {
        LoopbackServer server;
        Route route;
        route.fail_first = 100;
        route.fail_status = 503;
        server.route("/down", route);
        HttpOptions options = test_options();
        options.retries = 2;
        HttpClient client(options);
        auto response = client.get({server.url("/down"), {}});
        REQUIRE_FALSE(response.ok());
        CHECK(response.error().text() == server.url("/down") + ": HTTP 503");
        CHECK(response.error().kind == ErrorKind::network);
        CHECK(server.requests().size() == 3U);
    }

    TEST_CASE("redirects are followed and effective_url names the target") {
        LoopbackServer server;
        Route redirect;
        redirect.status = 302;
        redirect.headers = {{"Location", "/b/"}};
        server.route("/a/", redirect);
        server.route("/b/", ok_route("here"));
        HttpClient client(test_options());
        auto response = client.get({server.url("/a/"), {}});
        REQUIRE(response.ok());
        CHECK(response->status == 200);
        CHECK(response->body == "here");
        CHECK(response->effective_url == server.url("/b/"));
    }

    TEST_CASE("schemes other than http and https are refused, also in redirects") {
        LoopbackServer server;
        Route redirect;
        redirect.status = 302;
        redirect.headers = {{"Location", "file:///etc/passwd"}};
        server.route("/evil", redirect);
        HttpClient client(test_options());
        auto followed = client.get({server.url("/evil"), {}});
        REQUIRE_FALSE(followed.ok());
        CHECK(followed.error().text() == server.url("/evil") + ": Unsupported protocol");
        auto direct = client.get({"file:///etc/passwd", {}});
        REQUIRE_FALSE(direct.ok());
        CHECK(direct.error().text() == "file:///etc/passwd: Unsupported protocol");
        CHECK(server.requests().size() == 1U);
    }

    TEST_CASE("a body larger than max_body fails without retrying") {
        LoopbackServer server;
        server.route("/huge", ok_route(std::string(1000, 'x')));
        HttpClient client(test_options());
        auto response = client.get({server.url("/huge"), {}, 10});
        REQUIRE_FALSE(response.ok());
        CHECK(response.error().text() == server.url("/huge") + ": response body exceeds 10 bytes");
        CHECK(server.requests().size() == 1U);
    }

    TEST_CASE("the netrc's login and password are sent as Basic authorization") {
        LoopbackServer server;
        Route route = ok_route("secret page");
        route.require_authorization = "Basic YWxpY2U6czNjcmV0";  // alice:s3cret
        server.route("/private/", route);
        TempDir dir;
        HttpOptions options = test_options();
        SUBCASE("with a matching machine line") {
            options.netrc_file =
                dir.write_file("netrc", "machine 127.0.0.1 login alice password s3cret\n");
            HttpClient client(options);
            auto response = client.get({server.url("/private/"), {}});
            REQUIRE(response.ok());
            CHECK(response->status == 200);
            CHECK(response->body == "secret page");
            CHECK(server.requests().at(0).header("authorization") == "Basic YWxpY2U6czNjcmV0");
        }
        SUBCASE("without one") {
            options.netrc_file =
                dir.write_file("netrc", "machine example.org login alice password s3cret\n");
            HttpClient client(options);
            auto response = client.get({server.url("/private/"), {}});
            REQUIRE(response.ok());
            CHECK(response->status == 401);
            CHECK_FALSE(server.requests().at(0).has_header("authorization"));
        }
    }

    TEST_CASE("credentials in a URL are used but never shown in errors") {
        LoopbackServer server;
        Route route;
        route.fail_first = 100;
        server.route("/x", route);
        HttpOptions options = test_options();
        options.retries = 0;
        HttpClient client(options);
        std::string url = "http://alice:s3cret@127.0.0.1:" + std::to_string(server.port()) + "/x";
        auto response = client.get({url, {}});
        REQUIRE_FALSE(response.ok());
        CHECK(response.error().text() == server.url("/x") + ": HTTP 500");
        CHECK(server.requests().at(0).header("authorization") == "Basic YWxpY2U6czNjcmV0");
    }

    TEST_CASE("a trickle below the minimum rate fails like silence, and is retried") {
        // One byte every 50 ms is never silent for the 300 ms window, and far below 1 KiB/s.
        LoopbackServer server;
        Route route = ok_route(std::string(200, 'x'));
        route.trickle_first = 1;
        route.trickle_ms = 50;
        server.route("/trickle", route);
        HttpOptions options = test_options();
        options.stall_timeout_ms = 300;
        options.retries = 1;
        HttpClient client(options);
        auto response = client.get({server.url("/trickle"), {}});
        REQUIRE(response.ok());  // the retry is served whole
        CHECK(response->body == std::string(200, 'x'));
        CHECK(server.requests_for("/trickle").size() == 2);

        route.trickle_first = 100;
        server.route("/always", route);
        options.retries = 0;
        HttpClient strict(options);
        auto failed = strict.get({server.url("/always"), {}});
        REQUIRE_FALSE(failed.ok());
        CHECK(failed.error().kind == ErrorKind::network);
        CHECK(failed.error().text().starts_with(server.url("/always") + ": "));
        CHECK(
            failed.error().text().ends_with(" in 0.3 s, below the minimum rate of 1024 "
                                            "bytes/s"));

        // The deadline ends a transfer the rate would let run (min_rate 0).
        options.min_rate = 0;
        options.deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(400);
        HttpClient bounded(options);
        auto cut = bounded.get({server.url("/always"), {}});
        REQUIRE_FALSE(cut.ok());
        CHECK(cut.error().text() == server.url("/always") + ": the run's deadline passed");
    }

    TEST_CASE("a response that stalls after its headers fails within the stall timeout") {
        LoopbackServer server;
        Route route = ok_route("never sent");
        route.stall_first = 100;
        route.stall_ms = 10000;
        server.route("/slow", route);
        HttpOptions options = test_options();
        options.stall_timeout_ms = 300;
        options.retries = 0;
        HttpClient client(options);
        auto start = std::chrono::steady_clock::now();
        auto response = client.get({server.url("/slow"), {}});
        auto elapsed = std::chrono::steady_clock::now() - start;
        REQUIRE_FALSE(response.ok());
        CHECK(response.error().text() == server.url("/slow") + ": no data received for 0.3 s");
        CHECK(response.error().kind == ErrorKind::network);
        // Only the order of magnitude: it gave up long before the server's 10 s stall ended,
        // and not before its own timeout (a loaded machine must not fail this test).
        CHECK(elapsed >= std::chrono::milliseconds(290));
        CHECK(elapsed < std::chrono::milliseconds(8000));
    }

    TEST_CASE("a server silent before its headers is a stall too, and a retry can recover") {
        LoopbackServer server;
        Route route = ok_route("late but fine");
        route.stall_first = 1;
        route.stall_ms = 10000;
        route.stall_before_headers = true;
        server.route("/silent", route);
        HttpOptions options = test_options();
        options.stall_timeout_ms = 200;
        HttpClient client(options);
        auto response = client.get({server.url("/silent"), {}});
        REQUIRE(response.ok());
        CHECK(response->body == "late but fine");
        CHECK(server.requests().size() == 2U);
    }

    TEST_CASE("a refused connection is a network error after the retries") {
        uint16_t port = 0;
        {
            LoopbackServer closed;
            port = closed.port();
        }
        HttpOptions options = test_options();
        options.retries = 1;
        HttpClient client(options);
        std::string url = "http://127.0.0.1:" + std::to_string(port) + "/";
        auto response = client.get({url, {}});
        REQUIRE_FALSE(response.ok());
        CHECK(response.error().text() == url + ": Couldn't connect to server");
        CHECK(response.error().kind == ErrorKind::network);
        CHECK(client.requests_made() == 2U);
    }

    TEST_CASE("offline, get and download fail at once and nothing reaches the server") {
        LoopbackServer server;
        server.route("/page", ok_route("page"));
        server.route("/file", ok_route("file"));
        TempDir dir;
        ContentStore store(dir.path());
        HttpOptions options = test_options();
        options.offline = true;
        HttpClient client(options);
        auto response = client.get({server.url("/page"), {}});
        REQUIRE_FALSE(response.ok());
        CHECK(response.error().text() ==
              server.url("/page") + ": not in the cache and --offline forbids the network");
        CHECK(response.error().kind == ErrorKind::network);
        auto results = client.download({{server.url("/file"), sha256_hex("file"), 4}}, store);
        REQUIRE(results.size() == 1);
        REQUIRE_FALSE(results[0].ok());
        CHECK(results[0].error().text() ==
              server.url("/file") + ": not in the cache and --offline forbids the network");
        CHECK(server.requests().empty());
        CHECK(client.requests_made() == 0U);
    }

    TEST_CASE("get_many answers every request in order, each as get() would") {
        LoopbackServer server;
        Route slow = ok_route("slow page");
        slow.delay_ms = 200;
        server.route("/a", slow);
        server.route("/b", ok_route("page b"));
        Route flaky = ok_route("page c");
        flaky.fail_first = 1;
        server.route("/c", flaky);
        HttpClient client(test_options());
        auto answers = client.get_many({{server.url("/a"), {}},
                                        {server.url("/b"), {}},
                                        {server.url("/missing"), {}},
                                        {server.url("/c"), {}}});
        REQUIRE(answers.size() == 4);
        REQUIRE(answers[0].ok());
        CHECK(answers[0]->body == "slow page");
        REQUIRE(answers[1].ok());
        CHECK(answers[1]->body == "page b");
        REQUIRE(answers[2].ok());
        CHECK(answers[2]->status == 404);
        REQUIRE(answers[3].ok());
        CHECK(answers[3]->body == "page c");
        CHECK(server.requests().size() == 5);  // /c was retried once
    }

    TEST_CASE("get_many offline sends nothing and names every URL") {
        LoopbackServer server;
        server.route("/a", ok_route("a"));
        HttpOptions options = test_options();
        options.offline = true;
        HttpClient client(options);
        auto answers = client.get_many({{server.url("/a"), {}}, {server.url("/b"), {}}});
        REQUIRE(answers.size() == 2);
        REQUIRE_FALSE(answers[1].ok());
        CHECK(answers[1].error().text() ==
              server.url("/b") + ": not in the cache and --offline forbids the network");
        CHECK(answers[1].error().kind == ErrorKind::network);
        CHECK(server.requests().empty());
    }
}
