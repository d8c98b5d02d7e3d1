// The namespace `import torch` builds before any of torch's extensions load:
// libtorch_global_deps.so opened RTLD_GLOBAL, and, when that fails on a CUDA library, torch's
// Python preload fallback (cuda-wheels.md section 6) first: the NVIDIA libraries found on
// sys.path, ctypes-loaded RTLD_GLOBAL, then global deps again. After a load that worked with the
// wheels' libcudart mapped, torch 2.6-2.8 also preloads NVRTC and nvJitLink, and later torch the
// whole table: later requests by soname then take those copies.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "fs/file_tree.hpp"
#include "loader/session.hpp"

namespace rootlock::check {

struct TorchSession {
    std::unique_ptr<loader::LoadSession> session;
    // The global scope's roots, in load order: the interpreter, what the preload opened, and
    // libtorch_global_deps.so.
    std::vector<int> global_roots;
    int global_deps = -1;
    // Sonames that global deps' closure finds only because the preload loaded them first ->
    // the file the preload took.
    std::map<std::string, std::string> preload_only;
    // Required rows of the preload that nothing on sys.path matches: torch raises ValueError
    // and `import torch` fails. The globs, in table order.
    std::vector<std::string> preload_missing;
    std::string torch_version;  // from the dist-info, empty when unknown
};

// torch's version from the environment's dist-info ("2.8.0+cu128"), empty when none is found.
std::string installed_torch_version(const fs::FileTree& tree, const std::string& site_dir);

// `base` holds the interpreter; `sys_path` the environment's site directories.
TorchSession open_torch_session(const loader::LoadSession& base, const fs::FileTree& tree,
                                const std::string& global_deps,
                                const std::vector<std::string>& sys_path);

}  // namespace rootlock::check
