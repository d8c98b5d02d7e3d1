// Lowercase hexadecimal for arbitrary bytes, for text formats (JSON) that must carry bytes
// which need not be UTF-8, the two spellings digests take (hex, RECORD's base64), and the
// standard base64 of HTTP credentials.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace rootlock::util {

std::string to_hex(std::string_view bytes);

// RECORD's digest spelling (PEP 376/427): URL-safe base64 without '=' padding.
std::string to_base64url(std::string_view bytes);

// Standard base64 (RFC 4648 section 4, with '=' padding): HTTP Basic credentials, the "auth"
// of a container tool's auth file, the OCI empty descriptor's data.
std::string to_base64(std::string_view bytes);
// The bytes of standard base64 text, padded or not; nullopt for any other character, a
// misplaced '=' or a length no encoder writes.
std::optional<std::string> from_base64(std::string_view text);

// The bytes of lowercase hex text; nullopt for an odd length or any other character.
std::optional<std::string> from_hex(std::string_view hex);

}  // namespace rootlock::util
