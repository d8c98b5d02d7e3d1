// The recipe (TOML through toml++, then rootlock's validation), every error collected.
#include "fuzz_common.hpp"
#include "recipe/recipe.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace rootlock;
    auto parse = recipe::parse_recipe_all(fuzz::as_text(data, size), "fuzz.toml");
    if (parse.recipe.has_value() != parse.errors.empty())
        fuzz::fail("a recipe parse both failed and succeeded");
    for (const auto& error : parse.errors) {
        fuzz::check_error(error);
        if (error.where.empty())
            fuzz::fail("a recipe error without a location:", error.message);
    }
    return 0;
}
