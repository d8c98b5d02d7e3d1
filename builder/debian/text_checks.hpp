// Small text helpers shared by the Debian parsers (they quote through util/quote.hpp): splitting
// on blanks and the few syntax checks (hex digests, names, paths) they all make.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/quote.hpp"
#include "util/result.hpp"

namespace rootlock::debian {

bool is_blank(char c);  // ' ' or '\t'
std::string_view trim_blanks(std::string_view text);
std::vector<std::string_view> split_blanks(std::string_view text);
std::vector<std::string_view> split_lines(std::string_view text);  // on '\n'

bool iequals(std::string_view a, std::string_view b);  // ASCII, case-insensitive

// Hex digits of either case, exactly `length` of them, returned in lowercase; else nullopt.
std::optional<std::string> lowercase_hex(std::string_view text, size_t length);

// A non-empty run of decimal digits that fits; no sign, no blanks.
std::optional<uint64_t> parse_decimal(std::string_view text);

// dpkg's pkg_name_is_illegal and dpkg_arch_name_is_illegal: these names become file names
// (/var/lib/dpkg/info/NAME:ARCH.md5sums), so anything else is refused.
bool is_package_name(std::string_view name);
bool is_architecture_name(std::string_view name);

// A path component that is exactly "..".
bool has_dot_dot(std::string_view path);

// The Source field of Packages and status: "NAME" or "NAME (VERSION)" with a valid name; the
// version is not parsed here. nullopt when the text has neither form.
struct SourceField {
    std::string name, version;  // version "" for the plain form
};
std::optional<SourceField> split_source(std::string_view value);

// The source a package was built from, as Packages and status both give it: from `field` (the
// Source value, or nullptr when absent), else the package's own name and version. The problem,
// worded as both parsers report it: "Source \"...\" is not NAME or NAME (VERSION)" or
// "Source version ...".
util::Result<SourceField> source_of(const std::string* field, const std::string& name,
                                    const std::string& version);

// Multi-Arch takes one of "no", "same", "foreign", "allowed" (dpkg refuses anything else).
bool is_multi_arch(std::string_view value);

}  // namespace rootlock::debian
