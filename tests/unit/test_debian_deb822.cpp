// Unit tests for deb822 paragraphs: fields, continuation lines, comments and blank-line
// separators, and one exact error text for every kind of malformed line.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>

#include "debian/deb822.hpp"

using rootlock::debian::Paragraph;
using rootlock::debian::parse_deb822;
using namespace std::string_literals;

namespace {

const std::string k_name = "Packages";

}  // namespace

TEST_SUITE("rootlock::debian") {
    TEST_CASE("paragraphs hold their fields in order with the lines they start on") {
        const std::string text =
            "Package: hello\n"
            "Version:   2.10-3  \n"
            "Depends: libc6 (>= 2.34)\n"
            "\n"
            "\n"
            "Package: bye\n"
            "Architecture:all";
        auto parsed = parse_deb822(text, k_name);
        REQUIRE(parsed.ok());
        REQUIRE(parsed->size() == 2);
        const Paragraph& first = (*parsed)[0];
        CHECK(first.line == 1);
        REQUIRE(first.fields.size() == 3);
        CHECK(first.fields[0].name == "Package");
        CHECK(first.fields[0].value == "hello");
        CHECK(first.fields[1].value == "2.10-3");
        CHECK(first.fields[2].line == 3);
        const Paragraph& second = (*parsed)[1];
        CHECK(second.line == 6);
        CHECK(second.fields[1].name == "Architecture");
        CHECK(second.fields[1].value == "all");
        CHECK(second.fields[1].line == 7);
    }

    TEST_CASE("continuation lines join with newlines and a lone dot becomes an empty line") {
        const std::string text =
            "Description: short summary\n"
            " First line of the long text.\n"
            " .\n"
            "  indented verbatim  \n"
            "\tafter a tab\n"
            "Conffiles:\n"
            " /etc/a.conf 0123\n";
        auto parsed = parse_deb822(text, k_name);
        REQUIRE(parsed.ok());
        REQUIRE(parsed->size() == 1);
        const Paragraph& p = (*parsed)[0];
        CHECK(*p.get("Description") ==
              "short summary\nFirst line of the long text.\n\n indented verbatim\nafter a tab");
        CHECK(*p.get("Conffiles") == "\n/etc/a.conf 0123");
        CHECK(p.fields[1].line == 6);
    }

    TEST_CASE("field names are looked up case-insensitively") {
        auto parsed = parse_deb822("Pre-Depends: dpkg\nSHA256: ab\n", k_name);
        REQUIRE(parsed.ok());
        const Paragraph& p = (*parsed)[0];
        REQUIRE(p.get("pre-depends") != nullptr);
        CHECK(*p.get("PRE-DEPENDS") == "dpkg");
        CHECK(*p.get("sha256") == "ab");
        CHECK(p.get("Pre-Depend") == nullptr);
        CHECK(p.get("Missing") == nullptr);
    }

    TEST_CASE("comments are skipped and blank-only lines separate paragraphs") {
        const std::string text =
            "# a comment before anything\n"
            "A: 1\n"
            "# a comment inside\n"
            " continued\n"
            " \t \n"
            "B: 2\n"
            "#\n";
        auto parsed = parse_deb822(text, k_name);
        REQUIRE(parsed.ok());
        REQUIRE(parsed->size() == 2);
        CHECK(*(*parsed)[0].get("A") == "1\ncontinued");
        CHECK((*parsed)[0].line == 2);
        CHECK((*parsed)[1].line == 6);
    }

    TEST_CASE("empty text, blank lines and comments alone hold no paragraph") {
        CHECK(parse_deb822("", k_name)->empty());
        CHECK(parse_deb822("\n\n  \n", k_name)->empty());
        CHECK(parse_deb822("# only\n", k_name)->empty());
    }

    TEST_CASE("an empty value is kept as an empty string") {
        auto parsed = parse_deb822("Empty:\nNext: x\n", k_name);
        REQUIRE(parsed.ok());
        CHECK(*(*parsed)[0].get("Empty") == "");
    }

    TEST_CASE("malformed deb822 lines are rejected with the file and line") {
        struct Case {
            std::string text;
            std::string error;
        };
        const std::string e = k_name + ":";
        const Case cases[] = {
            {" indented\n", e + "1: a continuation line before any field"},
            {"A: 1\n\n b\n", e + "3: a continuation line before any field"},
            {"# c\n continued\n", e + "2: a continuation line before any field"},
            {"Package: a\nVersion: 1\nPackage: b\n",
             e + "3: \"Package\" appears twice in one paragraph"},
            {"package: a\nPACKAGE: b\n", e + "2: \"PACKAGE\" appears twice in one paragraph"},
            {"A: 1\n\nA: 2\nB: 3\nA: 4\n", e + "5: \"A\" appears twice in one paragraph"},
            {"Package: a\nno colon here\n", e + "2: a line without ':'"},
            {"-----BEGIN PGP SIGNED MESSAGE-----\n", e + "1: a line without ':'"},
            {"A: 1\n: value\n", e + "2: an empty field name"},
            {"Foo Bar: x\n", e + "1: an invalid field name \"Foo Bar\""},
            {"-Foo: x\n", e + "1: an invalid field name \"-Foo\""},
            {"\x01"
             "A: x\n",
             e + "1: an invalid field name \"\\x01A\""},
            {"A\xc3\xa9: x\n", e + "1: an invalid field name \"A\xc3\xa9\""},
            {"A: b\0c\n"s, e + "1: a NUL byte"},
            {"A: 1\n b\0\n"s, e + "2: a NUL byte"},
            {"A: 1\r\n", e + "1: a carriage return"},
            {"A: 1\n\r\n", e + "2: a carriage return"},
            {"A: " + std::string(size_t{1} << 20, 'x') + "\n", e + "1: a line longer than 1 MiB"},
        };
        for (const Case& c : cases) {
            CAPTURE(c.text.substr(0, 40));
            auto parsed = parse_deb822(c.text, k_name);
            REQUIRE_FALSE(parsed.ok());
            CHECK(parsed.error().text() == c.error);
        }
    }

    TEST_CASE("a line of exactly 1 MiB is still read") {
        const std::string text = "A: " + std::string((size_t{1} << 20) - 3, 'x') + "\n";
        auto parsed = parse_deb822(text, k_name);
        REQUIRE(parsed.ok());
        CHECK((*parsed)[0].fields[0].value.size() == (size_t{1} << 20) - 3);
    }

    TEST_CASE("mangled control text gives paragraphs or a located error, never a crash") {
        const std::string seed_text =
            "Package: a\nDescription: x\n y\n .\n\nPackage: b\n# c\nDepends: a\n";
        uint32_t state = 4242;  // a fixed LCG: the same inputs on every run
        auto next = [&] {
            state = state * 1103515245U + 12345U;
            return state >> 16;
        };
        const char alphabet[] = {':', ' ', '\t', '\n', '\0', '#', '.', 'a', '-', '\r'};
        for (int round = 0; round < 3000; ++round) {
            std::string text = seed_text;
            const uint32_t edits = 1 + next() % 4;
            for (uint32_t i = 0; i < edits; ++i) {
                const size_t at = next() % (text.size() + 1);
                const char c = alphabet[next() % sizeof(alphabet)];
                if (next() % 2 == 0 && at < text.size()) {
                    text[at] = c;
                } else {
                    text.insert(at, 1, c);
                }
            }
            auto parsed = parse_deb822(text, k_name);
            if (!parsed.ok())
                CHECK(parsed.error().text().rfind(k_name + ":", 0) == 0);
        }
    }
}
