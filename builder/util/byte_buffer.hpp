// ByteBuffer: a vector of bytes that resize() leaves unset, for buffers a read fills at once.
// std::vector<std::byte> zeroes what it grows by: for the 90 MB a whole-root check reads from
// ELF objects, a memset and, on fresh pages, a second round of page faults before pread(2)
// writes every byte over again.
#pragma once

#include <cstddef>
#include <memory>
#include <new>
#include <type_traits>
#include <vector>

namespace rootlock::util {

// std::allocator whose value-initialisation of a trivial type does nothing.
template <typename T>
struct NoInitAllocator : std::allocator<T> {
    template <typename U>
    struct rebind {
        using other = NoInitAllocator<U>;
    };
    NoInitAllocator() = default;
    template <typename U>
    explicit NoInitAllocator(const NoInitAllocator<U>& /*other*/) noexcept {}

    template <typename U>
    void construct(U* at) noexcept(std::is_nothrow_default_constructible_v<U>) {
        ::new (static_cast<void*>(at)) U;  // default-, not value-initialised
    }
    template <typename U, typename... Args>
    void construct(U* at, Args&&... args) {
        std::allocator_traits<std::allocator<T>>::construct(static_cast<std::allocator<T>&>(*this),
                                                            at, std::forward<Args>(args)...);
    }
};

using ByteBuffer = std::vector<std::byte, NoInitAllocator<std::byte>>;

}  // namespace rootlock::util
