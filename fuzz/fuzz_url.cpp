// URL resolution (RFC 3986 5.2) and the fragment hashes of index links. The input's first line
// is the base URL, the rest the reference.
#include "fuzz_common.hpp"
#include "index/project_page.hpp"
#include "index/url.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace rootlock;
    auto [base, reference] = fuzz::split_first_line(fuzz::as_text(data, size));
    auto resolved = index::resolve_url(base, reference);
    if (fuzz::check(resolved)) {
        auto [url, fragment] = index::split_fragment(*resolved);
        (void)index::last_path_segment(url);
        fuzz::check(index::fragment_hashes(fragment));
    }
    (void)index::project_url(base, reference);
    return 0;
}
