// Scripts a virtual environment carries besides its interpreter links: what `python -m venv`
// writes into bin/, reproduced so an image's venv behaves as one made on the machine.
#pragma once

#include <string>
#include <vector>

namespace rootlock::python {

// bin/activate for the venv at `venv` ("/opt/venv"): prompt "(venv) ", as venv writes it.
std::string activate_script(const std::string& venv);

struct VenvScript {
    std::string name;  // in bin/: "activate", "activate.csh", "activate.fish", "Activate.ps1"
    std::string text;
};

// Every activation script venv writes on Linux, sorted by name, for the venv at `venv`.
std::vector<VenvScript> activation_scripts(const std::string& venv);

}  // namespace rootlock::python
