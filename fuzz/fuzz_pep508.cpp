// PEP 508 requirements and markers, evaluated for a Linux CPython. What to_string writes must
// parse again to the same text.
#include "fuzz_common.hpp"
#include "python/pep508.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace rootlock;
    std::string_view text = fuzz::as_text(data, size);
    const auto environment = python::linux_cpython(3, 12, 3, "x86_64");
    auto requirement = python::parse_requirement(text);
    if (fuzz::check(requirement)) {
        std::string written = python::to_string(*requirement);
        auto again = python::parse_requirement(written);
        if (!again.ok())
            fuzz::fail("a written requirement does not parse:",
                       written + " / " + again.error().text());
        if (python::to_string(*again) != written)
            fuzz::fail("a written requirement changes when parsed again:", written);
        (void)python::applies(*requirement, environment, "gpu");
    }
    auto marker = python::parse_marker(text);
    if (fuzz::check(marker)) {
        std::string written = python::to_string(*marker);
        auto again = python::parse_marker(written);
        if (!again.ok() || python::to_string(*again) != written)
            fuzz::fail("a written marker does not parse back:", written);
        (void)python::evaluate(*marker, environment, "");
    }
    return 0;
}
