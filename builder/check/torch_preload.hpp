// torch/__init__.py's preload fallback (cuda-wheels.md section 6): when loading
// libtorch_global_deps.so fails on a CUDA library, torch searches sys.path for the NVIDIA wheels'
// libraries and ctypes-loads them, so a library its RPATH misses can still be found by name.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fs/file_tree.hpp"

namespace rootlock::check {

// One row of torch's table: `<folder>` under nvidia/ (or the top level), the glob searched in
// its lib/ directory, and whether a miss is tolerated (torch raises ValueError otherwise).
struct PreloadEntry {
    std::string_view folder;
    std::string_view glob;
    bool optional = false;
};

// The newest torch's ordered table (cuda-wheels.md section 6).
std::span<const PreloadEntry> preload_table();

// The table the torch of `torch_version` ("2.8.0+cu128") uses: <= 2.5 its dict, 2.6-2.8 the
// 2.8 dict (every row of both required), 2.9 and later (or an unknown version) the newest list.
std::span<const PreloadEntry> preload_table_for(std::string_view torch_version);
// Whether that torch also searches nvidia/cu<major>/lib (since about 2.9).
bool searches_cuda_major_dir(std::string_view torch_version);

// One name against a glob as Python's fnmatch (behind glob.glob) matches it: `*`, `?`, `[...]`
// with ranges, `!` negation and a leading `]` literal; an unterminated `[` and a backslash are
// literal characters. Bytewise, whatever the locale.
bool glob_match(std::string_view pattern, std::string_view name);

// True when torch would retry through the preload after a load failure naming `soname`:
// torch tests whether the stem of any table glob ("libcublas") occurs in the error message,
// which begins with the missing name, so "libcublasLt.so.12" and "libcudnn_graph.so.9" count.
bool triggers_preload(std::string_view soname);

// What the preload found for one table row: the canonical path in the root, empty when no
// sys.path entry had a match that is a regular file.
struct PreloadHit {
    PreloadEntry entry;
    std::string path;
};

// Each table row in order: the first match over `sys_path` of `<p>/nvidia/<folder>/lib/<glob>`,
// then `<p>/nvidia/cu<cuda_major>/lib/<glob>` (when cuda_major > 0), then
// `<p>/<folder>/lib/<glob>`. Python's glob returns a directory's names in the file system's
// order; the first match here is the first in bytewise order, which is the same whenever a
// directory holds one match, as the wheels' layouts do. Relative sys.path entries (the working
// directory) are skipped: they cannot be known statically.
std::vector<PreloadHit> preload_plan(const fs::FileTree& tree,
                                     const std::vector<std::string>& sys_path, int cuda_major);
// The same over another table (preload_table_for's).
std::vector<PreloadHit> preload_plan(const fs::FileTree& tree,
                                     const std::vector<std::string>& sys_path, int cuda_major,
                                     std::span<const PreloadEntry> table);

// The paths of preload_plan() that were found, in table order, each once: what torch dlopens
// before retrying libtorch_global_deps.so. Required rows that were not found are just absent.
std::vector<std::string> preload_files(const fs::FileTree& tree,
                                       const std::vector<std::string>& sys_path, int cuda_major);

}  // namespace rootlock::check
