// Inputs the fuzz targets found (fuzz/regressions/ replays the same bytes in `make fuzz-smoke`):
// each case is a parser's promise that one of them broke, asserted exactly.
#include <doctest/doctest.h>

#include <cstring>
#include <memory>
#include <string>
#include <string_view>

#include "python/pep440.hpp"
#include "python/pep508.hpp"
#include "python/record.hpp"

using rootlock::python::parse_marker;
using rootlock::python::parse_record;
using rootlock::python::parse_requirement;
using rootlock::python::parse_specifiers;

TEST_SUITE("rootlock::python") {
    TEST_CASE("a RECORD whose text ends right after a comma reads an empty last field") {
        // Exactly three bytes on the heap, no terminator after them: under ASan (make
        // unit-asan) the reader used to read the byte past the final comma.
        const std::string_view row = "a,,";
        auto bytes = std::make_unique<char[]>(row.size());
        std::memcpy(bytes.get(), row.data(), row.size());
        auto parsed = parse_record(std::string_view(bytes.get(), row.size()), "RECORD");
        REQUIRE(parsed.ok());
        REQUIRE(parsed->size() == 1);
        CHECK(parsed->front().path == "a");
        CHECK(parsed->front().hash_algorithm.empty());
        CHECK_FALSE(parsed->front().size.has_value());
    }

    TEST_CASE("a marker string holding a double quote is written in single quotes") {
        auto marker = parse_marker("os_name == 'a\"b' or extra == \"gpu\"");
        REQUIRE(marker.ok());
        const std::string written = to_string(*marker);
        CHECK(written == "os_name == 'a\"b' or extra == \"gpu\"");
        auto again = parse_marker(written);
        REQUIRE(again.ok());
        CHECK(to_string(*again) == written);
    }

    TEST_CASE("a requirement with such a marker writes out as a requirement that parses") {
        auto requirement = parse_requirement("x>=1; platform_release != '5\"x'");
        REQUIRE(requirement.ok());
        const std::string written = to_string(*requirement);
        CHECK(written == "x>=1; platform_release != '5\"x'");
        CHECK(parse_requirement(written).ok());
    }

    TEST_CASE("an arbitrary '===' version stops short of ';' and ')', as packaging's does") {
        auto set = parse_specifiers("===a;b");
        REQUIRE_FALSE(set.ok());
        CHECK(set.error().text() == "\"===a;b\":5: unexpected ';' inside an arbitrary version");
        CHECK_FALSE(parse_specifiers("===a)b").ok());
        CHECK(parse_specifiers("===a(b").ok());
        // What the fuzzer found: parsed in parentheses, written without them, read as a marker.
        CHECK_FALSE(parse_requirement("reque(===3.34.===2.8.*pyt;hon_full_version)").ok());
        auto plain = parse_requirement("x (===a)");
        REQUIRE(plain.ok());
        CHECK(to_string(*plain) == "x===a");
    }
}
