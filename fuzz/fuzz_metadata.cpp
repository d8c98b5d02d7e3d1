// Core metadata (METADATA, PKG-INFO), and the PEP 508 requirements it carries, as the
// environment reader goes on to parse them.
#include "fuzz_common.hpp"
#include "python/metadata.hpp"
#include "python/pep508.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace rootlock;
    auto metadata = python::parse_metadata(fuzz::as_text(data, size), "x.dist-info/METADATA");
    if (!fuzz::check(metadata))
        return 0;
    if (!python::is_valid_project_name(metadata->name))
        fuzz::fail("METADATA accepted an invalid Name:", metadata->name);
    (void)python::normalize_name(metadata->name);
    for (const auto& requirement : metadata->requires_dist)
        fuzz::check(python::parse_requirement(requirement));
    return 0;
}
