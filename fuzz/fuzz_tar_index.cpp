// The tar index (ustar, pax, GNU long names, base-256 numbers) behind the image builder, and
// the member streams it opens.
#include "fuzz_file.hpp"
#include "image/tar_index.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace rootlock;
    auto index = image::index_tar(fuzz::memory_file(data, size));
    if (!fuzz::check(index))
        return 0;
    size_t opened = 0;
    for (const auto& member : index->members) {
        auto canonical = image::canonical_tar_path(member.stored_path);
        if (canonical.ok() && *canonical != member.path && member.path != "/")
            fuzz::fail("a tar member's path is not its canonical stored path:", member.path);
        if (member.type != image::TarMemberType::regular || ++opened > 64)
            continue;
        auto stream = image::open_member(*index, member);
        fuzz::drain(*stream, uint64_t{1} << 20);
    }
    return 0;
}
