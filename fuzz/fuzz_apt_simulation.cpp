// apt-get --simulate output, as mmdebstrap --simulate prints it.
#include "debian/apt_simulation.hpp"
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace rootlock;
    fuzz::check(debian::parse_apt_simulation(fuzz::as_text(data, size)));
    return 0;
}
