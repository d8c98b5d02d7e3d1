// Unit tests for a recipe's architectures: `arch` as a string or an array (with the table of
// malformed ones), the expansion into one recipe per architecture, and the images they name.
#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

#include "recipe/recipe.hpp"
#include "recipe/recipe_architectures.hpp"

using namespace rootlock;

namespace {

// A recipe whose Debian base has `arch = <arch>` (the value starts at column 39 of line 4).
std::string with_arch(const std::string& arch, const std::string& image_extra = "") {
    return "[image]\nname = \"demo\"\n" + image_extra +
           "[base]\ndebian = { suite = \"bookworm\", arch = " + arch +
           " }\n[python]\nversion = \"3.11\"\n";
}

recipe::Recipe parsed(const std::string& text) {
    auto result = recipe::parse_recipe(text, "r.toml");
    if (!result.ok())
        FAIL(result.error().text());
    return result.value();
}

std::vector<std::string> error_texts(const std::string& text) {
    std::vector<std::string> texts;
    for (const auto& error : recipe::parse_recipe_all(text, "r.toml").errors)
        texts.push_back(error.text());
    return texts;
}

const std::string k_unknown_tail =
    " is not a Debian architecture with manylinux wheels (amd64, arm64, i386, ppc64el, s390x, "
    "armhf, armel)";

}  // namespace

TEST_SUITE("rootlock::recipe") {
    TEST_CASE("arch as a string names one architecture") {
        const auto recipe = parsed(with_arch("\"arm64\""));
        REQUIRE(recipe.base.debian.has_value());
        CHECK(recipe.base.debian->architecture == "arm64");
        CHECK(recipe.base.debian->architectures == std::vector<std::string>{"arm64"});
    }

    TEST_CASE("no arch is amd64 alone") {
        const auto recipe = parsed(
            "[image]\nname = \"demo\"\n[base]\ndebian = { suite = \"bookworm\" }\n[python]\n"
            "version = \"3.11\"\n");
        CHECK(recipe.base.debian->architecture == "amd64");
        CHECK(recipe.base.debian->architectures == std::vector<std::string>{"amd64"});
    }

    TEST_CASE("arch as an array names every architecture in the recipe's order") {
        const auto recipe = parsed(with_arch("[\"arm64\", \"amd64\", \"s390x\"]"));
        CHECK(recipe.base.debian->architectures ==
              std::vector<std::string>{"arm64", "amd64", "s390x"});
        CHECK(recipe.base.debian->architecture == "arm64");
    }

    TEST_CASE("malformed arch values give one located error each") {
        struct Case {
            const char* what;
            std::string arch;
            std::vector<std::string> errors;
        };
        const std::vector<Case> cases{
            {"an empty array",
             "[]",
             {"r.toml:4:39: base.debian.arch is empty (leave it out for amd64)"}},
            {"a duplicate",
             "[\"amd64\", \"amd64\"]",
             {"r.toml:4:49: base.debian.arch \"amd64\" is listed twice"}},
            {"an element that is not a string",
             "[\"amd64\", 64]",
             {"r.toml:4:49: base.debian.arch[1]: expected a string, found an integer"}},
            {"an unknown element",
             "[\"arm64\", \"aarch64\"]",
             {"r.toml:4:49: base.debian.arch \"aarch64\"" + k_unknown_tail}},
            {"an unknown element twice",
             "[\"x86_64\", \"x86_64\"]",
             {"r.toml:4:40: base.debian.arch \"x86_64\"" + k_unknown_tail,
              "r.toml:4:50: base.debian.arch \"x86_64\"" + k_unknown_tail,
              "r.toml:4:50: base.debian.arch \"x86_64\" is listed twice"}},
            {"neither a string nor an array",
             "64",
             {"r.toml:4:39: base.debian.arch: expected a string or an array of strings, found "
              "an integer"}},
            {"an array of arrays",
             "[[\"amd64\"]]",
             {"r.toml:4:40: base.debian.arch[0]: expected a string, found an array"}},
        };
        for (const auto& c : cases) {
            CAPTURE(c.what);
            CHECK(error_texts(with_arch(c.arch)) == c.errors);
        }
    }

    TEST_CASE("a recipe of several architectures expands to one recipe each, in order") {
        const auto recipe =
            parsed(with_arch("[\"amd64\", \"arm64\"]", "output = \"out/demo.tar.gz\"\n"));
        const auto expanded = recipe::expand_architectures(recipe);
        REQUIRE(expanded.size() == 2);
        const std::vector<std::pair<std::string, std::string>> expected{
            {"amd64", "out/demo-amd64.tar.gz"}, {"arm64", "out/demo-arm64.tar.gz"}};
        for (size_t i = 0; i < expanded.size(); ++i) {
            const auto& one = expanded[i];
            REQUIRE(one.base.debian.has_value());
            CHECK(one.base.debian->architecture == expected[i].first);
            CHECK(one.base.debian->architectures == std::vector<std::string>{expected[i].first});
            CHECK(one.image.output == expected[i].second);
            CHECK(one.image.name == "demo");
            CHECK(one.base.debian->suite == "bookworm");
            CHECK(one.python.version == "3.11");
        }
    }

    TEST_CASE("a recipe of one architecture expands to itself, unchanged") {
        for (const std::string arch : {"\"arm64\"", "[\"arm64\"]"}) {
            CAPTURE(arch);
            const auto recipe = parsed(with_arch(arch));
            const auto expanded = recipe::expand_architectures(recipe);
            REQUIRE(expanded.size() == 1);
            CHECK(expanded[0].image.output == "images/demo.tar.zst");
            CHECK(expanded[0].base.debian->architecture == "arm64");
            CHECK(expanded[0].base.debian->architectures == std::vector<std::string>{"arm64"});
        }
        const auto tarball =
            parsed("[image]\nname = \"demo\"\n[base]\ntarball = \"base.tar\"\nsha256 = \"" +
                   std::string(64, 'a') + "\"\n[python]\nversion = \"3.11\"\n");
        const auto expanded = recipe::expand_architectures(tarball);
        REQUIRE(expanded.size() == 1);
        CHECK(expanded[0].image.output == "images/demo.tar.zst");
        CHECK(expanded[0].base.tarball == tarball.base.tarball);
    }

    TEST_CASE("an image of one architecture has -ARCH before its suffix") {
        const std::vector<std::pair<std::string, std::string>> cases{
            {"images/demo.tar.zst", "images/demo-arm64.tar.zst"},
            {"images/demo.tar.gz", "images/demo-arm64.tar.gz"},
            {"images/demo.tar.xz", "images/demo-arm64.tar.xz"},
            {"images/demo.tar", "images/demo-arm64.tar"},
            {"images/demo.oci.tar", "images/demo-arm64.oci.tar"},
            {"images/demo.oci", "images/demo-arm64.oci"},
            {"demo.v2.tar.zst", "demo.v2-arm64.tar.zst"},
            {"images/demo", "images/demo-arm64"},
            {"images/demo.zip", "images/demo.zip-arm64"},
            {"images/.tar.zst", "images/.tar.zst-arm64"},
            {".tar", ".tar-arm64"},
        };
        for (const auto& [output, expected] : cases) {
            CAPTURE(output);
            CHECK(recipe::image_output_for_architecture(output, "arm64") == expected);
        }
    }
}
