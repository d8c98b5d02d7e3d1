// Where an image goes in a registry: `host[:port]/name[:tag][@sha256:...]`, or the same after
// `docker://` (skopeo's and podman's transport prefix). The host is always written out: rootlock
// never guesses a default registry, so a reference means the same thing on every machine.
#pragma once

#include <string>
#include <string_view>

#include "util/result.hpp"

namespace rootlock::registry {

struct ImageReference {
    std::string host;    // "127.0.0.1:5000", "registry.example.org" (with its port, if any)
    std::string name;    // the repository: "team/train-cu130"
    std::string tag;     // "latest" when neither a tag nor a digest is given
    std::string digest;  // "sha256:<64 hex>" when given

    // "host/name:tag" or "host/name@digest", as the user would write it again.
    std::string text() const;
};

// Parses with the distribution spec's grammar: path components of lowercase letters and digits
// joined by ".", "_", "__" or dashes, a tag of up to 128 word characters, dots and dashes (not
// starting with either), a digest of sha256 and 64 lowercase hex digits. The first component is
// the host when it holds a "." or a ":" or is "localhost"; a reference without one is refused
// (one line naming the reference and what to add), as is one over 255 characters of name.
util::Result<ImageReference> parse_image_reference(std::string_view text);

}  // namespace rootlock::registry
