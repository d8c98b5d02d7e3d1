// What every harness shares: the input as text, and the checks that turn a broken promise of a
// parser (an exception, an error without text, a round trip that changes meaning) into a crash.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>

#include "util/quote.hpp"
#include "util/result.hpp"

namespace rootlock::fuzz {

inline std::string_view as_text(const uint8_t* data, size_t size) {
    return {reinterpret_cast<const char*>(data), size};
}

// Two inputs in one: the text before the first '\n' and the rest (seeds.py writes them so).
inline std::pair<std::string_view, std::string_view> split_first_line(std::string_view text) {
    size_t newline = text.find('\n');
    if (newline == std::string_view::npos)
        return {text, {}};
    return {text.substr(0, newline), text.substr(newline + 1)};
}

// A broken invariant: abort, so that libFuzzer keeps the input as a crash.
[[noreturn]] inline void fail(std::string_view what, std::string_view detail = {}) {
    std::fprintf(stderr, "fuzz invariant broken: %.*s %.*s\n", static_cast<int>(what.size()),
                 what.data(), static_cast<int>(detail.size()), detail.data());
    std::abort();
}

// Bad input must give one clear line: a non-empty message, and no control byte in it or in its
// location (parsers quote what they echo through util/quote.hpp).
inline void check_error(const util::Error& error) {
    if (error.message.empty())
        fail("an error without a message at", util::printable(error.where));
    if (!util::is_one_line(error.text()))
        fail("an error that is not one printable line:", util::printable(error.text()));
}

template <class T>
bool check(const util::Result<T>& result) {
    if (!result.ok())
        check_error(result.error());
    return result.ok();
}

}  // namespace rootlock::fuzz
