// The curl-free side of HTTP: Content-Range values from servers (resumed downloads depend on
// them), durations as messages print them, and header text.
#include <doctest/doctest.h>

#include "index/http_text.hpp"

using namespace rootlock::index;

TEST_SUITE("index") {
    TEST_CASE("parse_content_range reads the start and the total, and refuses the malformed") {
        auto full = parse_content_range("bytes 100-199/1000");
        REQUIRE(full.has_value());
        CHECK(full->first == 100);
        CHECK(full->second == std::optional<uint64_t>(1000));
        auto unknown_total = parse_content_range("bytes 0-9/*");
        REQUIRE(unknown_total.has_value());
        CHECK(unknown_total->first == 0);
        CHECK_FALSE(unknown_total->second.has_value());
        for (const char* bad :
             {"", "bytes", "bytes 1-2", "items 1-2/3", "bytes -2/3", "bytes a-2/3", "bytes 1-b/3",
              "bytes 1/2-3", "bytes 99999999999999999999-1/2"}) {
            CAPTURE(bad);
            CHECK_FALSE(parse_content_range(bad).has_value());
        }
    }

    TEST_CASE("format_seconds prints milliseconds as seconds without trailing zeros") {
        CHECK(format_seconds(300) == "0.3");
        CHECK(format_seconds(30000) == "30");
        CHECK(format_seconds(1250) == "1.25");
        CHECK(format_seconds(1) == "0.001");
        CHECK(format_seconds(0) == "0");
    }

    TEST_CASE("header helpers lowercase names and trim values") {
        CHECK(lowercase("Content-Type") == "content-type");
        CHECK(trim(" \tvalue\r\n") == "value");
        CHECK(trim("") == "");
        CHECK(parse_u64("18446744073709551615") == std::optional<uint64_t>(UINT64_MAX));
        CHECK_FALSE(parse_u64("18446744073709551616").has_value());
        CHECK_FALSE(parse_u64("-1").has_value());
    }
}
