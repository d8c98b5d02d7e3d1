// Fatbin bytes for tests; see fatbin_bytes.hpp.
#include "support/fatbin_bytes.hpp"

#include "support/section_elf.hpp"

namespace rootlock::testing {

std::vector<std::byte> fatbin_entry(const EntrySpec& e) {
    std::vector<std::byte> out;
    append_le(out, e.kind, 2);
    append_le(out, 0x0101, 2);
    append_le(out, e.header_size, 4);
    append_le(out, e.payload, 4);
    append_le(out, 0, 4);
    append_le(out, (e.flags & 0xa000) != 0 ? e.payload - 3 : 0, 4);  // compressed size
    append_le(out, 0, 4);
    append_le(out, e.ptx_minor, 2);
    append_le(out, e.ptx_major, 2);
    append_le(out, e.sm, 4);
    append_le(out, 0, 8);
    append_le(out, e.flags, 8);
    append_le(out, 0, 8);
    append_le(out, e.uncompressed, 8);
    out.resize(e.header_size + e.payload, std::byte{0x5a});  // header tail and payload
    return out;
}

std::vector<std::byte> fatbin_bytes(const std::vector<ContainerSpec>& containers) {
    std::vector<std::byte> out;
    for (const ContainerSpec& container : containers) {
        std::vector<std::byte> entries;
        for (const EntrySpec& entry : container.entries) {
            auto bytes = fatbin_entry(entry);
            entries.insert(entries.end(), bytes.begin(), bytes.end());
        }
        append_le(out, 0xBA55ED50, 4);
        append_le(out, 1, 2);
        append_le(out, 16, 2);
        append_le(out, entries.size(), 8);
        out.insert(out.end(), entries.begin(), entries.end());
        out.resize(out.size() + container.zeros_after, std::byte{0});
    }
    return out;
}

}  // namespace rootlock::testing
