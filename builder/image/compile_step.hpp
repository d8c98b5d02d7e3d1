// The build's optional compile step (python.compile-bytecode): .pyc files for the .py files the
// install plans put in site-packages, sources read from the wheels, RECORDs rewritten.
#pragma once

#include <string>
#include <vector>

#include "python/wheel_install.hpp"
#include "util/result.hpp"

namespace rootlock::image {

struct CompileStepInput {
    python::InstallScheme scheme;
    std::string python_full;               // the base's interpreter version, "3.11.2"
    std::vector<std::string> wheel_paths;  // host paths of the wheels, parallel to the plans
    std::vector<std::string> wheel_names;  // their file names, for errors
    std::string temp_dir;                  // scratch space for the compiler's files
};

// Compiles every .py file under site-packages of every plan with one interpreter run, and adds
// each result beside it in __pycache__ (python::add_compiled). Returns how many were compiled.
util::Result<size_t> compile_plans(std::vector<std::vector<python::InstalledFile>>& plans,
                                   const CompileStepInput& input);

}  // namespace rootlock::image
