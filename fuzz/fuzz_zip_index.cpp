// The zip index (a wheel's central directory, ZIP64 included) and its member streams, which
// inflate and check the CRC-32 of what the index found.
#include "fs/zip_index.hpp"
#include "fuzz_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace rootlock;
    auto index = fs::index_zip(fuzz::memory_file(data, size), "fuzz.whl");
    if (!fuzz::check(index))
        return 0;
    size_t opened = 0;
    for (const auto& member : index->members) {
        if (index->find(member.name) == nullptr)
            fuzz::fail("an indexed zip member cannot be found by name:", member.name);
        if (++opened > 64)
            break;
        auto stream = fs::open_member(*index, member);
        fuzz::drain(*stream, uint64_t{1} << 20);
    }
    return 0;
}
