// Core metadata (METADATA in a dist-info, PKG-INFO in an sdist): the RFC 822 style header block
// that names a distribution, its version and its requirements, plus PEP 503 name normalisation.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/result.hpp"

namespace rootlock::python {

// The headers rootlock reads, plus every header in file order for anyone who needs more. Values
// are unfolded: a continuation line is joined to its header with one space, its leading and
// trailing whitespace dropped, so a folded Requires-Dist reads as one line.
struct Metadata {
    std::string metadata_version;  // empty when the header is absent (very old PKG-INFO)
    std::string name;              // as written; normalize_name() gives the comparable form
    std::string version;
    std::vector<std::string> requires_dist;
    std::optional<std::string> requires_python;
    std::vector<std::pair<std::string, std::string>> headers;  // (field name as written, value)
};

// Parses the header block of `text`, stopping at the first blank line (the body, where
// Metadata-Version 2.1 puts the description). Field names match case-insensitively, as the
// email module that pip reads them with does. Name and Version are required and may appear
// once; Name must be a valid PEP 508 project name. Errors: "NAME:LINE: problem" (or "NAME:
// problem" for a header that is missing altogether).
util::Result<Metadata> parse_metadata(std::string_view text, const std::string& name);

// PEP 503 normalisation: lowercase, every run of '-', '_' and '.' folded to one '-', so that
// "NVIDIA.CUDNN_cu13" and "nvidia-cudnn-cu13" compare equal.
std::string normalize_name(std::string_view name);

// True for a PEP 508 project name: ASCII letters and digits, with '-', '_' and '.' allowed
// between them (not first or last).
bool is_valid_project_name(std::string_view name);

}  // namespace rootlock::python
