// The wheel-scan cache JSON (a file on disk that a crash or an older rootlock may have left
// half-written). A scan read from it must write out as JSON that reads back to the same text.
#include "fuzz_common.hpp"
#include "python/wheel_scan.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace rootlock;
    auto scan = python::scan_from_json(fuzz::as_text(data, size));
    if (!fuzz::check(scan))
        return 0;
    std::string json = python::scan_to_json(*scan);
    auto again = python::scan_from_json(json);
    if (!again.ok())
        fuzz::fail("a written scan does not read back:", again.error().text());
    if (python::scan_to_json(*again) != json)
        fuzz::fail("a written scan changes when read and written again");
    (void)python::needed_versions(*scan);
    return 0;
}
