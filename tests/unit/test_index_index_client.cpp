// Unit tests for the index client's caching against a real loopback server: a 404 is kept with
// its validators and revalidated, metadata files without a hash are kept and revalidated (one at
// a time and prefetched), those with a hash come from the store, and --offline reads them all.
#include <doctest/doctest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "index/content_store.hpp"
#include "index/http_client.hpp"
#include "index/index_client.hpp"
#include "index/page_cache.hpp"
#include "support/loopback_server.hpp"
#include "support/temp_dir.hpp"
#include "util/sha256.hpp"

using rootlock::index::ContentStore;
using rootlock::index::DistributionFile;
using rootlock::index::HttpClient;
using rootlock::index::HttpOptions;
using rootlock::index::IndexClient;
using rootlock::index::PageCache;
using rootlock::testing::LoopbackServer;
using rootlock::testing::RecordedRequest;
using rootlock::testing::Route;
using rootlock::testing::TempDir;
using rootlock::util::ErrorKind;

namespace {

constexpr const char* k_etag = "\"v1\"";
constexpr const char* k_date = "Mon, 01 Jan 2024 00:00:00 GMT";
constexpr const char* k_metadata = "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n";

HttpOptions test_options(bool offline = false) {
    HttpOptions options = rootlock::testing::loopback_http_options(1);
    options.offline = offline;
    return options;
}

// One run of rootlock: its own client and stats, over a cache directory shared between runs.
struct Run {
    HttpClient http;
    PageCache pages;
    ContentStore store;
    IndexClient client;
    Run(const TempDir& cache, bool offline = false)
        : http(test_options(offline)),
          pages(cache.path()),
          store(cache.path()),
          client(http, pages, store, offline) {}
};

Route answer(int status, std::string body = "", bool validators = true) {
    Route route;
    route.status = status;
    route.body = std::move(body);
    if (validators)
        route.headers = {{"ETag", k_etag}, {"Last-Modified", k_date}};
    return route;
}

Route json_page() {
    Route route = answer(200, R"({"meta": {"api-version": "1.1"}, "name": "demo", "files": []})");
    route.headers.emplace_back("Content-Type", "application/vnd.pypi.simple.v1+json");
    return route;
}

DistributionFile wheel(const LoopbackServer& server, const std::string& name,
                       const std::string& metadata_sha256 = "") {
    DistributionFile file;
    file.filename = name;
    file.url = server.url("/files/" + name);
    file.has_metadata = true;
    if (!metadata_sha256.empty())
        file.metadata_hashes["sha256"] = metadata_sha256;
    return file;
}

bool conditional(const RecordedRequest& request) {
    return request.header("if-none-match") == k_etag &&
           request.header("if-modified-since") == k_date;
}

}  // namespace

TEST_SUITE("rootlock::index") {
    TEST_CASE("a 404 is kept with its validators, and the next run asks conditionally") {
        LoopbackServer server;
        TempDir cache;
        server.route("/simple/demo/", answer(404, "not found\n"));
        {
            Run run(cache);
            auto page = run.client.project(server.url("/simple/"), "demo");
            REQUIRE(page.ok());
            CHECK(!page->has_value());
            CHECK(run.client.stats().pages_absent == 1);
        }
        // A cache in front of the index answers 304: still absent, nothing parsed.
        server.route("/simple/demo/", answer(304));
        {
            Run run(cache);
            auto page = run.client.project(server.url("/simple/"), "demo");
            REQUIRE(page.ok());
            CHECK(!page->has_value());
            CHECK(run.client.stats().pages_revalidated == 1);
            CHECK(run.client.stats().pages_absent == 0);
        }
        // An origin ignores the condition on a missing resource (RFC 9110 13.2.1): 404 again.
        server.route("/simple/demo/", answer(404, "not found\n"));
        {
            Run run(cache);
            auto page = run.client.project(server.url("/simple/"), "demo");
            REQUIRE(page.ok());
            CHECK(!page->has_value());
        }
        auto asked = server.requests_for("/simple/demo/");
        REQUIRE(asked.size() == 3);
        CHECK(!asked[0].has_header("if-none-match"));
        CHECK(conditional(asked[1]));
        CHECK(conditional(asked[2]));
    }

    TEST_CASE(
        "a 404 without validators is asked again plainly, and a project that appears is seen") {
        LoopbackServer server;
        TempDir cache;
        server.route("/simple/demo/", answer(410, "gone\n", /*validators=*/false));
        for (int i = 0; i < 2; ++i) {
            Run run(cache);
            auto page = run.client.project(server.url("/simple/"), "demo");
            REQUIRE(page.ok());
            CHECK(!page->has_value());
        }
        server.route("/simple/demo/", json_page());
        Run run(cache);
        auto page = run.client.project(server.url("/simple/"), "demo");
        REQUIRE(page.ok());
        REQUIRE(page->has_value());
        CHECK((*page)->name == "demo");
        CHECK(run.client.stats().pages_fetched == 1);
        auto asked = server.requests_for("/simple/demo/");
        REQUIRE(asked.size() == 3);
        for (const auto& request : asked) {
            CHECK(!request.has_header("if-none-match"));
            CHECK(!request.has_header("if-modified-since"));
        }
    }

    TEST_CASE("prefetched 404s are kept and revalidated like those asked one at a time") {
        LoopbackServer server;
        TempDir cache;
        server.route("/simple/demo/", answer(404, "not found\n"));
        server.route("/simple/other/", json_page());
        {
            Run run(cache);
            run.client.prefetch_projects(server.url("/simple/"), {"demo", "other"});
            auto page = run.client.project(server.url("/simple/"), "demo");
            REQUIRE(page.ok());
            CHECK(!page->has_value());
        }
        server.route("/simple/demo/", answer(304));
        server.route("/simple/other/", answer(304));
        Run run(cache);
        run.client.prefetch_projects(server.url("/simple/"), {"demo", "other"});
        auto demo = run.client.project(server.url("/simple/"), "demo");
        auto other = run.client.project(server.url("/simple/"), "other");
        REQUIRE(demo.ok());
        REQUIRE(other.ok());
        CHECK(!demo->has_value());
        CHECK(other->has_value());
        CHECK(run.client.stats().pages_revalidated == 2);
        CHECK(server.requests().size() == 4);
        CHECK(conditional(server.requests_for("/simple/demo/").back()));
    }

    TEST_CASE("offline, a kept 404 answers absent and an unknown page is a network error") {
        LoopbackServer server;
        TempDir cache;
        server.route("/simple/demo/", answer(404, "not found\n"));
        {
            Run run(cache);
            REQUIRE(run.client.project(server.url("/simple/"), "demo").ok());
        }
        Run run(cache, /*offline=*/true);
        auto page = run.client.project(server.url("/simple/"), "demo");
        REQUIRE(page.ok());
        CHECK(!page->has_value());
        CHECK(run.client.stats().pages_from_cache == 1);
        auto unknown = run.client.project(server.url("/simple/"), "unknown");
        REQUIRE(!unknown.ok());
        CHECK(unknown.error().kind == ErrorKind::network);
        CHECK(unknown.error().text() == server.url("/simple/unknown/") +
                                            ": not in the cache and --offline forbids the network");
        CHECK(server.requests().size() == 1);
    }

    TEST_CASE(
        "metadata without a hash is kept with its validators and revalidated, not refetched") {
        LoopbackServer server;
        TempDir cache;
        const std::string path = "/files/demo-1.0-py3-none-any.whl.metadata";
        server.route(path, answer(200, k_metadata));
        {
            Run run(cache);
            auto text = run.client.metadata(wheel(server, "demo-1.0-py3-none-any.whl"));
            REQUIRE(text.ok());
            CHECK(text->value() == k_metadata);
            CHECK(run.client.stats().metadata_fetched == 1);
        }
        server.route(path, answer(304));
        {
            Run run(cache);
            auto text = run.client.metadata(wheel(server, "demo-1.0-py3-none-any.whl"));
            REQUIRE(text.ok());
            CHECK(text->value() == k_metadata);
            CHECK(run.client.stats().metadata_fetched == 0);
            CHECK(run.client.stats().metadata_revalidated == 1);
        }
        {
            Run run(cache, /*offline=*/true);
            auto text = run.client.metadata(wheel(server, "demo-1.0-py3-none-any.whl"));
            REQUIRE(text.ok());
            CHECK(text->value() == k_metadata);
            CHECK(run.client.stats().metadata_from_cache == 1);
        }
        // The index changed the file: a 200 to the conditional GET replaces what was kept.
        const std::string changed = std::string(k_metadata) + "Requires-Dist: other\n";
        server.route(path, answer(200, changed));
        {
            Run run(cache);
            auto text = run.client.metadata(wheel(server, "demo-1.0-py3-none-any.whl"));
            REQUIRE(text.ok());
            CHECK(text->value() == changed);
        }
        Run run(cache, /*offline=*/true);
        auto text = run.client.metadata(wheel(server, "demo-1.0-py3-none-any.whl"));
        REQUIRE(text.ok());
        CHECK(text->value() == changed);
        auto asked = server.requests_for(path);
        REQUIRE(asked.size() == 3);
        CHECK(!asked[0].has_header("if-none-match"));
        CHECK(conditional(asked[1]));
        CHECK(conditional(asked[2]));
    }

    TEST_CASE(
        "prefetch_metadata revalidates unhashed files at once and metadata() uses the answers") {
        LoopbackServer server;
        TempDir cache;
        std::vector<DistributionFile> files;
        for (const char* name : {"a-1.0-py3-none-any.whl", "b-1.0-py3-none-any.whl"}) {
            server.route(std::string("/files/") + name + ".metadata", answer(200, k_metadata));
            files.push_back(wheel(server, name));
        }
        {
            Run run(cache);
            run.client.prefetch_metadata(files);
            CHECK(server.requests().size() == 2);
            for (const auto& file : files)
                CHECK(run.client.metadata(file).ok());
            CHECK(server.requests().size() == 2);
            CHECK(run.client.stats().metadata_fetched == 2);
        }
        for (const auto& file : files)
            server.route(file.url.substr(file.url.find("/files/")) + ".metadata", answer(304));
        Run run(cache);
        run.client.prefetch_metadata(files);
        for (const auto& file : files) {
            auto text = run.client.metadata(file);
            REQUIRE(text.ok());
            CHECK(text->value() == k_metadata);
        }
        CHECK(run.client.stats().metadata_revalidated == 2);
        auto asked = server.requests();
        REQUIRE(asked.size() == 4);
        CHECK(conditional(asked[2]));
        CHECK(conditional(asked[3]));
    }

    TEST_CASE("metadata with a hash is fetched once ever, then read from the store") {
        LoopbackServer server;
        TempDir cache;
        const std::string digest = rootlock::util::sha256_hex(k_metadata);
        const std::string path = "/files/demo-1.0-py3-none-any.whl.metadata";
        server.route(path, answer(200, k_metadata));
        const DistributionFile file = wheel(server, "demo-1.0-py3-none-any.whl", digest);
        {
            Run run(cache);
            run.client.prefetch_metadata({file});
            CHECK(run.client.metadata(file).ok());
        }
        for (bool offline : {false, true}) {
            Run run(cache, offline);
            run.client.prefetch_metadata({file});
            auto text = run.client.metadata(file);
            REQUIRE(text.ok());
            CHECK(text->value() == k_metadata);
            CHECK(run.client.stats().metadata_from_cache == 1);
        }
        CHECK(server.requests_for(path).size() == 1);
    }

    TEST_CASE("a metadata file the index advertises but answers 404 for is kept as absent") {
        LoopbackServer server;
        TempDir cache;
        const std::string path = "/files/demo-1.0-py3-none-any.whl.metadata";
        server.route(path, answer(404, "not found\n"));
        const DistributionFile file =
            wheel(server, "demo-1.0-py3-none-any.whl", rootlock::util::sha256_hex(k_metadata));
        {
            Run run(cache);
            auto text = run.client.metadata(file);
            REQUIRE(text.ok());
            CHECK(!text->has_value());  // the caller reads the wheel instead
        }
        server.route(path, answer(304));
        {
            Run run(cache);
            run.client.prefetch_metadata({file});  // a conditional GET, not a download
            auto text = run.client.metadata(file);
            REQUIRE(text.ok());
            CHECK(!text->has_value());
        }
        Run run(cache, /*offline=*/true);
        auto text = run.client.metadata(file);
        REQUIRE(text.ok());
        CHECK(!text->has_value());
        auto asked = server.requests_for(path);
        REQUIRE(asked.size() == 2);
        CHECK(conditional(asked[1]));
    }
}
