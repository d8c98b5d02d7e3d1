// Unit tests for wheel file name parsing: real torch and NVIDIA names, compressed tag sets,
// percent-encoded index names, and one exact error text for every kind of malformed name.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "python/wheel_filename.hpp"

using rootlock::python::parse_wheel_filename;
using rootlock::python::percent_decode;
using rootlock::python::Tag;

TEST_SUITE("rootlock::python") {
    TEST_CASE("a torch wheel name gives name, version with local part and one tag") {
        const auto wheel =
            parse_wheel_filename("torch-2.8.0+cu128-cp311-cp311-manylinux_2_28_x86_64.whl");
        REQUIRE(wheel.ok());
        CHECK(wheel->filename == "torch-2.8.0+cu128-cp311-cp311-manylinux_2_28_x86_64.whl");
        CHECK(wheel->name == "torch");
        CHECK(wheel->normalized_name == "torch");
        CHECK(wheel->version == "2.8.0+cu128");
        CHECK_FALSE(wheel->build_tag.has_value());
        REQUIRE(wheel->tags.size() == 1);
        CHECK(wheel->tags[0] == Tag{"cp311", "cp311", "manylinux_2_28_x86_64"});
        CHECK(wheel->tags[0].text() == "cp311-cp311-manylinux_2_28_x86_64");
    }

    TEST_CASE("a percent-encoded index name is decoded before parsing") {
        const auto wheel =
            parse_wheel_filename("torch-2.8.0%2Bcu128-cp311-cp311-manylinux_2_28_x86_64.whl");
        REQUIRE(wheel.ok());
        CHECK(wheel->filename == "torch-2.8.0+cu128-cp311-cp311-manylinux_2_28_x86_64.whl");
        CHECK(wheel->version == "2.8.0+cu128");
        const auto lower =
            parse_wheel_filename("torch-2.8.0%2bcu128-cp313-cp313-manylinux_2_28_x86_64.whl");
        REQUIRE(lower.ok());
        CHECK(lower->version == "2.8.0+cu128");
    }

    TEST_CASE("the distribution name is kept as written and normalised for comparison") {
        const auto wheel =
            parse_wheel_filename("nvidia_cudnn_cu12-9.10.2.21-py3-none-manylinux_2_27_x86_64.whl");
        REQUIRE(wheel.ok());
        CHECK(wheel->name == "nvidia_cudnn_cu12");
        CHECK(wheel->normalized_name == "nvidia-cudnn-cu12");
        CHECK(wheel->version == "9.10.2.21");
        REQUIRE(wheel->tags.size() == 1);
        CHECK(wheel->tags[0] == Tag{"py3", "none", "manylinux_2_27_x86_64"});

        const auto dotted = parse_wheel_filename("Zope.Interface-6.0-cp311-cp311-linux_x86_64.whl");
        REQUIRE(dotted.ok());
        CHECK(dotted->name == "Zope.Interface");
        CHECK(dotted->normalized_name == "zope-interface");
    }

    TEST_CASE("compressed platform tags expand into one triple each, in written order") {
        const auto wheel = parse_wheel_filename(
            "nvidia_cuda_cupti_cu12-12.8.90-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64."
            "whl");
        REQUIRE(wheel.ok());
        const std::vector<Tag> expected{
            {"py3", "none", "manylinux2014_x86_64"},
            {"py3", "none", "manylinux_2_17_x86_64"},
        };
        CHECK(wheel->tags == expected);

        const auto triton = parse_wheel_filename(
            "triton-3.4.0-cp313-cp313-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl");
        REQUIRE(triton.ok());
        CHECK(triton->tags.size() == 2);
    }

    TEST_CASE("every compressed tag set multiplies into the full cartesian product") {
        const auto wheel = parse_wheel_filename(
            "demo-1.0-cp311.cp312-cp311.abi3-manylinux_2_17_x86_64.linux_x86_64.whl");
        REQUIRE(wheel.ok());
        REQUIRE(wheel->tags.size() == 8);
        CHECK(wheel->tags.front() == Tag{"cp311", "cp311", "manylinux_2_17_x86_64"});
        CHECK(wheel->tags[1] == Tag{"cp311", "cp311", "linux_x86_64"});
        CHECK(wheel->tags[2] == Tag{"cp311", "abi3", "manylinux_2_17_x86_64"});
        CHECK(wheel->tags.back() == Tag{"cp312", "abi3", "linux_x86_64"});
    }

    TEST_CASE("a repeated tag is listed once and tags are lowercased") {
        const auto wheel = parse_wheel_filename("demo-1.0-CP311.cp311-Abi3-ANY.whl");
        REQUIRE(wheel.ok());
        REQUIRE(wheel->tags.size() == 1);
        CHECK(wheel->tags[0] == Tag{"cp311", "abi3", "any"});
    }

    TEST_CASE("a build tag starting with a digit is kept") {
        const auto wheel = parse_wheel_filename("demo-1.0-1_post-py3-none-any.whl");
        REQUIRE(wheel.ok());
        REQUIRE(wheel->build_tag.has_value());
        CHECK(*wheel->build_tag == "1_post");
        CHECK(wheel->tags == std::vector<Tag>{{"py3", "none", "any"}});
    }

    TEST_CASE("percent decoding rejects truncated, non-hex and NUL escapes") {
        CHECK(*percent_decode("a%2Bb%2fc") == "a+b/c");
        CHECK(percent_decode("a%2").error().text() == "bad percent escape at offset 1");
        CHECK(percent_decode("%zz").error().text() == "bad percent escape at offset 0");
        CHECK(percent_decode("x%00").error().text() == "percent escape decodes to NUL at offset 1");
    }

    TEST_CASE("malformed wheel names give one exact error each") {
        struct Case {
            std::string name;
            std::string error;
        };
        const std::vector<Case> cases{
            {"", "empty file name"},  // an empty where: text() is the message alone
            {"torch-2.8.0-cp311-cp311-manylinux_2_28_x86_64.zip",
             "torch-2.8.0-cp311-cp311-manylinux_2_28_x86_64.zip: not a wheel file name (no .whl "
             "suffix)"},
            {".whl", ".whl: expected 5 or 6 '-'-separated fields, found 1"},
            {"torch-2.8.0-cp311-manylinux_2_28_x86_64.whl",
             "torch-2.8.0-cp311-manylinux_2_28_x86_64.whl: expected 5 or 6 '-'-separated fields, "
             "found 4"},
            {"a-b-1-c-d-e-f.whl",
             "a-b-1-c-d-e-f.whl: expected 5 or 6 '-'-separated fields, found 7"},
            {"-1.0-py3-none-any.whl", "-1.0-py3-none-any.whl: empty distribution name"},
            {"_torch-1.0-py3-none-any.whl",
             "_torch-1.0-py3-none-any.whl: invalid distribution name \"_torch\""},
            {"tor ch-1.0-py3-none-any.whl",
             "tor ch-1.0-py3-none-any.whl: invalid distribution name \"tor ch\""},
            {"torch--py3-none-any.whl", "torch--py3-none-any.whl: empty version"},
            {"torch-2.8.0;rm-py3-none-any.whl",
             "torch-2.8.0;rm-py3-none-any.whl: invalid version \"2.8.0;rm\""},
            {"torch-.1-py3-none-any.whl", "torch-.1-py3-none-any.whl: invalid version \".1\""},
            {"torch-1.0-abc-py3-none-any.whl",
             "torch-1.0-abc-py3-none-any.whl: build tag \"abc\" does not start with a digit"},
            {"torch-1.0--py3-none-any.whl",
             "torch-1.0--py3-none-any.whl: build tag \"\" does not start with a digit"},
            {"torch-1.0-1+x-py3-none-any.whl",
             "torch-1.0-1+x-py3-none-any.whl: invalid build tag \"1+x\""},
            {"torch-1.0--none-any.whl", "torch-1.0--none-any.whl: empty python tag"},
            {"torch-1.0-py3..py2-none-any.whl",
             "torch-1.0-py3..py2-none-any.whl: empty python tag in \"py3..py2\""},
            {"torch-1.0-py3-none.-any.whl",
             "torch-1.0-py3-none.-any.whl: empty abi tag in \"none.\""},
            {"torch-1.0-py3-none-.whl", "torch-1.0-py3-none-.whl: empty platform tag"},
            {"torch-1.0-py3-none-any+x.whl",
             "torch-1.0-py3-none-any+x.whl: invalid platform tag \"any+x\""},
            {"torch-1.0-py3-cp3$-any.whl", "torch-1.0-py3-cp3$-any.whl: invalid abi tag \"cp3$\""},
            {"torch-2.8.0%2-py3-none-any.whl",
             "torch-2.8.0%2-py3-none-any.whl: bad percent escape at offset 11"},
            {"torch-2.8.0%00-py3-none-any.whl",
             "torch-2.8.0%00-py3-none-any.whl: percent escape decodes to NUL at offset 11"},
            {"..%2Ftorch-1.0-py3-none-any.whl",
             "..%2Ftorch-1.0-py3-none-any.whl: a wheel file name has no directory part"},
            {"dir/torch-1.0-py3-none-any.whl",
             "dir/torch-1.0-py3-none-any.whl: a wheel file name has no directory part"},
            {"torch-1.0-py3-none-any%0A.whl",
             "torch-1.0-py3-none-any%0A.whl: control character in file name"},
        };
        for (const Case& c : cases) {
            CAPTURE(c.name);
            const auto wheel = parse_wheel_filename(c.name);
            REQUIRE_FALSE(wheel.ok());
            CHECK(wheel.error().text() == c.error);
        }
    }

    TEST_CASE("a hostile name with huge tag sets is refused, not expanded") {
        std::string pythons = "py3";
        for (int i = 0; i < 40; ++i)
            pythons += ".py3" + std::to_string(i);
        const std::string name = "x-1-" + pythons + "-" + pythons + "-any.whl";
        const auto wheel = parse_wheel_filename(name);
        REQUIRE_FALSE(wheel.ok());
        CHECK(wheel.error().message == "more than 1024 tags");
        CHECK(wheel.error().where.size() == 123);  // cut short at 120 characters plus "..."
    }
}
