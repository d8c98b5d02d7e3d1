// The ELF reader over a random-access buffer: headers, dynamic section, symbol versions and the
// dynamic symbol table of whatever bytes arrive.
#include <cstring>
#include <vector>

#include "elf/elf_reader.hpp"
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace rootlock;
    std::vector<std::byte> bytes(size);
    if (size != 0)
        std::memcpy(bytes.data(), data, size);
    util::MemorySource source("fuzz.so", std::move(bytes));
    elf::ReadOptions options;
    options.symbols = true;
    fuzz::check(elf::read_elf(source, options));
    return 0;
}
