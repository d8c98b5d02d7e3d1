// Unit tests for Debian versions: parsing into epoch, upstream and revision, dpkg's ordering
// (every expected result was checked against `dpkg --compare-versions` on Debian 12) and errors.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "debian/deb_version.hpp"

using rootlock::debian::compare_deb_versions;
using rootlock::debian::DebVersion;
using rootlock::debian::parse_deb_version;
using rootlock::debian::to_string;

namespace {

int sign(int value) {
    return (value > 0) - (value < 0);
}

}  // namespace

TEST_SUITE("rootlock::debian") {
    TEST_CASE("a version splits into epoch, upstream and revision as dpkg splits it") {
        struct Case {
            std::string text;
            DebVersion expected;
        };
        const Case cases[] = {
            {"1.0", {0, "1.0", ""}},
            {"1:2.36-9+deb12u14", {1, "2.36", "9+deb12u14"}},
            {"0:1.0-1", {0, "1.0", "1"}},
            {"1.0-1-2", {0, "1.0-1", "2"}},  // the revision follows the last '-'
            {"1:1:1", {1, "1:1", ""}},       // ':' after the epoch belongs to upstream
            {"2147483647:1", {2147483647, "1", ""}},
            {" 1.0-1 ", {0, "1.0", "1"}},  // dpkg trims blanks around a version
            {"3.11.2-1+b1", {0, "3.11.2", "1+b1"}},
            {"1.0~rc1+dfsg-0.1~bpo12+1", {0, "1.0~rc1+dfsg", "0.1~bpo12+1"}},
            {"007", {0, "007", ""}},
        };
        for (const Case& c : cases) {
            CAPTURE(c.text);
            auto parsed = parse_deb_version(c.text);
            REQUIRE(parsed.ok());
            CHECK(parsed.value() == c.expected);
        }
    }

    TEST_CASE("to_string writes the epoch only when it is not zero") {
        CHECK(to_string(parse_deb_version("0:1.0-1").value()) == "1.0-1");
        CHECK(to_string(parse_deb_version("2:1.0").value()) == "2:1.0");
        CHECK(to_string(parse_deb_version("1.2.3-0").value()) == "1.2.3-0");
        CHECK(to_string(DebVersion{3, "1:2", "a"}) == "3:1:2-a");
    }

    TEST_CASE("versions order exactly as dpkg --compare-versions orders them") {
        struct Pair {
            const char* a;
            const char* b;
            int expected;  // sign of compare(a, b)
        };
        const Pair pairs[] = {
            {"1.0~rc1", "1.0", -1},
            {"1.0", "1.0+b1", -1},
            {"1:0.1", "2.0", 1},
            {"1.0-1", "1.0-1.1", -1},
            // '~' sorts before everything, even the end: ~~ < ~~a < ~ < (end) < a
            {"1.0~~", "1.0~~a", -1},
            {"1.0~~a", "1.0~", -1},
            {"1.0~", "1.0", -1},
            {"1.0", "1.0a", -1},
            {"1.0", "1.0~~", 1},
            {"1.0+~", "1.0+", -1},
            {"1.0~", "1.0~0", 0},  // a trailing zero run weighs what the end does
            // an empty revision and "0" are the same to verrevcmp
            {"1.2.3", "1.2.3-0", 0},
            {"1.0-0", "1.0", 0},
            {"1.2.3", "1.2.3-1", -1},
            {"1.0-0.1", "1.0", 1},
            {"1.0-0.0", "1.0-0", 1},
            {"1.0.0-0", "1.0", 1},
            // epochs
            {"0:1.0", "1.0", 0},
            {"0:0", "0", 0},
            {"1:1.0", "1:1.0", 0},
            {"2:0", "1:9999", 1},
            {"5:0", "4:99", 1},
            {"1:2.0-1", "1:2.0-1", 0},
            // numbers compare as numbers, leading zeros ignored
            {"1.0", "1.00", 0},
            {"1.0", "1.000", 0},
            {"1.01", "1.1", 0},
            {"009", "9", 0},
            {"9", "10", -1},
            {"2.0", "10.0", -1},
            {"1.0-2", "1.0-10", -1},
            {"1.0-1", "1.0-01", 0},
            {"1.18.36", "1.18.35", 1},
            {"1.18.36", "1.18.36.1", -1},
            {"1.18.36.1", "1.18.36~", 1},
            {"1.0", "1.0.0", -1},
            {"1.0.0", "1.0", 1},
            // letters sort by ASCII, and below every other non-digit
            {"1.0a", "1.0b", -1},
            {"1.0a", "1.0A", 1},
            {"1.0A", "1.0+", -1},
            {"1.0+", "1.0.", -1},
            {"1.0.1", "1.0a", 1},
            {"1.2a", "1.2.a", -1},
            {"1.2-3a", "1.2-3.a", -1},
            {"1.0-a", "1.0-b", -1},
            // pre-releases
            {"1.0~beta", "1.0~alpha", 1},
            {"1.0~alpha", "1.0~alpha1", -1},
            {"1.0~alpha1", "1.0~alpha2", -1},
            {"1.0~rc1", "1.0~rc1.1", -1},
            // the forms Debian's archive uses
            {"1.0+dfsg", "1.0", 1},
            {"1.0+dfsg-1", "1.0-1", 1},
            {"2.36-9+deb12u4", "2.36-9+deb12u10", -1},
            {"2.36-9+deb12u10", "2.36-9+deb12u14", -1},
            {"3.11.2-1", "3.11.2-1+b1", -1},
            {"12.2.0-14", "12.2.0-14+deb12u1", -1},
            {"1.0-1~bpo12+1", "1.0-1", -1},
            {"1.0-1", "1.0-1+deb12u1", -1},
            {"1.0-1+deb12u1", "1.0-2", -1},
            {"7.88.1-10+deb12u8", "7.88.1-10+deb12u12", -1},
            {"1.1.1k-1", "1.1.1n-0+deb11u3", -1},
            {"2.38.1-5+deb12u3", "2.38.1-5+b1", 1},
        };
        for (const Pair& p : pairs) {
            CAPTURE(p.a);
            CAPTURE(p.b);
            const auto a = parse_deb_version(p.a);
            const auto b = parse_deb_version(p.b);
            REQUIRE(a.ok());
            REQUIRE(b.ok());
            CHECK(sign(compare_deb_versions(a.value(), b.value())) == p.expected);
            CHECK(sign(compare_deb_versions(b.value(), a.value())) == -p.expected);
            CHECK(sign(compare_deb_versions(std::string_view(p.a), std::string_view(p.b))) ==
                  p.expected);
        }
    }

    TEST_CASE("sorting texts puts versions that do not parse first, ordered as strings") {
        std::vector<std::string> texts = {"1.0", "b", "1.0~rc1", "", "a", "1:0.1", "0.9"};
        std::sort(texts.begin(), texts.end(), [](const std::string& x, const std::string& y) {
            return compare_deb_versions(std::string_view(x), std::string_view(y)) < 0;
        });
        const std::vector<std::string> expected = {"", "a", "b", "0.9", "1.0~rc1", "1.0", "1:0.1"};
        CHECK(texts == expected);
        CHECK(compare_deb_versions(std::string_view("x"), std::string_view("x")) == 0);
    }

    TEST_CASE("malformed versions are refused, including what dpkg only warns about") {
        struct Case {
            std::string text;
            std::string error;
        };
        const Case cases[] = {
            {"", "\"\": an empty version"},
            {"  ", "\"  \": an empty version"},
            {"1 0", "\"1 0\": a blank inside the version"},
            {"1.0\t-1", "\"1.0\\x09-1\": a blank inside the version"},
            {"1:", "\"1:\": nothing after the epoch"},
            {":1", "\":1\": the epoch is empty"},
            {"a:1", "\"a:1\": the epoch is not a number"},
            {"+1:1", "\"+1:1\": the epoch is not a number"},  // strtol would take it
            {"-1:1", "\"-1:1\": the epoch is not a number"},
            {"1a:1", "\"1a:1\": the epoch is not a number"},
            {"0x1:1", "\"0x1:1\": the epoch is not a number"},
            {"1.0-1:2", "\"1.0-1:2\": the epoch is not a number"},
            {"2147483648:1", "\"2147483648:1\": the epoch is too large"},
            {"99999999999999999999:1", "\"99999999999999999999:1\": the epoch is too large"},
            {"1.0-", "\"1.0-\": the revision is empty"},
            {"-1", "\"-1\": the upstream version is empty"},
            {"1:-1", "\"1:-1\": the upstream version is empty"},
            {"a", "\"a\": the upstream version does not start with a digit"},
            {"1:a", "\"1:a\": the upstream version does not start with a digit"},
            {"~1", "\"~1\": the upstream version does not start with a digit"},
            {"1_0", "\"1_0\": invalid character '_' in the upstream version"},
            {"1.0/2", "\"1.0/2\": invalid character '/' in the upstream version"},
            {"1.0\x01", "\"1.0\\x01\": invalid character '\\x01' in the upstream version"},
            {"1.0-a_b", "\"1.0-a_b\": invalid character '_' in the revision"},
            {"1.0-1:b-2", "\"1.0-1:b-2\": the epoch is not a number"},
            {"1:1.0-1:2", "\"1:1.0-1:2\": invalid character ':' in the revision"},
            {"1\"", "\"1\\\"\": invalid character '\\\"' in the upstream version"},
        };
        for (const Case& c : cases) {
            CAPTURE(c.text);
            auto parsed = parse_deb_version(c.text);
            REQUIRE_FALSE(parsed.ok());
            CHECK(parsed.error().text() == c.error);
        }
    }
}
