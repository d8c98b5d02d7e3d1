// The closure check of a final tree (base plus venv) exactly as `lock` and `build` both run it,
// so that what a lock proved is what a build re-proves on the tree it writes.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "check/closure_check.hpp"
#include "fs/file_tree.hpp"
#include "gpu/fatbin.hpp"
#include "util/result.hpp"

namespace rootlock::assemble {

struct FinalCheckOptions {
    std::vector<std::pair<std::string, std::string>> environment;  // the recipe's [environment]
    std::vector<std::string> host_provides;
    std::string cuda;       // the torch build's CUDA toolkit ("12.8"), empty without torch
    std::string driver;     // the host's driver, empty when undeclared
    std::string cache_dir;  // where cached wheel scans name the torch builds missing symbols need
    // The recipe's [cuda] gpus ("8.6"), each judged against every object's device code, and that
    // device code for the objects the tree holds no bytes of (wheel members: canonical path ->
    // the architectures their scan read, empty for an object read and holding none).
    std::vector<std::string> gpus;
    std::map<std::string, std::vector<std::string>> device_code;
    // The base's, read as its tarball streamed (an object without any: an empty summary).
    std::map<std::string, gpu::FatbinSummary> base_device_code;
};

// The closure check of a final tree (base plus venv) as lock and build both run it: the recipe's
// LD_LIBRARY_PATH, host-provided sonames, CUDA toolkit and driver, GPU coverage for the recipe's
// GPUs, the base tarball's unsafe entries added, torch builds from the cache named for missing
// symbols, sorted. A `gpus` entry that is not a compute capability is an error (the recipe and
// the lock reader refuse those first).
util::Result<check::CheckReport> check_final_tree(const fs::FileTree& tree,
                                                  const fs::FileTree& base,
                                                  const FinalCheckOptions& options);

}  // namespace rootlock::assemble
