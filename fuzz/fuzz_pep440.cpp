// PEP 440 versions and specifier sets. A normalised version must parse back to itself, and a
// specifier set written out must parse again, or a lock would not read what it wrote.
#include "fuzz_common.hpp"
#include "python/pep440.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace rootlock;
    std::string_view text = fuzz::as_text(data, size);
    auto version = python::parse_version(text);
    if (fuzz::check(version)) {
        std::string normal = python::to_string(*version);
        auto again = python::parse_version(normal);
        if (!again.ok() || !(*again == *version) || python::to_string(*again) != normal)
            fuzz::fail("a normalised version does not parse back to itself:", normal);
    }
    auto set = python::parse_specifiers(text);
    if (fuzz::check(set)) {
        std::string written = python::to_string(*set);
        auto again = python::parse_specifiers(written);
        if (!again.ok() || python::to_string(*again) != written)
            fuzz::fail("a written specifier set does not parse back:", written);
        if (version.ok())
            (void)set->contains(*version, false);
    }
    return 0;
}
