// Runs a Python script against `packaging` (the reference implementation pip vendors) on one of
// the machine's pythons, for the differential tests of the PEP 440, 508 and tag code.
#pragma once

#include <string>

namespace rootlock::testing {

// The script is run as `PYTHON SCRIPT CORPUS`; it must print "P <packaging version>" first.
// Returns the output of the first python (newest pyenv ones first, then the system's) whose
// packaging is 22 or later, else of the first that answered at all, else "".
std::string run_packaging_referee(const std::string& script, const std::string& corpus);

// The major version of packaging in such output ("P 24.1" gives 24), 0 when there is none.
int packaging_major(const std::string& output);

}  // namespace rootlock::testing
