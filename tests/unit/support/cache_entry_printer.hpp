// How doctest prints an ld.so.cache entry in a failed check: soname, path, flags and hwcaps,
// for the tests that compare caches entry by entry.
#pragma once

#include <doctest/doctest.h>

#include <sstream>

#include "loader/ld_so_cache.hpp"

namespace doctest {
template <>
struct StringMaker<rootlock::loader::CacheEntry> {
    static String convert(const rootlock::loader::CacheEntry& e) {
        std::ostringstream out;
        out << "{" << e.soname << ", " << e.path << ", 0x" << std::hex << e.flags << ", 0x"
            << e.hwcap << ", \"" << e.hwcaps_subdir << "\"}";
        return out.str().c_str();
    }
};
}  // namespace doctest
