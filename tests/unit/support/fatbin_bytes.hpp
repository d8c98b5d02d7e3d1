// Fatbin containers built byte by byte as nvcc 13.0 writes their headers, for the fatbin readers'
// tests and the wheel scan's: a payload is filler bytes, never real device code.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace rootlock::testing {

// One entry header as nvcc writes it (flags 0x11: 64-bit, Linux). kind 1 is PTX, 2 a cubin.
struct EntrySpec {
    uint16_t kind = 2;
    uint32_t sm = 86;
    uint64_t flags = 0x11;
    uint32_t header_size = 64;
    uint32_t payload = 32;
    uint16_t ptx_minor = 0;
    uint16_t ptx_major = 0;
    uint64_t uncompressed = 0;
};

struct ContainerSpec {
    std::vector<EntrySpec> entries;
    size_t zeros_after = 0;  // padding written after the container
};

// One entry: its header, then the header's tail and the payload filled with 0x5a.
std::vector<std::byte> fatbin_entry(const EntrySpec& e);
// Containers back to back, each followed by its padding.
std::vector<std::byte> fatbin_bytes(const std::vector<ContainerSpec>& containers);

}  // namespace rootlock::testing
