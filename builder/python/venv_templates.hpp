// The texts venv fills in for bin/activate, activate.csh, activate.fish and Activate.ps1, with
// their __VENV_*__ placeholders; venv_scripts.hpp fills them.
#pragma once

#include <string_view>

namespace rootlock::python::templates {

extern const std::string_view k_activate;
extern const std::string_view k_activate_csh;
extern const std::string_view k_activate_fish;
extern const std::string_view k_activate_ps1;  // LF line ends; the script itself has CRLF

}  // namespace rootlock::python::templates
