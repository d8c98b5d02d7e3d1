// A recipe that names several Debian architectures, as one recipe per architecture: a lock is
// made for exactly one target, so `lock` expands first and the locker never sees a list.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "recipe/recipe.hpp"

namespace rootlock::recipe {

// One recipe per architecture of its Debian base, in the recipe's order, each naming only its
// own (`architecture` and `architectures` alike) and writing its own image: `image.output` with
// "-ARCH" before its suffix (image_output_for_architecture). A recipe of one architecture, or a
// tarball base, comes back as the only element, unchanged.
std::vector<Recipe> expand_architectures(const Recipe& recipe);

// "images/demo.tar.zst" -> "images/demo-arm64.tar.zst": "-ARCH" before the image suffix
// (.tar.zst, .tar.gz, .tar.xz, .oci.tar, .tar, .oci), or at the end of a name without one.
std::string image_output_for_architecture(std::string_view output, std::string_view architecture);

}  // namespace rootlock::recipe
