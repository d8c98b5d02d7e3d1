// PEP 503 HTML project pages, as PyTorch's and PyPI's indexes serve them.
#include "fuzz_common.hpp"
#include "index/project_page.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace rootlock;
    fuzz::check(index::parse_simple_html(fuzz::as_text(data, size),
                                         "https://download.example.org/whl/cu128/torch/", "torch"));
    return 0;
}
