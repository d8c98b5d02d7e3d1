// Inputs the fuzz targets found (fuzz/regressions/ replays the same bytes in `make fuzz-smoke`):
// each case is a parser's promise that one of them broke, asserted exactly.
#include <doctest/doctest.h>

#include "debian/deb_version.hpp"

using rootlock::debian::compare_deb_versions;
using rootlock::debian::parse_deb_version;
using rootlock::debian::to_string;

TEST_SUITE("rootlock::debian") {
    TEST_CASE("a version whose upstream part holds ':' keeps its zero epoch when written") {
        auto version = parse_deb_version("0:1:2-3");
        REQUIRE(version.ok());
        CHECK(version->epoch == 0U);
        CHECK(version->upstream == "1:2");
        CHECK(to_string(*version) == "0:1:2-3");
        auto again = parse_deb_version(to_string(*version));
        REQUIRE(again.ok());
        CHECK(*again == *version);
        // Without the "0:" it would be another version: epoch 1, upstream "2".
        CHECK(compare_deb_versions("0:1:2-3", "1:2-3") < 0);
    }
}
