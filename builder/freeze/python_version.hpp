// The full version of the Python an environment runs on, read from the environment's own files
// and never by running it (the root may be another architecture, or not bootable at all).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fs/file_tree.hpp"
#include "python/environment.hpp"

namespace rootlock::freeze {

// "3.11.7" from patchlevel.h's `#define PY_VERSION "3.11.7"`; nullopt when the line is missing
// or its value is no PEP 440 release of CPython ("3.13.0rc1" and "3.12.1+" are kept as given).
std::optional<std::string> parse_patchlevel(std::string_view text);

// "3.11.7" from a conda-meta record's file name, "python-3.11.7-h955ad1f_0.json", when its
// version starts with `minor` ("3.11"); nullopt for any other file ("python-dateutil-...").
std::optional<std::string> conda_python_version(std::string_view file_name, std::string_view minor);

struct EnvironmentPython {
    // The interpreter's prefix: "/root/.pyenv/versions/3.11.7"; "" when no interpreter resolves.
    std::string prefix;
    std::string version;  // "3.11.7", or "" when none of its files say it
    // Where the version was read: "/opt/venv/pyvenv.cfg",
    // "/root/.pyenv/versions/3.11.7/include/python3.11/patchlevel.h", or a conda-meta record.
    std::string source;
};

// The Python of `env`, in this order:
//   1. a venv's pyvenv.cfg `version` (venv writes the base interpreter's sys.version_info);
//   2. the interpreter's own prefix (the parent of the bin/ that holds it):
//      include/python3.N*/patchlevel.h, which CPython's `make install` writes and pyenv,
//      python-build-standalone (uv's pythons), conda and Debian's python3.N-dev all ship;
//   3. that prefix's conda-meta/python-3.N.M-*.json, for a conda environment without headers.
// Neither sysconfigdata nor config-3.N/Makefile names more than "3.N", and the interpreter's
// binary cannot be trusted to hold its version as a string of its own (the linker merges
// "3.11.7" into the tail of a longer string such as the prefix), so neither is read. The version
// must start with env.version ("3.11."); a record naming another minor is ignored.
EnvironmentPython environment_python(const fs::FileTree& tree,
                                     const python::PythonEnvironment& env);

}  // namespace rootlock::freeze
