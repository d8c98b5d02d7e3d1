// Unit tests for HttpClient::download against a real loopback server: blobs land in the store,
// stored blobs are reused, cut transfers resume with Range, digests and sizes are enforced.
#include <doctest/doctest.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "index/content_store.hpp"
#include "index/http_client.hpp"
#include "support/loopback_server.hpp"
#include "support/temp_dir.hpp"
#include "util/sha256.hpp"

namespace ROOTLOCK_UNIT_ID {

using rootlock::index::ContentStore;
using rootlock::index::DownloadRequest;
using rootlock::index::HttpClient;
using rootlock::index::HttpOptions;
using rootlock::index::Progress;
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

std::string read_text(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream out;
    out << in.rdbuf();
    return out.str();
}

// 100 KiB of varied bytes, so that a wrongly joined resume cannot hash right by accident.
std::string big_body() {
    std::string body;
    for (int i = 0; body.size() < 100 * 1024; ++i)
        body += std::to_string(i) + ",";
    return body;
}

size_t entries_in(const std::string& dir) {
    if (!std::filesystem::exists(dir))
        return 0;
    return static_cast<size_t>(std::distance(std::filesystem::directory_iterator(dir),
                                             std::filesystem::directory_iterator()));
}

}  // namespace

TEST_SUITE("rootlock::index") {
    TEST_CASE("downloads land in the store under their digest, results in request order") {
        LoopbackServer server;
        const std::vector<std::string> bodies = {"alpha", big_body(), std::string()};
        std::vector<DownloadRequest> requests;
        for (size_t i = 0; i < bodies.size(); ++i) {
            server.route("/f" + std::to_string(i), ok_route(bodies[i]));
            requests.push_back(
                {server.url("/f" + std::to_string(i)), sha256_hex(bodies[i]), bodies[i].size()});
        }
        for (char& c : requests[0].sha256)  // indexes may spell digests in upper case
            c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        TempDir dir;
        ContentStore store(dir.path());
        HttpClient client(test_options());
        auto results = client.download(requests, store);
        REQUIRE(results.size() == 3);
        for (size_t i = 0; i < bodies.size(); ++i) {
            CAPTURE(i);
            REQUIRE(results[i].ok());
            CHECK(results[i]->sha256 == sha256_hex(bodies[i]));
            CHECK(results[i]->size == bodies[i].size());
            CHECK(results[i]->path == store.blob_path(sha256_hex(bodies[i])));
            CHECK(read_text(results[i]->path) == bodies[i]);
            CHECK_FALSE(server.requests_for("/f" + std::to_string(i)).at(0).has_header("range"));
        }
        CHECK(entries_in(dir / "tmp") == 0U);
    }

    TEST_CASE("a download without a digest is stored under the digest of what arrived") {
        LoopbackServer server;
        server.route("/x", ok_route("anything"));
        TempDir dir;
        ContentStore store(dir.path());
        HttpClient client(test_options());
        auto results = client.download({{server.url("/x"), "", std::nullopt}}, store);
        REQUIRE(results.at(0).ok());
        CHECK(results[0]->sha256 == sha256_hex("anything"));
        CHECK(read_text(results[0]->path) == "anything");
    }

    TEST_CASE("a blob already in the store is not downloaded again, even offline") {
        LoopbackServer server;
        server.route("/x", ok_route("cached"));
        TempDir dir;
        ContentStore store(dir.path());
        REQUIRE(store.put_bytes("cached").ok());
        HttpOptions options = test_options();
        SUBCASE("online") {}
        SUBCASE("offline") {
            options.offline = true;
        }
        HttpClient client(options);
        auto results = client.download({{server.url("/x"), sha256_hex("cached"), 6}}, store);
        REQUIRE(results.at(0).ok());
        CHECK(results[0]->size == 6U);
        CHECK(read_text(results[0]->path) == "cached");
        CHECK(server.requests().empty());
        CHECK(client.requests_made() == 0U);
    }

    TEST_CASE("requests for the same digest share one transfer") {
        LoopbackServer server;
        server.route("/a", ok_route("same"));
        server.route("/b", ok_route("same"));
        TempDir dir;
        ContentStore store(dir.path());
        HttpClient client(test_options());
        auto results = client.download(
            {{server.url("/a"), sha256_hex("same"), 4}, {server.url("/b"), sha256_hex("same"), 4}},
            store);
        REQUIRE(results.size() == 2);
        REQUIRE(results[0].ok());
        REQUIRE(results[1].ok());
        CHECK(results[0]->path == results[1]->path);
        CHECK(server.requests().size() == 1U);
    }

    TEST_CASE("a connection cut mid-body resumes with a Range request the server honours") {
        LoopbackServer server;
        const std::string body = big_body();
        Route route = ok_route(body);
        route.drop_first = 1;
        route.honour_range = true;
        server.route("/wheel", route);
        TempDir dir;
        ContentStore store(dir.path());
        HttpClient client(test_options());
        auto results =
            client.download({{server.url("/wheel"), sha256_hex(body), body.size()}}, store);
        REQUIRE(results.at(0).ok());
        CHECK(read_text(results[0]->path) == body);
        auto seen = server.requests_for("/wheel");
        REQUIRE(seen.size() == 2);
        CHECK_FALSE(seen[0].has_header("range"));
        CHECK(seen[1].header("range") == "bytes=" + std::to_string(body.size() / 2) + "-");
    }

    TEST_CASE("a server that ignores Range on the retry is read again from the start") {
        LoopbackServer server;
        const std::string body = big_body();
        Route route = ok_route(body);
        route.drop_first = 1;
        server.route("/wheel", route);
        TempDir dir;
        ContentStore store(dir.path());
        HttpClient client(test_options());
        auto results =
            client.download({{server.url("/wheel"), sha256_hex(body), std::nullopt}}, store);
        REQUIRE(results.at(0).ok());
        CHECK(results[0]->size == body.size());
        CHECK(read_text(results[0]->path) == body);
        auto seen = server.requests_for("/wheel");
        REQUIRE(seen.size() == 2);
        CHECK(seen[1].has_header("range"));
    }

    TEST_CASE("a wrong digest fails, leaves nothing behind, and the right one then works") {
        LoopbackServer server;
        server.route("/x", ok_route("real bytes"));
        TempDir dir;
        ContentStore store(dir.path());
        HttpClient client(test_options());
        const std::string wrong = sha256_hex("other bytes");
        auto failed = client.download({{server.url("/x"), wrong, std::nullopt}}, store);
        REQUIRE_FALSE(failed.at(0).ok());
        CHECK(failed[0].error().text() == server.url("/x") + ": sha256 mismatch: expected " +
                                              wrong + ", got " + sha256_hex("real bytes"));
        CHECK(failed[0].error().kind == ErrorKind::integrity);
        CHECK(entries_in(dir / "tmp") == 0U);
        CHECK_FALSE(store.find(wrong)->has_value());
        CHECK_FALSE(store.find(sha256_hex("real bytes"))->has_value());
        CHECK(server.requests().size() == 1U);  // a mismatch is not retried

        auto fixed = client.download({{server.url("/x"), sha256_hex("real bytes"), 10}}, store);
        REQUIRE(fixed.at(0).ok());
        CHECK(read_text(fixed[0]->path) == "real bytes");
    }

    TEST_CASE("a wrong size fails the same way, short or long") {
        LoopbackServer server;
        server.route("/x", ok_route("0123456789"));
        TempDir dir;
        ContentStore store(dir.path());
        HttpClient client(test_options());
        auto results =
            client.download({{server.url("/x"), "", 11}, {server.url("/x"), "", 9}}, store);
        REQUIRE(results.size() == 2);
        REQUIRE_FALSE(results[0].ok());
        // The server said 10 bytes and sent them: another file than the one listed, not a cut.
        CHECK(results[0].error().text() ==
              server.url("/x") + ": size mismatch: expected 11 bytes, got 10");
        CHECK(results[0].error().kind == ErrorKind::integrity);
        CHECK(server.requests_for("/x").size() == 2);  // one each: neither was retried
        REQUIRE_FALSE(results[1].ok());
        CHECK(results[1].error().text() ==
              server.url("/x") + ": size mismatch: expected 9 bytes, got more");
        CHECK(entries_in(dir / "tmp") == 0U);
        CHECK(entries_in(dir / "blobs") == 0U);
    }

    TEST_CASE("a 404 or a malformed digest fails that request only") {
        LoopbackServer server;
        server.route("/ok", ok_route("fine"));
        TempDir dir;
        ContentStore store(dir.path());
        HttpClient client(test_options());
        auto results = client.download({{server.url("/gone"), "", std::nullopt},
                                        {server.url("/ok"), "not-a-digest", std::nullopt},
                                        {server.url("/ok"), sha256_hex("fine"), 4}},
                                       store);
        REQUIRE(results.size() == 3);
        REQUIRE_FALSE(results[0].ok());
        CHECK(results[0].error().text() == server.url("/gone") + ": HTTP 404");
        CHECK(results[0].error().kind == ErrorKind::network);
        REQUIRE_FALSE(results[1].ok());
        CHECK(results[1].error().text() ==
              server.url("/ok") + ": expected sha256 is not 64 hexadecimal digits");
        REQUIRE(results[2].ok());
        CHECK(entries_in(dir / "tmp") == 0U);
    }

    TEST_CASE("a stalled download fails with the stall message and its temp file is removed") {
        LoopbackServer server;
        Route route = ok_route(big_body());
        route.stall_first = 100;
        route.stall_ms = 10000;
        server.route("/slow", route);
        TempDir dir;
        ContentStore store(dir.path());
        HttpOptions options = test_options();
        options.stall_timeout_ms = 250;
        options.retries = 1;
        HttpClient client(options);
        auto results = client.download({{server.url("/slow"), "", std::nullopt}}, store);
        REQUIRE_FALSE(results.at(0).ok());
        CHECK(results[0].error().text() == server.url("/slow") + ": no data received for 0.25 s");
        CHECK(server.requests().size() == 2U);
        CHECK(entries_in(dir / "tmp") == 0U);
    }

    TEST_CASE("no more than max_parallel transfers run at once") {
        LoopbackServer server;
        std::vector<DownloadRequest> requests;
        for (int i = 0; i < 6; ++i) {
            Route route = ok_route("file " + std::to_string(i));
            route.delay_ms = 150;
            server.route("/p" + std::to_string(i), route);
            requests.push_back({server.url("/p" + std::to_string(i)), "", std::nullopt});
        }
        TempDir dir;
        ContentStore store(dir.path());
        HttpOptions options = test_options();
        options.max_parallel = 3;
        HttpClient client(options);
        auto results = client.download(requests, store);
        for (const auto& result : results)
            CHECK(result.ok());
        CHECK(server.requests().size() == 6U);
        CHECK(server.max_in_flight() == 3);
    }

    TEST_CASE("progress counts files and bytes up to the totals") {
        LoopbackServer server;
        server.route("/a", ok_route("aaaa"));
        server.route("/b", ok_route(big_body()));
        TempDir dir;
        ContentStore store(dir.path());
        REQUIRE(store.put_bytes("cached!").ok());
        std::vector<Progress> reports;
        HttpOptions options = test_options();
        options.progress = [&](const Progress& progress) { reports.push_back(progress); };
        HttpClient client(options);
        const uint64_t total = 4 + big_body().size() + 7;
        auto results = client.download({{server.url("/a"), "", 4},
                                        {server.url("/b"), sha256_hex(big_body()), std::nullopt},
                                        {server.url("/c"), sha256_hex("cached!"), 7}},
                                       store);
        for (const auto& result : results)
            CHECK(result.ok());
        REQUIRE(reports.size() >= 2);
        CHECK(reports.front().files_done == 1U);  // the stored blob
        for (size_t i = 0; i < reports.size(); ++i) {
            CAPTURE(i);
            CHECK(reports[i].files_total == 3U);
            CHECK(reports[i].bytes_done <= reports[i].bytes_total);
            if (i > 0)
                CHECK(reports[i].files_done >= reports[i - 1].files_done);
        }
        CHECK(reports.back().files_done == 3U);
        CHECK(reports.back().bytes_done == total);
        CHECK(reports.back().bytes_total == total);
    }
}

}  // namespace ROOTLOCK_UNIT_ID
