// The recipe (TOML through toml++, then rootlock's validation), every error collected.
#include "fuzz_common.hpp"
#include "recipe/recipe.hpp"
#include "recipe/recipe_architectures.hpp"

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
    // A parsed recipe names at least one architecture, and expands to one recipe of one each.
    if (parse.recipe.has_value() && parse.recipe->base.debian.has_value()) {
        const auto& names = parse.recipe->base.debian->architectures;
        if (names.empty() || names.front() != parse.recipe->base.debian->architecture)
            fuzz::fail("a Debian base whose architecture is not its first");
        const auto expanded = recipe::expand_architectures(*parse.recipe);
        if (expanded.size() != names.size())
            fuzz::fail("an expansion that is not one recipe per architecture");
        for (size_t i = 0; i < expanded.size(); ++i) {
            const auto& debian = *expanded[i].base.debian;
            if (debian.architectures.size() != 1 || debian.architecture != names[i] ||
                debian.architectures.front() != names[i])
                fuzz::fail("an expanded recipe that names another architecture:", names[i]);
        }
    }
    return 0;
}
