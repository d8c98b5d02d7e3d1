// dist-info RECORD files (PEP 376, PEP 627, the wheel spec): the list of files a distribution
// installed, which the missing-file, shared-path and uninstall checks are all computed from.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.hpp"

namespace rootlock::python {

// One row of a RECORD: "path,algorithm=digest,size". The path is kept as written (relative to
// site-packages, "/"-separated, possibly climbing out with "../"); empty hash and size columns
// (pip writes them for RECORD itself and for the .pyc files it compiles) give empty strings and
// nullopt.
struct RecordEntry {
    std::string path;
    std::string hash_algorithm;  // "sha256", "sha384" or "sha512"; empty when the column is
    std::string hash_value;      // as written: urlsafe base64 without padding, or hex
    bool hash_is_hex = false;    // Debian's dh-python writes hexdigest() instead of base64
    std::optional<uint64_t> size;
};

// Parses `text` as Python's csv module reads and writes it (comma-separated, fields optionally
// double-quoted with "" for a quote inside, a quoted field may span lines, lines end with \n or
// \r\n). Every row must have exactly three fields. Hashes must use sha256, sha384 or sha512:
// the wheel spec forbids md5 and sha1, and an algorithm we cannot check proves nothing. The
// digest is urlsafe base64 without padding, or lowercase hex of the digest's full length, which
// pip never checks and Debian's python3-* packages carry (a root must not fail on them). Errors
// are located as "NAME:LINE: problem" or "NAME:LINE:COL: problem", `name` being the RECORD's
// path as messages should show it.
util::Result<std::vector<RecordEntry>> parse_record(std::string_view text, const std::string& name);

// The digest size in bytes of an accepted hash algorithm; nullopt for any other name.
std::optional<size_t> record_digest_bytes(std::string_view algorithm);

}  // namespace rootlock::python
