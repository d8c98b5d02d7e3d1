// expand_architectures and the per-architecture image names, see recipe_architectures.hpp. The
// names are pure text: the same recipe expands the same way on every machine.
#include "recipe/recipe_architectures.hpp"

#include <array>

namespace rootlock::recipe {

std::string image_output_for_architecture(std::string_view output, std::string_view architecture) {
    // Longest first where one suffix ends another: ".oci.tar" before ".tar".
    static constexpr std::array<std::string_view, 6> k_suffixes = {".tar.zst", ".tar.gz", ".tar.xz",
                                                                   ".oci.tar", ".tar",    ".oci"};
    const std::string tag = "-" + std::string(architecture);
    for (const std::string_view suffix : k_suffixes) {
        if (output.size() <= suffix.size() || !output.ends_with(suffix))
            continue;
        const std::string_view stem = output.substr(0, output.size() - suffix.size());
        if (stem.back() == '/')
            break;  // ".tar.zst" alone is a file name, not a suffix
        return std::string(stem) + tag + std::string(suffix);
    }
    return std::string(output) + tag;
}

std::vector<Recipe> expand_architectures(const Recipe& recipe) {
    if (!recipe.base.debian.has_value() || recipe.base.debian->architectures.size() <= 1)
        return {recipe};
    std::vector<Recipe> out;
    for (const std::string& architecture : recipe.base.debian->architectures) {
        Recipe one = recipe;
        one.base.debian->architecture = architecture;
        one.base.debian->architectures = {architecture};
        one.image.output = image_output_for_architecture(recipe.image.output, architecture);
        out.push_back(std::move(one));
    }
    return out;
}

}  // namespace rootlock::recipe
