// Image references as `rootlock push` takes them: a parsed reference must print back to text
// that parses to the same reference.
#include "fuzz_common.hpp"
#include "registry/image_reference.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace rootlock;
    auto parsed = registry::parse_image_reference(fuzz::as_text(data, size));
    if (!fuzz::check(parsed))
        return 0;
    auto again = registry::parse_image_reference(parsed->text());
    if (!again.ok())
        fuzz::fail("a printed reference does not parse", parsed->text());
    if (again->host != parsed->host || again->name != parsed->name ||
        again->digest != parsed->digest || (parsed->digest.empty() && again->tag != parsed->tag))
        fuzz::fail("a printed reference parses to another", parsed->text());
    return 0;
}
