// The zip and tar indexes read a host path; harnesses give them one backed by memory (a memfd
// reopened through /proc/self/fd), so fuzzing touches no disk and leaves nothing behind.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <string>

#include "fuzz_common.hpp"
#include "util/byte_source.hpp"

namespace rootlock::fuzz {

// One per process, rewritten for every input.
inline const std::string& memory_file(const uint8_t* data, size_t size) {
    static const int fd = memfd_create("fuzz-input", 0);
    static const std::string path = "/proc/self/fd/" + std::to_string(fd);
    if (fd < 0 || ftruncate(fd, 0) != 0)
        fail("memfd_create or ftruncate failed");
    size_t done = 0;
    while (done < size) {
        ssize_t wrote = pwrite(fd, data + done, size - done, static_cast<off_t>(done));
        if (wrote <= 0)
            fail("pwrite to the memfd failed");
        done += static_cast<size_t>(wrote);
    }
    return path;
}

// Reads a member stream to its end or to `budget` bytes, so that data checks (sizes, CRC-32)
// run without letting a deflate bomb spend the time limit.
inline void drain(util::ByteStream& stream, uint64_t budget) {
    std::array<std::byte, 65536> piece{};
    while (budget > 0) {
        auto got = stream.read(piece);
        if (!check(got) || *got == 0)
            return;
        if (*got > piece.size())
            fail("a stream claimed more bytes than it was given room for");
        budget -= std::min<uint64_t>(budget, *got);
    }
}

}  // namespace rootlock::fuzz
