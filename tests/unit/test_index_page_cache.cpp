// Unit tests for the page cache: pages round-trip with their validators, bodies that are not
// UTF-8 survive, and every kind of corrupt or foreign file reads as a miss rather than an error.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "index/page_cache.hpp"
#include "support/host.hpp"
#include "support/temp_dir.hpp"
#include "util/cache_damage.hpp"
#include "util/sealed_text.hpp"
#include "util/sha256.hpp"

namespace ROOTLOCK_UNIT_ID {

using rootlock::index::CachedPage;
using rootlock::index::PageCache;
using rootlock::testing::TempDir;

namespace {

const std::string k_key = "https://pypi.org/simple/numpy/\napplication/vnd.pypi.simple.v1+json";

CachedPage sample_page() {
    return CachedPage{"https://pypi.org/simple/numpy/", "application/vnd.pypi.simple.v1+json",
                      "\"etag-1\"", "Tue, 01 Jul 2025 10:00:00 GMT", "{\"files\": []}"};
}

std::string read_text(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream out;
    out << in.rdbuf();
    return out.str();
}

}  // namespace

TEST_SUITE("rootlock::index") {
    TEST_CASE("a page put into the cache comes back with its validators") {
        TempDir dir;
        PageCache cache(dir.path());
        REQUIRE(cache.put(k_key, sample_page()).ok());
        auto page = cache.get(k_key);
        REQUIRE(page.ok());
        REQUIRE(page->has_value());
        const CachedPage& got = **page;
        CHECK(got.url == "https://pypi.org/simple/numpy/");
        CHECK(got.content_type == "application/vnd.pypi.simple.v1+json");
        CHECK(got.etag == "\"etag-1\"");
        CHECK(got.last_modified == "Tue, 01 Jul 2025 10:00:00 GMT");
        CHECK(got.body == "{\"files\": []}");
        CHECK(cache.path_for(k_key) ==
              dir / ("pages/" + rootlock::util::sha256_hex(k_key) + ".json"));
        CHECK(std::filesystem::exists(cache.path_for(k_key)));
    }

    TEST_CASE("an unknown key is a miss, and keys differing in Accept are different pages") {
        TempDir dir;
        PageCache cache(dir.path());
        REQUIRE(cache.put(k_key, sample_page()).ok());
        auto other = cache.get("https://pypi.org/simple/numpy/\ntext/html");
        REQUIRE(other.ok());
        CHECK_FALSE(other->has_value());
    }

    TEST_CASE("putting a page again replaces it and leaves no temp files") {
        TempDir dir;
        PageCache cache(dir.path());
        REQUIRE(cache.put(k_key, sample_page()).ok());
        CachedPage newer = sample_page();
        newer.etag = "\"etag-2\"";
        newer.body = "{\"files\": [1]}";
        REQUIRE(cache.put(k_key, newer).ok());
        auto page = cache.get(k_key);
        REQUIRE(page.ok());
        REQUIRE(page->has_value());
        CHECK((*page)->etag == "\"etag-2\"");
        CHECK((*page)->body == "{\"files\": [1]}");
        size_t files = 0;
        for (const auto& entry : std::filesystem::directory_iterator(dir / "pages")) {
            CHECK(entry.path().extension() == ".json");
            ++files;
        }
        CHECK(files == 1U);
    }

    TEST_CASE("a body that is not UTF-8 is stored as hex and comes back byte for byte") {
        TempDir dir;
        PageCache cache(dir.path());
        CachedPage page = sample_page();
        page.body = std::string("caf\xe9\x00\xff", 6);
        REQUIRE(cache.put(k_key, page).ok());
        CHECK(read_text(cache.path_for(k_key)).find("\"body_hex\":\"636166e900ff\"") !=
              std::string::npos);
        auto got = cache.get(k_key);
        REQUIRE(got.ok());
        REQUIRE(got->has_value());
        CHECK((*got)->body == page.body);
    }

    TEST_CASE("validators that are not UTF-8 make put fail without writing") {
        TempDir dir;
        PageCache cache(dir.path());
        CachedPage page = sample_page();
        page.etag = "\xff";
        auto status = cache.put(k_key, page);
        REQUIRE_FALSE(status.ok());
        CHECK(status.error().text() == cache.path_for(k_key) + ": page headers are not UTF-8");
        CHECK_FALSE(std::filesystem::exists(cache.path_for(k_key)));
    }

    TEST_CASE("corrupt or foreign cache files read as a miss") {
        TempDir dir;
        PageCache cache(dir.path());
        const std::string key_json = "\"key\":\"" + std::string("https://pypi.org/simple/numpy/") +
                                     "\\napplication/vnd.pypi.simple.v1+json\"";
        const std::string fields =
            ",\"url\":\"u\",\"content_type\":\"t\",\"etag\":\"e\",\"last_modified\":\"l\"";
        const std::string valid = "{\"version\":1," + key_json + fields + ",\"body\":\"b\"}";
        // The valid document really is read, so each broken one below is a miss for its flaw.
        dir.write_file("pages/" + rootlock::util::sha256_hex(k_key) + ".json",
                       rootlock::util::seal_text(valid));
        auto good = cache.get(k_key);
        REQUIRE(good.ok());
        REQUIRE(good->has_value());
        CHECK((*good)->body == "b");

        const std::string cases[] = {
            "",
            "{",
            "[]",
            "null",
            "{\"version\":1}",
            "{\"version\":2," + key_json + fields + ",\"body\":\"b\"}",
            "{\"version\":\"1\"," + key_json + fields + ",\"body\":\"b\"}",
            "{\"version\":1,\"key\":\"another key\"" + fields + ",\"body\":\"b\"}",
            "{\"version\":1," + key_json + ",\"url\":\"u\",\"body\":\"b\"}",
            "{\"version\":1," + key_json + fields + ",\"etag2\":1}",
            "{\"version\":1," + key_json + fields + ",\"body\":7}",
            "{\"version\":1," + key_json + fields + ",\"body\":\"b\",\"body_hex\":\"62\"}",
            "{\"version\":1," + key_json + fields + ",\"body_hex\":\"6\"}",
            "{\"version\":1," + key_json + fields + ",\"body_hex\":\"zz\"}",
            "{\"version\":1," + key_json + fields + ",\"body_hex\":\"6A\"}",
            valid + "trailing",
        };
        // Whole (sealed) files of another shape, and an earlier version's unsealed pages.
        for (const auto& text : cases) {
            CAPTURE(text);
            dir.write_file("pages/" + rootlock::util::sha256_hex(k_key) + ".json",
                           rootlock::util::seal_text(text));
            auto page = cache.get(k_key);
            REQUIRE(page.ok());
            CHECK_FALSE(page->has_value());
        }
        dir.write_file("pages/" + rootlock::util::sha256_hex(k_key) + ".json", valid);
        auto earlier = cache.get(k_key);
        REQUIRE(earlier.ok());
        CHECK_FALSE(earlier->has_value());
    }

    TEST_CASE("a page changed on disk is damaged: removed and reported, or offline refused") {
        TempDir dir;
        PageCache cache(dir.path());
        REQUIRE(cache.put(k_key, sample_page()).ok());
        const std::string path = cache.path_for(k_key);
        std::string text = rootlock::testing::read_host_text(path);
        const size_t body = text.find("\"body\"");
        REQUIRE(body != std::string::npos);
        text[body + 9] ^= 0x01;  // one bit of the body: still valid JSON
        (void)rootlock::util::take_cache_damage();
        for (bool offline : {true, false}) {
            CAPTURE(offline);
            dir.write_file("pages/" + rootlock::util::sha256_hex(k_key) + ".json", text);
            PageCache reader(dir.path());
            reader.set_offline(offline);
            auto page = reader.get(k_key);
            if (offline) {
                REQUIRE_FALSE(page.ok());
                CHECK(page.error().kind == rootlock::util::ErrorKind::integrity);
                CHECK(page.error().where == path);
                CHECK(std::filesystem::exists(path));
                CHECK(rootlock::util::take_cache_damage().empty());
            } else {
                REQUIRE(page.ok());
                CHECK_FALSE(page->has_value());
                CHECK_FALSE(std::filesystem::exists(path));
                auto damage = rootlock::util::take_cache_damage();
                REQUIRE(damage.size() == 1);
                CHECK(damage[0].find(path + ": damaged") == 0);
            }
        }
    }

    TEST_CASE("a cache root that is a file gives one clear error") {
        TempDir dir;
        std::string file = dir.write_file("plain", "x");
        PageCache cache(file);
        auto status = cache.put(k_key, sample_page());
        REQUIRE_FALSE(status.ok());
        CHECK(status.error().text() == file + "/pages: Not a directory");
        auto page = cache.get(k_key);
        REQUIRE_FALSE(page.ok());
        CHECK(page.error().text() == cache.path_for(k_key) + ": Not a directory");
    }
}

}  // namespace ROOTLOCK_UNIT_ID
