// The streaming ELF reader (an archive member read once, front to back), fed in uneven pieces,
// and held to its promise: where it succeeds, the random-access reader gives the same ElfInfo.
#include <algorithm>
#include <cstring>
#include <span>
#include <vector>

#include "elf/elf_reader.hpp"
#include "fuzz_common.hpp"

namespace {

// Hands out the buffer in pieces of 1, 7, 4093, ... bytes, as archive readers do.
class PieceStream final : public rootlock::util::ByteStream {
  public:
    explicit PieceStream(std::span<const std::byte> bytes) : m_bytes(bytes) {}
    rootlock::util::Result<size_t> read(std::span<std::byte> out) override {
        static constexpr size_t k_pieces[] = {1, 7, 4093, 65536, 13};
        size_t want = std::min({out.size(), m_bytes.size() - m_at, k_pieces[m_turn++ % 5]});
        if (want != 0)
            std::memcpy(out.data(), m_bytes.data() + m_at, want);
        m_at += want;
        return want;
    }

  private:
    std::span<const std::byte> m_bytes;
    size_t m_at = 0;
    size_t m_turn = 0;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace rootlock;
    std::vector<std::byte> bytes(size);
    if (size != 0)
        std::memcpy(bytes.data(), data, size);
    elf::ReadOptions options;
    options.symbols = true;
    PieceStream stream(bytes);
    auto streamed = elf::read_elf_stream(stream, size, "fuzz.so", options);
    if (!fuzz::check(streamed))
        return 0;
    util::MemorySource source("fuzz.so", std::move(bytes));
    auto whole = elf::read_elf(source, options);
    if (!whole.ok())
        fuzz::fail("the stream reader accepted what read_elf refuses:", whole.error().text());
    const elf::ElfInfo& a = *whole;
    const elf::ElfInfo& b = *streamed;
    if (a.interpreter != b.interpreter || a.soname != b.soname || a.needed != b.needed ||
        a.rpath != b.rpath || a.runpath != b.runpath || a.flags != b.flags ||
        a.flags_1 != b.flags_1 || a.version_needs.size() != b.version_needs.size() ||
        a.version_defs.size() != b.version_defs.size() || a.symbols.size() != b.symbols.size())
        fuzz::fail("the stream and buffer readers disagree on the dynamic metadata");
    return 0;
}
