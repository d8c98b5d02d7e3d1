// deb822 paragraphs, the syntax under Release, Packages and dpkg's status.
#include "debian/deb822.hpp"
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace rootlock;
    auto paragraphs = debian::parse_deb822(fuzz::as_text(data, size), "Packages");
    if (fuzz::check(paragraphs))
        for (const auto& paragraph : *paragraphs)
            for (const auto& field : paragraph.fields)
                if (paragraph.get(field.name) == nullptr)
                    fuzz::fail("a parsed field cannot be found by its name:", field.name);
    return 0;
}
