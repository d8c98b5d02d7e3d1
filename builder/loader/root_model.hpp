// Sets up the loader model for one root: the target read from the root, its ld.so.cache (or,
// when it has none, the cache ldconfig would build from its ld.so.conf), and the process
// environment the user declared. Shared by `check`, `ldd` and `why`.
#pragma once

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "fs/file_tree.hpp"
#include "loader/search.hpp"
#include "loader/target.hpp"
#include "util/result.hpp"

namespace rootlock::loader {

// The NVIDIA driver's user-space sonames (cuda-wheels.md section 8): the host bind-mounts them
// into the container at run time, so an image is right not to carry them.
const std::vector<std::string>& default_host_provided();

struct ModelOptions {
    TargetOverrides overrides;
    std::vector<std::string> ld_library_path;
    std::vector<std::string> extra_host_provided;
    bool no_default_host_provided = false;
    // What to do when the root has no /etc/ld.so.cache: model the cache ldconfig would build
    // (an image build runs ldconfig) or, as ld.so itself does, search without one.
    bool simulate_missing_cache = true;
};

struct RootModel {
    std::unique_ptr<SearchContext> context;
    std::vector<std::string> notes;  // what the model assumed, for the report
};

util::Result<RootModel> open_root_model(const fs::FileTree& tree, const ModelOptions& options);

}  // namespace rootlock::loader
