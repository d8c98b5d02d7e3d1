// Wheel file names (the binary distribution format): name, version, optional build tag and the
// compressed tag sets, expanded into every (python, abi, platform) triple the wheel claims.
#pragma once

#include <compare>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.hpp"

namespace rootlock::python {

// One PEP 425 tag triple, lowercased as packaging.tags.Tag stores it.
struct Tag {
    std::string interpreter;  // "cp311", "py3"
    std::string abi;          // "cp311", "abi3", "none"
    std::string platform;     // "manylinux_2_28_x86_64", "any"

    std::string text() const { return interpreter + "-" + abi + "-" + platform; }
    friend bool operator==(const Tag&, const Tag&) = default;
    friend auto operator<=>(const Tag&, const Tag&) = default;
};

// A parsed wheel file name. `filename` is the decoded name ("+" rather than "%2B"); the version
// stays a string (PEP 440 parsing belongs elsewhere).
struct WheelFilename {
    std::string filename;
    std::string name;                      // as written: "nvidia_cudnn_cu12"
    std::string normalized_name;           // PEP 503: "nvidia-cudnn-cu12"
    std::string version;                   // as written: "2.8.0+cu128"
    std::optional<std::string> build_tag;  // as written; starts with a digit
    std::vector<Tag> tags;                 // the expanded tag sets, in written order, no duplicates
};

// Parses `filename` (a bare name, not a path or URL). Percent escapes are decoded first, as in
// the last segment of an index URL ("torch-2.8.0%2Bcu128-..."). Tags are lowercased. Errors:
// "FILENAME: problem", FILENAME as given (cut short when very long).
util::Result<WheelFilename> parse_wheel_filename(std::string_view filename);

// Decodes "%XX" escapes; fails on a truncated or non-hex escape, or on a decoded NUL.
util::Result<std::string> percent_decode(std::string_view text);

}  // namespace rootlock::python
