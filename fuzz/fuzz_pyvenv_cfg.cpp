// pyvenv.cfg as site.py reads it (never an error: only a crash or a hang can be found).
#include "fuzz_common.hpp"
#include "python/environment.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    (void)rootlock::python::parse_pyvenv_cfg(rootlock::fuzz::as_text(data, size));
    return 0;
}
