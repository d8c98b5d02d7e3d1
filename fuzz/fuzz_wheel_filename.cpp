// Wheel file names, percent escapes and compressed tag sets included.
#include "fuzz_common.hpp"
#include "python/wheel_filename.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace rootlock;
    std::string_view text = fuzz::as_text(data, size);
    auto name = python::parse_wheel_filename(text);
    if (fuzz::check(name) && name->tags.empty())
        fuzz::fail("a wheel file name without tags was accepted");
    fuzz::check(python::percent_decode(text));
    return 0;
}
