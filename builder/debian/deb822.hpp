// The control-file syntax of Debian's indexes and databases (deb822: Release, Packages,
// /var/lib/dpkg/status): paragraphs of "Field: value" lines with continuation lines, separated
// by blank lines. Untrusted input: every malformed line is an error, never a crash.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.hpp"

namespace rootlock::debian {

struct Field {
    std::string name;   // as written ("Package")
    std::string value;  // the first line's text trimmed; continuation lines follow after '\n',
                        // each without its leading space; a " ." line becomes an empty line
    uint32_t line = 0;  // 1-based line of the field name
};

struct Paragraph {
    std::vector<Field> fields;  // in file order
    uint32_t line = 0;          // 1-based line of the first field

    // The value of `name` (field names compare case-insensitively), or nullptr.
    const std::string* get(std::string_view name) const;
};

// Parses every paragraph. Comment lines ('#' in column 0) are skipped. Errors read
// "FILE:LINE: problem", for example "Packages:12: a continuation line before any field",
// "Packages:3: \"Package\" appears twice in one paragraph", "Release:1: a line without ':'",
// "Packages:7: an empty field name". A NUL byte or a line longer than 1 MiB is refused ("a NUL
// byte", "a line longer than 1 MiB"), as are a carriage return ("a carriage return") and a name
// with a blank, a control or non-ASCII byte, or a leading '-' ("an invalid field name \"-X\"").
util::Result<std::vector<Paragraph>> parse_deb822(std::string_view text,
                                                  const std::string& file_name);

}  // namespace rootlock::debian
