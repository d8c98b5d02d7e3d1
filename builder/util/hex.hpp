// Lowercase hexadecimal for arbitrary bytes, for text formats (JSON) that must carry bytes
// which need not be UTF-8, and the two spellings digests take (hex, RECORD's base64).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace rootlock::util {

std::string to_hex(std::string_view bytes);

// RECORD's digest spelling (PEP 376/427): URL-safe base64 without '=' padding.
std::string to_base64url(std::string_view bytes);

// The bytes of lowercase hex text; nullopt for an odd length or any other character.
std::optional<std::string> from_hex(std::string_view hex);

}  // namespace rootlock::util
