// apt's source entries as text gives them: one-line style ("deb [options] URL SUITE
// COMPONENT...", sources.list and *.list) and deb822 style (*.sources stanzas, what Debian 12's
// own container images and most vendor repositories, NVIDIA's CUDA one among them, ship). Only
// "deb" entries; deb-src, disabled stanzas and comments are skipped. Untrusted text: a
// malformed .sources stanza is one located error.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "util/result.hpp"

namespace rootlock::debian {

struct SourceLine {
    std::string url,
        suite;  // the URL without a trailing '/'; a flat repository's suite ends in '/'
    std::vector<std::string> components;  // none for a flat repository
    std::string signed_by;                // a keyring path inside the root, or empty
    std::string signed_by_key;  // an ASCII-armoured key written in the entry itself, or empty
    std::string from;           // "FILE:LINE": where the entry was read
};

// Whether `suite` names a flat repository ("./", "/"): no dists/ folder, no components.
bool is_flat_suite(const std::string& suite);

// One-line style, `signed-by` from the options; a line that is not a whole entry is skipped,
// as apt would refuse it too. `file` names the lines' origin.
std::vector<SourceLine> parse_sources_list(std::string_view text, const std::string& file = "");

// deb822 style: stanzas of Types, URIs, Suites, Components, Signed-By and Enabled (one entry
// for each URI and suite of a stanza whose Types has "deb"). Errors read "FILE:LINE: problem":
// "a stanza without Types" (URIs, Suites, Components), "Components given for the flat suite
// \"./\"", or deb822's own.
util::Result<std::vector<SourceLine>> parse_deb822_sources(std::string_view text,
                                                           const std::string& file);

}  // namespace rootlock::debian
