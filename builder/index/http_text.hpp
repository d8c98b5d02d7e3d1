// The text side of HTTP, without curl: header values, Content-Range, durations in messages and
// URLs with their credentials removed, kept apart so they can be tested on their own.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace rootlock::index {

// ASCII lowercase (header names).
std::string lowercase(std::string_view text);
// Without surrounding spaces, tabs and line ends (header values).
std::string_view trim(std::string_view text);
// Milliseconds as seconds without trailing zeros: 300 -> "0.3", 30000 -> "30", 1250 -> "1.25".
std::string format_seconds(long ms);
// A whole decimal number that fits 64 bits.
std::optional<uint64_t> parse_u64(std::string_view text);
// "bytes START-END/TOTAL" (TOTAL may be "*"): the start, and the total when it is given.
std::optional<std::pair<uint64_t, std::optional<uint64_t>>> parse_content_range(
    std::string_view value);
// The URL without "user:password@", for every message and log line.
std::string redact_url(std::string_view url);

}  // namespace rootlock::index
