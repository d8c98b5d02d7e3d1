// ld.so.cache, glibc's binary cache (old and new formats), parsed and then indexed and looked up
// as the loader model does, since lookups walk the parsed strings and hwcaps fields.
#include <cstring>
#include <span>
#include <vector>

#include "fuzz_common.hpp"
#include "loader/ld_so_cache.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace rootlock;
    std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
    auto cache = loader::parse_ld_so_cache(bytes, "ld.so.cache");
    if (!fuzz::check(cache))
        return 0;
    std::vector<std::string> sonames;
    for (const auto& entry : cache->entries)
        sonames.push_back(entry.soname);
    loader::CacheLookupTarget target;
    target.hwcaps_supported = {"x86-64-v3", "x86-64-v2"};
    loader::CacheIndex index(std::move(cache.value()), target);
    for (const auto& soname : sonames) {
        (void)index.lookup(soname);
        (void)index.all(soname);
    }
    return 0;
}
