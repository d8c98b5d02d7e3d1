// PEP 691 JSON project pages (API version 1.x).
#include "fuzz_common.hpp"
#include "index/project_page.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace rootlock;
    fuzz::check(index::parse_simple_json(fuzz::as_text(data, size),
                                         "https://pypi.example.org/simple/torch/"));
    return 0;
}
