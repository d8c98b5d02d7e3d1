// A Debian Release file (the signed text of InRelease) and the dates in it.
#include "debian/release.hpp"
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace rootlock;
    auto release = debian::parse_release(fuzz::as_text(data, size), "Release");
    if (!fuzz::check(release))
        return 0;
    auto date = debian::parse_release_date(release->date);
    if (fuzz::check(date))
        (void)debian::snapshot_timestamp(*date);
    if (!release->valid_until.empty())
        fuzz::check(debian::parse_release_date(release->valid_until));
    return 0;
}
