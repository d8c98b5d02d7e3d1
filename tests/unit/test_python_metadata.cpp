// Unit tests for core metadata parsing (METADATA, PKG-INFO) and PEP 503 name normalisation,
// with one exact error text for every kind of malformed header block.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>

#include "python/metadata.hpp"

using rootlock::python::is_valid_project_name;
using rootlock::python::normalize_name;
using rootlock::python::parse_metadata;
using namespace std::string_literals;

namespace {

const std::string k_name = "site-packages/torch-2.8.0.dist-info/METADATA";

}  // namespace

TEST_SUITE("rootlock::python") {
    TEST_CASE("metadata headers give name, version, requirements and Requires-Python") {
        const std::string text =
            "Metadata-Version: 2.1\r\n"
            "Name: torch\r\n"
            "Version: 2.8.0\r\n"
            "Requires-Python: >=3.9.0\r\n"
            "Requires-Dist: filelock\r\n"
            "Requires-Dist: nvidia-cudnn-cu12==9.10.2.21; platform_system == \"Linux\" and\r\n"
            "  platform_machine == \"x86_64\"\r\n"
            "requires-dist: sympy>=1.13.3\r\n"
            "\r\n"
            "Name: not-a-header, this is the description\r\n";
        auto parsed = parse_metadata(text, k_name);
        REQUIRE(parsed.ok());
        CHECK(parsed->metadata_version == "2.1");
        CHECK(parsed->name == "torch");
        CHECK(parsed->version == "2.8.0");
        CHECK(parsed->requires_python == ">=3.9.0");
        REQUIRE(parsed->requires_dist.size() == 3);
        CHECK(parsed->requires_dist[0] == "filelock");
        CHECK(parsed->requires_dist[1] ==
              "nvidia-cudnn-cu12==9.10.2.21; platform_system == \"Linux\" and "
              "platform_machine == \"x86_64\"");
        CHECK(parsed->requires_dist[2] == "sympy>=1.13.3");
        CHECK(parsed->headers.size() == 7);
        CHECK(parsed->headers[6].first == "requires-dist");
    }

    TEST_CASE("metadata without Requires-Python or a body parses") {
        auto parsed = parse_metadata("Name: six\nVersion: 1.16.0", k_name);
        REQUIRE(parsed.ok());
        CHECK_FALSE(parsed->requires_python.has_value());
        CHECK(parsed->metadata_version.empty());
        CHECK(parsed->requires_dist.empty());
    }

    TEST_CASE("names normalise per PEP 503 whatever their spelling") {
        CHECK(normalize_name("nvidia_cudnn_cu13") == "nvidia-cudnn-cu13");
        CHECK(normalize_name("nvidia-cudnn-cu13") == "nvidia-cudnn-cu13");
        CHECK(normalize_name("NVIDIA.CUDNN.CU13") == "nvidia-cudnn-cu13");
        CHECK(normalize_name("Foo__.-Bar") == "foo-bar");
        CHECK(is_valid_project_name("a"));
        CHECK(is_valid_project_name("zope.interface"));
        CHECK_FALSE(is_valid_project_name("-a"));
        CHECK_FALSE(is_valid_project_name("a_"));
        CHECK_FALSE(is_valid_project_name("a b"));
    }

    TEST_CASE("mangled metadata gives a result or a located error, never a crash") {
        const std::string seed_text =
            "Metadata-Version: 2.1\r\nName: a.b\nVersion: 1\nRequires-Dist: x;\n  y\n\nbody\n";
        uint32_t state = 54321;  // a fixed LCG: the same inputs on every run
        auto next = [&] {
            state = state * 1103515245U + 12345U;
            return state >> 16;
        };
        const char alphabet[] = {':', ' ', '\t', '\r', '\n', '\0', '-', 'N', 'a'};
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
            auto parsed = parse_metadata(text, k_name);
            if (!parsed.ok())
                CHECK(parsed.error().text().rfind(k_name, 0) == 0);
        }
    }

    TEST_CASE("malformed metadata is rejected with located errors") {
        struct Case {
            std::string text;
            std::string error;
        };
        const std::string e = k_name;
        const Case cases[] = {
            {"", e + ": missing Name header"},
            {"Version: 1.0\n", e + ": missing Name header"},
            {"Name: a\n", e + ": missing Version header"},
            {"Name: a\n\nVersion: 1.0\n", e + ": missing Version header"},
            {"Name: a\nVersion 1.0\n", e + ":2: expected \"Field: value\", found \"Version 1.0\""},
            {"Name: a\n" + std::string(70, 'x') + "\n",
             e + ":2: expected \"Field: value\", found \"" + std::string(60, 'x') + "...\""},
            {" Name: a\n", e + ":1: continuation line before any header"},
            {": a\n", e + ":1: header without a field name"},
            {"Na me: a\n", e + ":1: invalid header field name \"Na me\""},
            {"Name: a\nVersion: 1\nname: b\n", e + ":3: duplicate Name header (first on line 1)"},
            {"Name: a\nVersion: 1\nVersion: 2\n",
             e + ":3: duplicate Version header (first on line 2)"},
            {"Name: a\nVersion: 1\nRequires-Python: >=3\nRequires-Python: <4\n",
             e + ":4: duplicate Requires-Python header (first on line 3)"},
            {"Name:\nVersion: 1\n", e + ":1: empty Name header"},
            {"Name: a\nVersion:  \n", e + ":2: empty Version header"},
            {"Name: -a-\nVersion: 1\n", e + ":1: invalid project name \"-a-\""},
            {"Name: a b\nVersion: 1\n", e + ":1: invalid project name \"a b\""},
            {"Name: a\nVer\0sion: 1\n"s, e + ":2:4: NUL byte"},
        };
        for (const Case& c : cases) {
            CAPTURE(c.text);
            auto parsed = parse_metadata(c.text, k_name);
            REQUIRE_FALSE(parsed.ok());
            CHECK(parsed.error().text() == c.error);
        }
    }
}
