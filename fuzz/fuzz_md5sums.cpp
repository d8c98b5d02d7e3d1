// dpkg's per-package md5sums files (/var/lib/dpkg/info/NAME.md5sums).
#include "debian/dpkg_status.hpp"
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace rootlock;
    auto entries = debian::parse_md5sums(fuzz::as_text(data, size), "dpkg.md5sums");
    if (fuzz::check(entries))
        for (const auto& entry : *entries)
            if (entry.md5.size() != 32 || entry.path.empty() || entry.path[0] != '/')
                fuzz::fail("an md5sums entry broke its contract:", entry.path);
    return 0;
}
