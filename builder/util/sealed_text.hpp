// Text that carries its own digest, for the small cache files rootlock writes for itself (index
// pages, wheel scans): one line "rootlock-sealed sha256:HEX", then the content. A file whose
// content no longer matches its line was changed after it was written (a disk fault, a hand
// edit) and is never read as if it were whole.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace rootlock::util {

// The sealed form of `content`.
std::string seal_text(std::string_view content);

// Whether `text` starts as a sealed file does, whatever follows; a file that does not was
// written by an earlier version of rootlock, not damaged.
bool looks_sealed(std::string_view text);

// The content of a sealed `text` whose digest matches it; nullopt when it does not (or the
// text is not sealed at all).
std::optional<std::string_view> unseal_text(std::string_view text);

}  // namespace rootlock::util
