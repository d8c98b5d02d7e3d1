// OpenPGP verification of an archive's InRelease with gpgv, as apt itself does it: the signed
// text is taken from what gpgv wrote out, never from the input, so nothing unsigned is trusted.
#pragma once

#include <string>
#include <vector>

#include "util/result.hpp"

namespace rootlock::debian {

// The Debian archive keyring that debian-archive-keyring installs.
inline constexpr const char* k_debian_archive_keyring =
    "/usr/share/keyrings/debian-archive-keyring.gpg";

// Verifies the clear-signed file at `inrelease_path` against `keyrings` (binary OpenPGP
// keyrings, as gpgv --keyring reads them) and returns the signed text. Errors, all
// ErrorKind::network (the archive, or the way to it, is not what it claims; exit 3), located at
// `where` (the InRelease URL): "the signature does not verify against KEYRING: gpgv: ...",
// "KEYRING: no such keyring", "gpgv: not found; install it with apt-get".
util::Result<std::string> verify_clearsigned(const std::string& inrelease_path,
                                             const std::vector<std::string>& keyrings,
                                             const std::string& where);

}  // namespace rootlock::debian
