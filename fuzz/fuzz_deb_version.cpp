// Debian version strings and dpkg's ordering. The input's first line and the rest are two
// versions: the comparison must be antisymmetric, and a version must reparse to itself.
#include "debian/deb_version.hpp"
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace rootlock;
    auto [first, second] = fuzz::split_first_line(fuzz::as_text(data, size));
    auto a = debian::parse_deb_version(first);
    auto b = debian::parse_deb_version(second);
    fuzz::check(a);
    fuzz::check(b);
    if (a.ok()) {
        auto again = debian::parse_deb_version(debian::to_string(*a));
        if (!again.ok() || !(*again == *a) || debian::compare_deb_versions(*again, *a) != 0)
            fuzz::fail("a Debian version does not reparse to itself:", debian::to_string(*a));
    }
    if (a.ok() && b.ok()) {
        int ab = debian::compare_deb_versions(*a, *b);
        int ba = debian::compare_deb_versions(*b, *a);
        if ((ab < 0) != (ba > 0) || (ab == 0) != (ba == 0))
            fuzz::fail("dpkg's order is not antisymmetric here");
    }
    return 0;
}
