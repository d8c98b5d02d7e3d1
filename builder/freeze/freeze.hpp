// `rootlock freeze`'s core: a live Python environment turned into a PEP 751 lock of what is
// installed, with every hashed RECORD row checked against the bytes really on disk.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fs/file_tree.hpp"
#include "pylock/pylock.hpp"
#include "util/result.hpp"

namespace rootlock::freeze {

struct FreezeOptions {
    // Root-absolute path of the environment's prefix inside the tree ("/opt/venv"), or of a
    // site-packages (or a path inside one).
    std::string venv;
    int threads = 2;  // hashing threads (clamped to 1..64)
};

// One installed file that does not match its RECORD row, or a distribution that cannot be
// verified. Problems texts: "missing", "size N, RECORD says M", "modified (ALGO differs from
// RECORD)", "not a regular file", "outside the root", "unreadable: ERRNO TEXT", "unsupported hash
// ALGO", "too large to verify here" (only for trees that are not directories), and for a whole
// distribution (path = its dist-info) "no RECORD: its files cannot be verified" or "malformed
// RECORD: its files cannot be verified".
struct RecordProblem {
    std::string distribution;  // normalised name
    std::string path;          // root-absolute installed path, as RECORD's row joins it
    std::string problem;

    auto operator<=>(const RecordProblem&) const = default;
};

struct FreezeResult {
    // Packages without wheels, each with its [packages.tool.rootlock] from the installed ELF
    // files; [tool.rootlock] holds the target, venv and frozen_from (the prefix), nothing else.
    pylock::Lock lock;
    std::vector<RecordProblem> problems;  // sorted by (distribution, path, problem)
    uint64_t files_hashed = 0;
    uint64_t bytes_hashed = 0;
    // Environment problems that did not stop the freeze: find_environments' own problems, then
    // why the target's glibc and arch are unknown (a venv copied out of its root still freezes).
    std::vector<std::string> notes;
};

// Reads the one environment at `options.venv` and every file its RECORDs list. Fails only when
// there is not exactly one environment there: "VENV: no Python environment here", "VENV: N
// environments here; name one site-packages", or find_environments' error for a missing path.
// RECORD rows that climb above the root are reported, never read. On a fs::DirectoryTree files
// are streamed in 1 MiB pieces; other trees are read whole, up to 256 MiB.
util::Result<FreezeResult> freeze_environment(const fs::FileTree& tree,
                                              const FreezeOptions& options);

}  // namespace rootlock::freeze
