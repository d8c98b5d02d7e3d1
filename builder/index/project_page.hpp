// A package index's project page (the PEP 503 / PEP 691 "simple" API) as plain data, and the
// parsers for its two forms: JSON (PEP 691) and HTML (PEP 503), which the resolver reads alike.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.hpp"

namespace rootlock::index {

// One file an index offers for a project, wheels and sdists alike (filtering is the caller's).
struct DistributionFile {
    std::string filename;  // decoded: "torch-2.8.0+cu128-cp311-cp311-manylinux_2_28_x86_64.whl"
    std::string url;       // absolute, without fragment
    std::map<std::string, std::string> hashes;   // lowercase algorithm -> lowercase hex
    std::optional<std::string> requires_python;  // unescaped: ">=3.9"
    bool yanked = false;
    std::string yanked_reason;  // "" when none given
    bool has_metadata = false;  // PEP 658/714: the core metadata is served at URL + ".metadata"
    std::map<std::string, std::string> metadata_hashes;  // hashes of the .metadata file
    std::optional<uint64_t> size;                        // PEP 700 (JSON only)
    std::optional<std::string> upload_time;              // PEP 700, verbatim (JSON only)
};

struct ProjectPage {
    std::string name;                     // JSON "name"; for HTML the name the caller asked for
    std::string api_version;              // JSON meta.api-version verbatim ("1.1"); "" for HTML
    std::vector<DistributionFile> files;  // in page order
};

enum class PageFormat { json, html };

// Pages above this size are refused rather than parsed: PyPI's largest project pages are a few
// MiB, so this only stops a hostile or broken server from exhausting memory.
inline constexpr size_t k_max_page_bytes = size_t{64} * 1024 * 1024;

// The Accept header rootlock sends: JSON preferred, HTML acceptable.
inline constexpr const char* k_accept_header =
    "application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html;q=0.2, "
    "text/html;q=0.01";

// From the response's Content-Type (case-insensitive, parameters ignored):
// application/vnd.pypi.simple.v1+json -> json; text/html and application/vnd.pypi.simple.v1+html
// -> html; anything else -> "URL: unsupported index page type 'X'" (X as given, trimmed).
util::Result<PageFormat> page_format(std::string_view content_type, const std::string& url);

// PEP 691 JSON, API version 1.x (minor versions only add keys, so they are ignored). Relative
// "url" values are resolved against `page_url`, and their fragments dropped. Errors are "URL: "
// followed by a path into the document and the problem: "URL: files[3].hashes: expected an
// object" (array indexes from 0, keys joined with '.'), or "URL: problem" for the whole body.
util::Result<ProjectPage> parse_simple_json(std::string_view body, const std::string& page_url);

// PEP 503 HTML: every <a href> (after the first <base href>, if any, is applied), in page order.
// The scanner is tolerant, as pip's is: junk, unknown tags, comments and a page cut short give
// fewer links, never an error, and a link whose href cannot be resolved or names no file is
// skipped. What is an error is a link that states something false-looking: a hash in the
// fragment or in data-core-metadata that is not a hex digest of the algorithm's length; such
// errors are located "URL:LINE:COL: problem" at the <a>. `project_name` becomes the page name.
util::Result<ProjectPage> parse_simple_html(std::string_view body, const std::string& page_url,
                                            const std::string& project_name);

// The project page URL for an index base URL and a normalised project name: BASE/NAME/, with
// exactly one slash between (trailing slashes of BASE dropped).
std::string project_url(std::string_view index_url, std::string_view normalized_name);

// Checks a digest for `algorithm` (already lowercase) and returns it in lowercase: it must be
// hex, and for md5, sha1, sha224, sha256, sha384 and sha512 of the digest's length. Errors are
// unlocated: "sha256 digest 'xyz' is not hex", "sha256 digest has 63 hex digits, expected 64".
util::Result<std::string> normalize_digest(std::string_view algorithm, std::string_view digest);

// A name that can be a file in one directory: not empty, not "." or "..", no '/', '\' or
// control character.
bool is_plain_filename(std::string_view name);

}  // namespace rootlock::index
