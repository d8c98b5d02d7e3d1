// OpenPGP ASCII armour (RFC 4880 section 6.2) undone for public keys: apt reads a keyring
// ending in .asc, or written into a deb822 Signed-By field, as armoured text, but gpgv (2.2)
// reads only binary keyrings, so such a key is turned into its packets first.
#pragma once

#include <string>
#include <string_view>

#include "util/result.hpp"

namespace rootlock::debian {

// Whether `bytes` hold an armoured public key block.
bool is_armoured_key(std::string_view bytes);

// The binary packets of every "PGP PUBLIC KEY BLOCK" in `bytes`, in order (armour headers and
// the CRC-24 line skipped); bytes that are not armoured come back unchanged. Errors read
// "WHERE: problem": "an armoured key block without its END line", "an armoured key block
// whose body is not base64", "an armoured key block with no key in it".
util::Result<std::string> dearmor_key(std::string_view bytes, const std::string& where);

}  // namespace rootlock::debian
