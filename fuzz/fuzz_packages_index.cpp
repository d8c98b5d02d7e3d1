// A Debian Packages index.
#include "debian/packages_index.hpp"
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace rootlock;
    fuzz::check(debian::parse_packages(fuzz::as_text(data, size), "Packages"));
    return 0;
}
