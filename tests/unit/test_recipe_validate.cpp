// Unit tests for the recipe's value checks: names, hashes, CUDA and driver versions, the driver
// minimum per CUDA major, CUDA tags in index URLs, and key suggestions.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "recipe/recipe_validate.hpp"

using namespace rootlock::recipe;

TEST_SUITE("rootlock::recipe") {
    TEST_CASE("kebab-case names are lowercase words joined by single hyphens") {
        CHECK(is_kebab_case("train-cu128"));
        CHECK(is_kebab_case("demo"));
        CHECK_FALSE(is_kebab_case(""));
        CHECK_FALSE(is_kebab_case("-demo"));
        CHECK_FALSE(is_kebab_case("demo-"));
        CHECK_FALSE(is_kebab_case("a--b"));
        CHECK_FALSE(is_kebab_case("Demo"));
        CHECK_FALSE(is_kebab_case("a_b"));
    }

    TEST_CASE("a sha256 is exactly 64 hex digits") {
        CHECK(is_sha256_hex(std::string(64, 'f')));
        CHECK(is_sha256_hex(std::string(64, 'F')));
        CHECK_FALSE(is_sha256_hex(std::string(63, 'f')));
        CHECK_FALSE(is_sha256_hex(std::string(64, 'g')));
    }

    TEST_CASE("python, torch, CUDA and driver versions have their shapes") {
        CHECK(is_python_version("3.11"));
        CHECK_FALSE(is_python_version("3"));
        CHECK_FALSE(is_python_version("3.11.4"));
        CHECK_FALSE(is_python_version("2.7"));
        CHECK(is_release_version("2.8.0"));
        CHECK(is_release_version("2.9.0rc1"));
        CHECK_FALSE(is_release_version("2.8.0+cu128"));
        CHECK_FALSE(is_release_version("v2"));
        const auto cuda = parse_cuda_version("12.8");
        REQUIRE(cuda.has_value());
        CHECK(cuda->major == 12);
        CHECK(cuda->minor == 8);
        CHECK(cuda_tag(*cuda) == "cu128");
        CHECK_FALSE(parse_cuda_version("12").has_value());
        CHECK_FALSE(parse_cuda_version("12.x").has_value());
        CHECK(parse_driver_major("570.133.07") == 570);
        CHECK(parse_driver_major("580.65") == 580);
        CHECK_FALSE(parse_driver_major("570").has_value());
        CHECK_FALSE(parse_driver_major("570.1.2.3").has_value());
    }

    TEST_CASE("the driver minimum follows the CUDA major") {
        CHECK(minimum_driver(13) == 580);
        CHECK(minimum_driver(12) == 525);
        CHECK(minimum_driver(11) == 450);
        CHECK_FALSE(minimum_driver(10).has_value());
    }

    TEST_CASE("a CUDA tag is found in an index URL's path, not its host") {
        CHECK(cuda_tag_in_url("https://example.invalid/whl/cu130") == "cu130");
        CHECK(cuda_tag_in_url("https://example.invalid/whl/cu128/") == "cu128");
        CHECK(cuda_tag_in_url("https://example.invalid/whl/cu126/torch/?x=1") == "cu126");
        CHECK_FALSE(cuda_tag_in_url("https://cu128/simple").has_value());
        CHECK_FALSE(cuda_tag_in_url("https://example.invalid/whl/cpu").has_value());
        CHECK_FALSE(cuda_tag_in_url("https://example.invalid/cuda/simple").has_value());
    }

    TEST_CASE("index URLs, patterns, variables and sonames are checked") {
        CHECK(is_index_url("file:///srv/wheels"));
        CHECK(is_index_url("http://127.0.0.1:8765/simple"));
        CHECK_FALSE(is_index_url("https://"));
        CHECK_FALSE(is_index_url("ftp://example.invalid/"));
        CHECK(is_package_pattern("nvidia-*"));
        CHECK_FALSE(is_package_pattern("torch>=2"));
        CHECK(is_env_name("LD_LIBRARY_PATH"));
        CHECK_FALSE(is_env_name("1X"));
        CHECK(is_soname("libcuda.so.1"));
        CHECK_FALSE(is_soname("/usr/lib/libcuda.so.1"));
        CHECK_FALSE(is_soname(".so"));
        CHECK(has_image_suffix("images/a.tar.zst"));
        CHECK_FALSE(has_image_suffix(".tar"));
        CHECK(is_debian_variant("minbase"));
        CHECK_FALSE(is_debian_variant("tiny"));
    }

    TEST_CASE("a misspelt key is matched to the closest known key") {
        CHECK(edit_distance("nmae", "name") == 1);
        CHECK(edit_distance("kitten", "sitting") == 3);
        const std::vector<std::string_view> keys = {"name", "url", "packages"};
        CHECK(suggest_key("nmae", keys) == "name");
        CHECK(suggest_key("pacakges", keys) == "packages");
        CHECK(suggest_key("uri", keys) == "url");
        CHECK_FALSE(suggest_key("colour", keys).has_value());
    }
}
