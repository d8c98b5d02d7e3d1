// bin/activate as `python -m venv` writes it: the template filled with the venv's path, name
// and prompt, quoted the way venv quotes them (shlex.quote).
#include <doctest/doctest.h>

#include "python/venv_scripts.hpp"

using rootlock::python::activate_script;

TEST_SUITE("rootlock::python") {
    TEST_CASE("activate names the venv, its bin directory and its prompt") {
        const std::string script = activate_script("/opt/venv");
        CHECK(script.find("VIRTUAL_ENV=/opt/venv\n") != std::string::npos);
        CHECK(script.find("PATH=\"$VIRTUAL_ENV/\"bin\":$PATH\"") != std::string::npos);
        CHECK(script.find("PS1='(venv) '\"${PS1:-}\"") != std::string::npos);
        CHECK(script.find("__VENV_") == std::string::npos);
        CHECK(script.rfind("# This file must be used with \"source bin/activate\"", 0) == 0);
    }

    TEST_CASE("activate quotes a path with spaces as shlex.quote would") {
        const std::string script = activate_script("/srv/my env");
        CHECK(script.find("VIRTUAL_ENV='/srv/my env'\n") != std::string::npos);
        CHECK(script.find("PS1='(my env) '") != std::string::npos);
    }
}
