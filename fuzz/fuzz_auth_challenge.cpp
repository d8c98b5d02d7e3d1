// A registry's WWW-Authenticate header, as the push client meets it after a 401.
#include "fuzz_common.hpp"
#include "registry/auth_challenge.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace rootlock;
    auto parsed = registry::parse_auth_challenge(fuzz::as_text(data, size));
    if (fuzz::check(parsed) && parsed->scheme.empty())
        fuzz::fail("a challenge without a scheme");
    return 0;
}
