// The lock pipeline's pure parts: the root requirements a recipe implies (the torch build from
// [torch]), the indexes it uses when it names none, and the index package patterns; checked on
// the shipped recipes so that what users lock on a real network starts from the right place.
#include <doctest/doctest.h>

#include <filesystem>

#include "lock/index_source.hpp"
#include "lock/locker.hpp"
#include "recipe/recipe.hpp"

using namespace rootlock;

namespace {

recipe::Recipe shipped(const std::string& name) {
    const auto directory =
        std::filesystem::path(__FILE__).parent_path().parent_path().parent_path() / "recipes";
    auto parsed = recipe::parse_recipe_file((directory / name).string());
    REQUIRE(parsed.recipe.has_value());
    return *parsed.recipe;
}

}  // namespace

TEST_SUITE("lock") {
    TEST_CASE("the shipped recipes imply the torch build and parse every requirement") {
        auto cu128 = lock::root_requirements(shipped("train-cu128.toml"));
        REQUIRE(cu128.ok());
        CHECK(*cu128 == std::vector<std::string>{"torch==2.8.0+cu128", "transformers==4.55.*",
                                                 "numpy<2.3", "accelerate"});
        auto cu130 = lock::root_requirements(shipped("train-cu130.toml"));
        REQUIRE(cu130.ok());
        CHECK(cu130->front() == "torch==2.9.1+cu130");
        auto demo = lock::root_requirements(shipped("demo.toml"));
        REQUIRE(demo.ok());
        CHECK(*demo == std::vector<std::string>{"torch==2.8.0+cu128", "numpy<2.3", "app-cli"});
    }

    TEST_CASE("root_requirements refuses torch named twice and malformed requirements") {
        auto recipe = shipped("demo.toml");
        recipe.requirements = {"torch>=2"};
        auto twice = lock::root_requirements(recipe);
        REQUIRE_FALSE(twice.ok());
        CHECK(twice.error().text() ==
              "[packages] requires: \"torch>=2\": torch is chosen by the [torch] table");
        recipe.requirements = {"numpy<<2"};
        auto bad = lock::root_requirements(recipe);
        REQUIRE_FALSE(bad.ok());
        CHECK(bad.error().where == "[packages] requires");
    }

    TEST_CASE(
        "with no [[index]], torch comes from its build's PyTorch index, the rest from the "
        "default") {
        auto recipe = shipped("train-cu130.toml");
        recipe.indexes.clear();
        auto indexes = lock::effective_indexes(recipe);
        REQUIRE(indexes.size() == 2);
        CHECK(indexes[0].name == "pytorch-cu130");
        CHECK(indexes[0].url == "https://download.pytorch.org/whl/cu130");
        CHECK(indexes[0].packages ==
              std::vector<std::string>{"torch", "triton", "pytorch-triton", "nvidia-*"});
        CHECK(indexes[1].packages.empty());
        recipe.torch.reset();
        CHECK(lock::effective_indexes(recipe).size() == 1);
        auto declared = shipped("train-cu128.toml");
        CHECK(lock::effective_indexes(declared).size() == declared.indexes.size());
    }

    TEST_CASE("index patterns match whole names with * globs") {
        CHECK(lock::matches_pattern("nvidia-*", "nvidia-cudnn-cu12"));
        CHECK(lock::matches_pattern("nvidia-*", "nvidia-"));
        CHECK_FALSE(lock::matches_pattern("nvidia-*", "nvidia"));
        CHECK(lock::matches_pattern("torch", "torch"));
        CHECK_FALSE(lock::matches_pattern("torch", "torchvision"));
        CHECK(lock::matches_pattern("*-cu12", "nvidia-nccl-cu12"));
        CHECK_FALSE(lock::matches_pattern("*-cu12", "nvidia-nccl-cu13"));
        CHECK(lock::matches_pattern("a*b*c", "aXXbYYc"));
        CHECK_FALSE(lock::matches_pattern("a*b*c", "aXXbYY"));
        CHECK(lock::matches_pattern("*", ""));
        CHECK(lock::matches_pattern("**", "x"));
    }

    TEST_CASE("a recipe of several architectures is refused: a lock is made for one") {
        auto recipe = shipped("demo.toml");
        REQUIRE(recipe.base.debian.has_value());
        recipe.base.debian->architectures = {"amd64", "arm64"};
        lock::LockOptions options;
        options.recipe_path = "recipes/demo.toml";
        auto outcome = lock::make_lock(recipe, options);
        REQUIRE_FALSE(outcome.ok());
        CHECK(outcome.error().text() ==
              "recipes/demo.toml: names 2 architectures; a lock is made for one of them at a time");
    }

    TEST_CASE("the recipe digest changes with any byte of the recipe") {
        CHECK(lock::recipe_digest("a") != lock::recipe_digest("a\n"));
        CHECK(lock::recipe_digest("") ==
              "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    }
}
