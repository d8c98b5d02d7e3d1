// dpkg's status database of a root.
#include "debian/dpkg_status.hpp"
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace rootlock;
    auto packages = debian::parse_dpkg_status(fuzz::as_text(data, size), "status");
    if (fuzz::check(packages))
        for (const auto& package : *packages)
            (void)debian::info_stem(package);
    return 0;
}
