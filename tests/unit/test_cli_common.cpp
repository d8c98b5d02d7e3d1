// Unit tests for what the subcommands share in cli/common: where a recipe's lock goes, and the
// lock of each architecture of a recipe that names several.
#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

#include "cli/common.hpp"

using namespace rootlock;

TEST_SUITE("rootlock::cli") {
    TEST_CASE("a recipe's lock is lockfiles/pylock.<name>.toml") {
        CHECK(cli::default_lock_path("demo") == "lockfiles/pylock.demo.toml");
    }

    TEST_CASE("the lock of one architecture has -ARCH before .toml, or at the end") {
        const std::vector<std::pair<std::string, std::string>> cases{
            {"lockfiles/pylock.demo.toml", "lockfiles/pylock.demo-arm64.toml"},
            {"x/pylock.demo.toml", "x/pylock.demo-arm64.toml"},
            {"pylock.toml", "pylock-arm64.toml"},
            {"x/lock", "x/lock-arm64"},
            {"x/lock.TOML", "x/lock.TOML-arm64"},
            {"x/.toml", "x/.toml-arm64"},
            {".toml", ".toml-arm64"},
        };
        for (const auto& [path, expected] : cases) {
            CAPTURE(path);
            CHECK(cli::lock_path_for_architecture(path, "arm64") == expected);
        }
    }
}
