// Sealed cache files (pages, scans): any bytes either unseal to content that seals back to the
// same bytes, or are refused; never a crash.
#include <cstdlib>

#include "fuzz_common.hpp"
#include "util/sealed_text.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace rootlock;
    const std::string_view text = fuzz::as_text(data, size);
    if (auto content = util::unseal_text(text)) {
        if (util::seal_text(*content) != text)
            std::abort();
    }
    const std::string sealed = util::seal_text(text);
    auto back = util::unseal_text(sealed);
    if (!back || *back != text)
        std::abort();
    return 0;
}
