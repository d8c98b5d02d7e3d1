// read_heads(): the first bytes of many files of one host directory, with as few system calls
// as the kernel allows. A whole-root check opens every regular file (43,000 on a torch root)
// only to find the 1,700 ELF objects among them, and one open/pread/close costs about 6.5 µs
// here, most of it entering and leaving the kernel. io_uring does the three for a batch of files
// in one call: the torch root's files 0.28 s -> 0.10 s of CPU. Where io_uring is not to be had (an
// older kernel, a seccomp filter, kernel.io_uring_disabled), the same answers come from
// openat/pread/close one file at a time.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace rootlock::fs {

inline constexpr size_t k_head_size = 64;  // an ELF64 header, what ld.so reads first

struct HeadRead {
    int error = 0;        // errno of the open or the read; 0 when read
    uint32_t length = 0;  // bytes read: fewer than k_head_size only at the file's end
    std::array<std::byte, k_head_size> bytes{};
};

enum class HeadReadMethod : uint8_t {
    fastest,  // io_uring where this thread can have a ring, else one file at a time
    plain,    // openat/pread/close one file at a time (tests compare the two)
};

// Opens each of `names` (relative to the directory `dir_fd`, or absolute) with O_NOFOLLOW and
// O_NONBLOCK, as a probe of what a listing called a regular file must (a symlink swapped in is
// ELOOP, a FIFO does not block), and reads its first k_head_size bytes. The answers are in the
// order of `names`.
std::vector<HeadRead> read_heads(int dir_fd, std::span<const std::string_view> names,
                                 HeadReadMethod method = HeadReadMethod::fastest);

// Whether read_heads(fastest) on this thread uses io_uring (false where the kernel refuses a ring).
bool head_reads_use_io_uring();

}  // namespace rootlock::fs
