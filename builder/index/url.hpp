// URL reference resolution (RFC 3986 section 5) and the small URL surgery index pages need:
// hrefs on a simple index are relative ("../../whl/x.whl", "/whl/x.whl") and carry hashes in
// the fragment, so every file URL goes through here before it is stored.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <utility>

#include "util/result.hpp"

namespace rootlock::index {

// Resolves `reference` against the absolute URL `base` exactly as RFC 3986 section 5.2 says
// (strict parser: "http:g" stays "http:g"), removing dot segments and keeping the reference's
// query and fragment. No normalisation beyond that: case and percent escapes stay as written,
// and any scheme is accepted (which schemes may be fetched is the caller's decision). Errors,
// unlocated (callers know where the URL came from): a base without a scheme, a space or control
// character in either URL, a scheme that is not ALPHA *(ALPHA / DIGIT / "+" / "-" / ".").
util::Result<std::string> resolve_url(std::string_view base, std::string_view reference);

// Splits at the first '#': {URL without the fragment, fragment without the '#'}. A URL without
// '#' gives an empty fragment.
std::pair<std::string, std::string> split_fragment(std::string_view url);

// The last segment of the URL's path, still percent-encoded: "torch-2.8.0%2Bcu128-...whl" for
// "https://h/whl/cu128/torch-2.8.0%2Bcu128-...whl?x#y"; "" when the path ends in '/'.
std::string last_path_segment(std::string_view url);

// The hashes a fragment such as "sha256=ABC" or "egg=x&sha512=..." carries (pip's reading:
// '&'-separated name=value pairs; names md5, sha1, sha224, sha256, sha384 and sha512, in any
// case, count and others are ignored). Digests are checked and lowercased as normalize_digest
// does; a bad digest is an error, since a link that promises a hash it cannot state is not one
// to download silently without it.
util::Result<std::map<std::string, std::string>> fragment_hashes(std::string_view fragment);

}  // namespace rootlock::index
