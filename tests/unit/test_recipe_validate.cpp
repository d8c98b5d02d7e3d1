// Unit tests for the recipe's value checks: names, hashes, CUDA and driver versions, the driver
// minimum per CUDA major, CUDA tags in index URLs, library and file paths, and key suggestions.
#include <doctest/doctest.h>

#include <string>
#include <utility>
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

    TEST_CASE("a library path is an absolute canonical directory that ld.so.conf can carry") {
        const std::string not_absolute = "is not an absolute directory path such as /opt/lib";
        const std::string not_canonical =
            "is not canonical (no empty, \".\" or \"..\" component, no trailing slash)";
        const std::string bad_character =
            "holds a character ld.so.conf cannot carry (whitespace, '#', ':', ',' or '=')";
        for (const char* good : {"/opt/lib", "/a",
                                 "/opt/venv/lib/python3.11/site-packages/nvidia/"
                                 "cudnn/lib",
                                 "/usr/lib/x86_64-linux-gnu", "/a/.b/c..", "/a/...", "/ü/lib"}) {
            INFO(good);
            CHECK_FALSE(library_path_problem(good).has_value());
        }
        const std::vector<std::pair<std::string, std::string>> bad = {
            {"", not_absolute},
            {"/", not_absolute},
            {"lib", not_absolute},
            {"./lib", not_absolute},
            {" /opt/lib", not_absolute},
            {"//", not_canonical},
            {"//opt", not_canonical},
            {"/opt//lib", not_canonical},
            {"/opt/lib/", not_canonical},
            {"/.", not_canonical},
            {"/opt/./lib", not_canonical},
            {"/opt/..", not_canonical},
            {"/a b/", not_canonical},
            {"/a b", bad_character},
            {"/a\tb", bad_character},
            {"/a\nb", bad_character},
            {"/a\rb", bad_character},
            {"/a\vb", bad_character},
            {"/a\fb", bad_character},
            {"/opt/lib ", bad_character},
            {"/a#b", bad_character},
            {"/a:/b", bad_character},
            {"/a,b", bad_character},
            {"/a=libc6", bad_character},
            {std::string("/a\0b", 4), bad_character},
        };
        for (const auto& [path, problem] : bad) {
            INFO(path);
            CHECK(library_path_problem(path) == problem);
        }
    }

    TEST_CASE("a file path is absolute, canonical, outside the mounts and not rootlock's own") {
        const std::string not_absolute = "is not an absolute file path such as /etc/motd";
        const std::string not_canonical =
            "is not canonical (no empty, \".\" or \"..\" component, no trailing slash)";
        const std::string mounted =
            "is under /dev, /proc or /sys, which pct and LXC mount themselves";
        const std::string own = "is written by rootlock itself";
        for (const char* good :
             {"/etc/motd", "/etc/pip.conf", "/a b/c#d:e,f=g", "/devices", "/dev.d/x", "/etc/dev",
              "/system/x", "/procfs", "/etc/ld.so.cache.d", "/etc/ld.so.conf.d/other.conf",
              "/etc/profile.d/rootlock-venv.sh.bak", "/opt/.hidden", "/a\tb"}) {
            INFO(good);
            CHECK_FALSE(file_path_problem(good).has_value());
        }
        const std::vector<std::pair<std::string, std::string>> bad = {
            {"", not_absolute},
            {"/", not_absolute},
            {"etc/motd", not_absolute},
            {"~/motd", not_absolute},
            {"/etc/../x", not_canonical},
            {"/etc//motd", not_canonical},
            {"/etc/./motd", not_canonical},
            {"/etc/motd/", not_canonical},
            {"/..", not_canonical},
            {"/dev/../etc/motd", not_canonical},
            {"/etc/a\nb", "holds a NUL or newline character"},
            {std::string("/etc/a\0b", 8), "holds a NUL or newline character"},
            {"/dev", mounted},
            {"/dev/null", mounted},
            {"/proc", mounted},
            {"/proc/1/environ", mounted},
            {"/sys", mounted},
            {"/sys/kernel/x", mounted},
            {"/etc/ld.so.cache", own},
            {"/etc/ld.so.conf.d/rootlock.conf", own},
            {"/etc/profile.d/rootlock-venv.sh", own},
        };
        for (const auto& [path, problem] : bad) {
            INFO(path);
            CHECK(file_path_problem(path) == problem);
        }
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
