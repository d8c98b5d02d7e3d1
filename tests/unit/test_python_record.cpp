// Unit tests for dist-info RECORD parsing: the CSV forms csv.writer produces, hashes and sizes,
// and one exact error text for every kind of malformed row.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>

#include "python/record.hpp"

namespace ROOTLOCK_UNIT_ID {

using rootlock::python::parse_record;
using rootlock::python::RecordEntry;
using namespace std::string_literals;

namespace {

const std::string k_name = "site-packages/x-1.0.dist-info/RECORD";
// sha256 of the empty file, as pip writes it.
const std::string k_empty_sha256 = "47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU";

}  // namespace

TEST_SUITE("rootlock::python") {
    TEST_CASE("a RECORD as pip writes it parses into paths, hashes and sizes") {
        const std::string text = "x/__init__.py,sha256=" + k_empty_sha256 +
                                 ",0\n"
                                 "x-1.0.dist-info/RECORD,,\n"
                                 "x/__pycache__/__init__.cpython-311.pyc,,\n"
                                 "../../../bin/x,sha256=" +
                                 k_empty_sha256 + ",123\n";
        auto parsed = parse_record(text, k_name);
        REQUIRE(parsed.ok());
        const auto& entries = parsed.value();
        REQUIRE(entries.size() == 4);
        CHECK(entries[0].path == "x/__init__.py");
        CHECK(entries[0].hash_algorithm == "sha256");
        CHECK(entries[0].hash_value == k_empty_sha256);
        CHECK(entries[0].size == 0U);
        CHECK(entries[1].path == "x-1.0.dist-info/RECORD");
        CHECK(entries[1].hash_algorithm.empty());
        CHECK(entries[1].hash_value.empty());
        CHECK_FALSE(entries[1].size.has_value());
        CHECK(entries[3].path == "../../../bin/x");
        CHECK(entries[3].size == 123U);
    }

    TEST_CASE("quoted fields keep commas, doubled quotes and newlines") {
        const std::string text = "\"a,b.py\",,\r\n\"say \"\"hi\"\".txt\",,\n\"two\nlines\",,";
        auto parsed = parse_record(text, k_name);
        REQUIRE(parsed.ok());
        REQUIRE(parsed->size() == 3);
        CHECK((*parsed)[0].path == "a,b.py");
        CHECK((*parsed)[1].path == "say \"hi\".txt");
        CHECK((*parsed)[2].path == "two\nlines");
    }

    TEST_CASE("an empty RECORD has no entries and a missing final newline is fine") {
        CHECK(parse_record("", k_name)->empty());
        auto parsed = parse_record("a,,", k_name);
        REQUIRE(parsed.ok());
        REQUIRE(parsed->size() == 1);
        CHECK((*parsed)[0].path == "a");
    }

    TEST_CASE("sha384 and sha512 digests are accepted at their lengths") {
        const std::string text =
            "a,sha384=" + std::string(64, 'A') + ",\nb,sha512=" + std::string(86, '_') + ",1\n";
        auto parsed = parse_record(text, k_name);
        REQUIRE(parsed.ok());
        CHECK((*parsed)[0].hash_algorithm == "sha384");
        CHECK((*parsed)[1].hash_algorithm == "sha512");
    }

    TEST_CASE("hex digests as Debian writes them are accepted and marked") {
        const std::string hex = "d79a1767390aacff6e55d4b2a2350556ac2677dd8692faaada633f7d4f4112c2";
        auto parsed =
            parse_record("a,sha256=" + hex + ",1826\nb,sha256=" + k_empty_sha256 + ",0\n", k_name);
        REQUIRE(parsed.ok());
        CHECK((*parsed)[0].hash_is_hex);
        CHECK((*parsed)[0].hash_value == hex);
        CHECK_FALSE((*parsed)[1].hash_is_hex);
    }

    TEST_CASE("malformed RECORD rows are rejected with located errors") {
        struct Case {
            std::string text;
            std::string error;
        };
        const std::string good = "ok.py,,\nok2.py,,\n";
        const std::string e = k_name + ":";
        const Case cases[] = {
            {good + "a,b\n", e + "3: expected 3 fields, found 2"},
            {"a,,,\n", e + "1: expected 3 fields, found 4"},
            {"a\n", e + "1: expected 3 fields, found 1"},
            {good + "\"a,,\n", e + "3:1: unterminated quoted field"},
            {"x,\"sha\n\n", e + "1:3: unterminated quoted field"},
            {"\"a\"b,,\n", e + "1:4: unexpected character after closing quote"},
            {"a\"b,,\n", e + "1:2: quote inside an unquoted field"},
            {"a,b\rc,\n", e + "1:4: carriage return inside a field"},
            {"ok,,\n\nb,,\n", e + "2: empty line"},
            {"a,sha256,\n", e + "1: hash \"sha256\" is not of the form algorithm=digest"},
            {"a,=abc,\n", e + "1: hash \"=abc\" is not of the form algorithm=digest"},
            {"a,md5=1B2M2Y8AsgTpgAmY7PhCfg,\n",
             e + "1: hash algorithm md5 is not allowed (the wheel spec asks for sha256 or "
                 "stronger)"},
            {"a,sha1=2jmj7l5rSw0yVb_vlWAYkK_YBwk,\n",
             e + "1: hash algorithm sha1 is not allowed (the wheel spec asks for sha256 or "
                 "stronger)"},
            {"a,crc32=AAAAAA,\n", e + "1: unknown hash algorithm \"crc32\""},
            {"a,sha256=47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU,\n",
             e + "1: digest \"47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU\" is not urlsafe "
                 "base64 without padding"},
            {"a,sha256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU=,\n",
             e + "1: digest \"47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU=\" is not urlsafe "
                 "base64 without padding"},
            {"a,sha256=abc,\n",
             e + "1: sha256 digest has 3 characters, expected 43 (base64) or 64 (hex)"},
            {"a,sha256=" + std::string(64, 'A') + ",\n",
             e + "1: sha256 digest has 64 characters but is not lowercase hex"},
            {"a,,12a\n", e + "1: size \"12a\" is not a decimal number"},
            {"a,,-1\n", e + "1: size \"-1\" is not a decimal number"},
            {"a,, 1\n", e + "1: size \" 1\" is not a decimal number"},
            {"a,,99999999999999999999\n", e + "1: size 99999999999999999999 is too large"},
            {"/etc/passwd,,\n", e + "1: path \"/etc/passwd\" is absolute"},
            {good + "ab\0c,,\n"s, e + "3:3: NUL byte"},
            {"\"a\0\",,\n"s, e + "1:3: NUL byte"},
            {",,\n", e + "1: empty path"},
            {"\"\",,\n", e + "1: empty path"},
        };
        for (const Case& c : cases) {
            CAPTURE(c.text);
            auto parsed = parse_record(c.text, k_name);
            REQUIRE_FALSE(parsed.ok());
            CHECK(parsed.error().text() == c.error);
        }
    }

    TEST_CASE("mangled RECORDs give a result or a located error, never a crash") {
        const std::string seed_text =
            "a/b.py,sha256=" + k_empty_sha256 + ",0\r\n\"q,\"\"x\",,\n../../../bin/t,,12\n";
        uint32_t state = 12345;  // a fixed LCG: the same inputs on every run
        auto next = [&] {
            state = state * 1103515245U + 12345U;
            return state >> 16;
        };
        const char alphabet[] = {',', '"', '\r', '\n', '\0', '=', '/', 'a', '9', '-'};
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
            if (next() % 3 == 0)
                text.resize(next() % (text.size() + 1));
            auto parsed = parse_record(text, k_name);
            if (!parsed.ok())
                CHECK(parsed.error().text().rfind(k_name + ":", 0) == 0);
        }
    }

    TEST_CASE("an error after a multi-line quoted field names the row's first line") {
        auto parsed = parse_record("ok,,\n\"a\nb\",,,\n", k_name);
        REQUIRE_FALSE(parsed.ok());
        CHECK(parsed.error().text() == k_name + ":2: expected 3 fields, found 4");
    }
}

}  // namespace ROOTLOCK_UNIT_ID
