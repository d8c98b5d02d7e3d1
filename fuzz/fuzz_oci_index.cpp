// OCI's JSON documents as check and diff read them from an image: index.json (and a nested
// multi-arch index with its platforms), a manifest, and the image config.
#include "fuzz_common.hpp"
#include "oci/image_config.hpp"
#include "oci/image_source.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace rootlock;
    const std::string text(fuzz::as_text(data, size));
    auto index = oci::parse_index(text, "index.json");
    auto platforms = oci::parse_platform_index(text, "index.json");
    fuzz::check(index);
    if (fuzz::check(platforms)) {
        if (!index.ok() || index->size() != platforms->size())
            fuzz::fail("the platform index disagrees with index.json");
        fuzz::check(oci::pick_platform(*platforms, oci::Platform{}, "index.json"));
    }
    fuzz::check(oci::parse_manifest(text, "manifest"));
    auto config = oci::parse_image_config(text, "config");
    if (fuzz::check(config))
        (void)oci::env_value(*config, "VIRTUAL_ENV");
    return 0;
}
