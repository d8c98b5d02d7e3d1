// .pyc files as pip would compile them, but unchecked-hash (PEP 552): the header holds the
// source's hash, never its mtime, so the bytes depend only on the source, its installed path and
// the interpreter. The interpreter is the building machine's python3.N, which must be the base's
// exact version: bytecode is not portable between interpreters.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.hpp"

namespace rootlock::python {

// Where CPython caches the bytecode of `py_path` ("/a/b/c.py", version "3.11"):
// "/a/b/__pycache__/c.cpython-311.pyc".
std::string pyc_path_for(std::string_view py_path, std::string_view python_version);

struct BytecodeJob {
    std::string path;    // the source's path in the image: it becomes the code's co_filename
    std::string source;  // the .py bytes
};

struct BytecodeOptions {
    std::string python_version;  // "3.11": the interpreter run is "python3.11", found in PATH
    std::string python_full;     // "3.11.2": it must report exactly this; empty: not checked
    std::string temp_dir;        // where the job and result files live briefly; empty: $TMPDIR
};

// One interpreter process compiles every job, in order, with hash randomisation off: the first
// python3.N in PATH that reports `python_full`. Each result is the .pyc bytes, or nullopt for a
// source that does not compile (pip skips those too). Errors: "python3.11: not found; install it
// with apt-get" when PATH has none, "python3.11: the base's 3.11.2 is needed (another version
// compiles other bytes); found 3.11.7 at /root/.pyenv/shims/python3.11" when none is that
// version, "PATH: LAST LINE OF ITS OUTPUT" when the interpreter fails.
util::Result<std::vector<std::optional<std::string>>> compile_bytecode(
    const std::vector<BytecodeJob>& jobs, const BytecodeOptions& options);

}  // namespace rootlock::python
