// dist-info RECORD, read as Python's csv module reads it.
#include "fuzz_common.hpp"
#include "python/record.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace rootlock;
    auto rows = python::parse_record(fuzz::as_text(data, size), "x.dist-info/RECORD");
    if (fuzz::check(rows))
        for (const auto& row : *rows)
            if (!row.hash_algorithm.empty() && !python::record_digest_bytes(row.hash_algorithm))
                fuzz::fail("a RECORD row kept an algorithm it cannot check:", row.hash_algorithm);
    return 0;
}
