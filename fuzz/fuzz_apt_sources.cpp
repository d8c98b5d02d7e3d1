// apt's source entries: the first line of the input picks one-line, deb822 or armour, the
// rest is the text. Every entry parsed is a whole one, and errors are one printable line.
#include "debian/apt_sources.hpp"
#include "debian/armor.hpp"
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace rootlock;
    auto [kind, text] = fuzz::split_first_line(fuzz::as_text(data, size));
    auto whole = [](const debian::SourceLine& source) {
        if (source.url.empty() || source.suite.empty())
            fuzz::fail("an entry without its URL or suite:", source.from);
        if (debian::is_flat_suite(source.suite) != source.components.empty())
            fuzz::fail("components do not match the suite's kind:", source.suite);
    };
    if (kind == "list") {
        for (const auto& source : debian::parse_sources_list(text, "sources.list"))
            whole(source);
    } else if (kind == "armour") {
        (void)fuzz::check(debian::dearmor_key(text, "key.asc"));
    } else {
        auto parsed = debian::parse_deb822_sources(text, "debian.sources");
        if (fuzz::check(parsed))
            for (const auto& source : *parsed)
                whole(source);
    }
    return 0;
}
