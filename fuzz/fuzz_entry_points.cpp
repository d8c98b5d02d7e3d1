// entry_points.txt, read for the console and GUI scripts a wheel installs.
#include "fuzz_common.hpp"
#include "python/wheel_install.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace rootlock;
    auto scripts = python::parse_console_scripts(fuzz::as_text(data, size), "entry_points.txt");
    if (fuzz::check(scripts))
        for (const auto& script : *scripts)
            (void)python::script_wrapper(script, "/opt/venv/bin/python");
    return 0;
}
