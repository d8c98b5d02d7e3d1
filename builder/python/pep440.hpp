// PEP 440 versions and version specifiers: parsing with PEP 440's normalisation, the normalised
// text, the total order, and SpecifierSet::contains with pip's (packaging's) pre-release policy.
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "util/result.hpp"

namespace rootlock::python {

enum class PreLabel { alpha, beta, rc };  // normalised "a", "b", "rc"

struct PreRelease {
    PreLabel label = PreLabel::alpha;
    uint64_t number = 0;
};

// A local version segment: a number (leading zeros dropped) or a lowercase alphanumeric string.
using LocalSegment = std::variant<uint64_t, std::string>;

// A parsed version. Equality and order follow PEP 440 (and packaging), not the fields: 1.0 ==
// 1.0.0, and 1.0.dev0 < 1.0a0 < 1.0 < 1.0+local < 1.0.post0.
struct Version {
    uint64_t epoch = 0;
    std::vector<uint64_t> release;  // never empty once parsed
    std::optional<PreRelease> pre;
    std::optional<uint64_t> post;
    std::optional<uint64_t> dev;
    std::vector<LocalSegment> local;  // empty: no local version

    bool is_prerelease() const { return pre.has_value() || dev.has_value(); }
    bool is_postrelease() const { return post.has_value(); }
    bool is_devrelease() const { return dev.has_value(); }
    // The version without its local part ("2.8.0+cu128" -> "2.8.0").
    Version public_version() const;
    // Epoch and release only ("1!2.0rc1.post2+x" -> "1!2.0").
    Version base_version() const;

    friend std::strong_ordering operator<=>(const Version& a, const Version& b);
    friend bool operator==(const Version& a, const Version& b);
};

// Accepts everything packaging's Version accepts: surrounding whitespace, a leading 'v', any case,
// alpha/beta/c/pre/preview/rev/r spellings, '-', '_' and '.' separators, implicit numbers
// ("1.0a" = "1.0a0"), "1.0-1" as a post release, and local segments joined by '-', '_' or '.'.
// Numbers must fit in 64 bits (packaging has no limit; rootlock rejects larger ones).
// Errors are located by column (1-based, in the text as given): where = "\"TEXT\":COL", so that
// Error::text() reads `"2.8.0+":7: expected a local version segment after '+'`. TEXT is cut
// to 60 characters with "..." when longer.
util::Result<Version> parse_version(std::string_view text);

// The normalised form: "1!2.0rc1.post2.dev3+cu128.7".
std::string to_string(const Version& version);

// One clause of a specifier set.
struct Specifier {
    std::string op;            // "~=", "==", "!=", "<=", ">=", "<", ">" or "==="
    std::string version_text;  // as written, without surrounding whitespace (".*" kept)
    Version version;  // parsed (the part before ".*" for a wildcard); for "===" only when the text
                      // is a PEP 440 version, see has_version
    bool wildcard = false;
    bool has_version = true;  // false only for "===" with text that is not a PEP 440 version

    // True when this clause names a pre-release with an inclusive operator (==, ===, >=, <=, ~=),
    // which makes its set accept pre-releases.
    bool names_prerelease() const;
    // The operator alone, ignoring the pre-release policy.
    bool matches(const Version& candidate) const;
};

struct SpecifierSet {
    std::vector<Specifier> specifiers;

    // The pre-release policy is packaging's SpecifierSet.contains(v, prereleases=None) (checked
    // against packaging 24.1): when allow_prereleases is false, a candidate that is a pre- or dev
    // release is rejected unless some clause names_prerelease() (">" and "<" never do); then, as
    // when allowed, every clause must match. An empty set matches every final release, and every
    // pre-release only when allowed. Matching: "==V" ignores the candidate's local version unless
    // V has one; "<=", ">=" compare the candidate's public version; ">V" rejects post-releases
    // and local versions of V itself (unless V is a post-release), "<V" pre-releases of V itself
    // (unless V is one); "~=V" is ">=V" plus "==" V's release without its last number ".*";
    // "===" compares to_string(candidate) with the text, ignoring case.
    bool contains(const Version& candidate, bool allow_prereleases) const;
    bool names_prerelease() const;
};

// Comma-separated clauses, whitespace allowed around each operator and version; empty clauses
// (",,") are skipped as packaging does, so "" is the empty set. Rules (packaging 22 and later):
// "~=" needs at least two release numbers and no local version; ".*" only after "==" or "!="
// and only right after the release numbers ("==1.0rc1.*" is rejected, as packaging >= 22 does);
// "<", ">", "<=", ">=" take no local version; "===" takes any non-empty text without whitespace.
// Errors located as for parse_version, columns in the whole text.
util::Result<SpecifierSet> parse_specifiers(std::string_view text);

std::string to_string(const Specifier& specifier);  // op + version_text: ">=2.8.0"
std::string to_string(const SpecifierSet& set);     // clauses joined by ","

namespace detail {
// parse_version over whole[begin, end), with errors located (and shown) in `whole`.
util::Result<Version> parse_version_in(std::string_view whole, size_t begin, size_t end);
// `"TEXT":COL` for a 0-based offset into text.
std::string located(std::string_view text, size_t offset);
}  // namespace detail

}  // namespace rootlock::python
