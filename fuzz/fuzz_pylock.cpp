// pylock.toml (PEP 751 plus [tool.rootlock]). A lock that reads must write out as a lock that
// reads again to the same text: the writer's output is a fixed point of read-then-write.
#include "fuzz_common.hpp"
#include "pylock/pylock.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace rootlock;
    auto lock = pylock::read_pylock(fuzz::as_text(data, size), "pylock.toml");
    if (!fuzz::check(lock))
        return 0;
    std::string written = pylock::write_pylock(*lock);
    auto again = pylock::read_pylock(written, "pylock.toml");
    if (!again.ok())
        fuzz::fail("a written lock does not read back:", again.error().text() + "\n" + written);
    if (pylock::write_pylock(*again) != written)
        fuzz::fail("a written lock changes when read and written again:", written);
    return 0;
}
