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

TEST_SUITE("rootlock::python") {
    TEST_CASE("venv's four activation scripts, each quoted for its own shell") {
        const auto scripts = rootlock::python::activation_scripts("/srv/it's env");
        REQUIRE(scripts.size() == 4);
        CHECK(scripts[0].name == "Activate.ps1");
        CHECK(scripts[1].name == "activate");
        CHECK(scripts[2].name == "activate.csh");
        CHECK(scripts[3].name == "activate.fish");
        for (const auto& script : scripts) {
            INFO(script.name);
            CHECK(script.text.find("__VENV_") == std::string::npos);
        }
        // 3.11's Activate.ps1 has no placeholders (it reads pyvenv.cfg when run); it keeps
        // its CRLF line ends.
        const std::string& ps1 = scripts[0].text;
        CHECK(ps1.find("pyvenv.cfg") != std::string::npos);
        CHECK(ps1.find("\r\n") != std::string::npos);
        CHECK(ps1.find('\n') == ps1.find("\r\n") + 1);
        // The POSIX shells get shlex.quote's '"'"' form.
        CHECK(scripts[2].text.find("setenv VIRTUAL_ENV '/srv/it'\"'\"'s env'") !=
              std::string::npos);
        CHECK(scripts[3].text.find("set -gx VIRTUAL_ENV '/srv/it'\"'\"'s env'") !=
              std::string::npos);
        for (size_t i = 1; i < scripts.size(); ++i)
            CHECK(scripts[i].text.find('\r') == std::string::npos);
    }
}
