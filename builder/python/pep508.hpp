// PEP 508 dependency specifiers: requirements ("name[extras] (specifier) ; marker", "name @ URL")
// and environment markers, parsed into a tree and evaluated against a DECLARED target environment
// (never the build host), following packaging (22 and later) in what it accepts and answers.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "python/pep440.hpp"
#include "util/result.hpp"

namespace rootlock::python {

// The PEP 508 marker variables. The legacy spellings packaging still accepts (os.name,
// sys.platform, platform.version, platform.machine, platform.python_implementation and
// python_implementation) parse to these.
enum class MarkerVariable {
    python_version,
    python_full_version,
    os_name,
    sys_platform,
    platform_release,
    platform_system,
    platform_version,
    platform_machine,
    platform_python_implementation,
    implementation_name,
    implementation_version,
    extra,
};

enum class MarkerOp {
    less,           // <
    less_equal,     // <=
    equal,          // ==
    not_equal,      // !=
    greater_equal,  // >=
    greater,        // >
    compatible,     // ~=
    arbitrary,      // ===
    in,             // in
    not_in,         // not in
};

// `variable OP "literal"`, or `"literal" OP variable` when variable_on_left is false.
struct MarkerComparison {
    MarkerVariable variable = MarkerVariable::python_version;
    MarkerOp op = MarkerOp::equal;
    std::string literal;  // without its quotes
    bool variable_on_left = true;
};

enum class MarkerJoin { and_, or_ };

struct Marker;

// One operand of a boolean expression: a comparison, or a parenthesised expression.
struct MarkerTerm {
    std::optional<MarkerComparison> comparison;
    std::vector<Marker> group;  // exactly one element when the term is parenthesised
};

// terms[0] joins[0] terms[1] joins[1] ... ; 'and' binds tighter than 'or'.
struct Marker {
    std::vector<MarkerTerm> terms;  // never empty once parsed
    std::vector<MarkerJoin> joins;  // terms.size() - 1 entries
};

// The values of the marker variables for one declared target.
struct MarkerEnvironment {
    std::string python_version;       // "3.12"
    std::string python_full_version;  // "3.12.1"
    std::string os_name;              // "posix"
    std::string sys_platform;         // "linux"
    std::string platform_release;     // kernel release; "" when the target does not declare one
    std::string platform_system;      // "Linux"
    std::string platform_version;     // "" when the target does not declare one
    std::string platform_machine;     // "x86_64", "aarch64"
    std::string platform_python_implementation;  // "CPython"
    std::string implementation_name;             // "cpython"
    std::string implementation_version;          // "3.12.1"

    const std::string& value(MarkerVariable variable) const;  // not for MarkerVariable::extra
};

// The usual values of CPython major.minor.micro on Linux for `machine` (platform_release and
// platform_version are left empty: they describe a kernel, which a recipe does not pin).
MarkerEnvironment linux_cpython(int major, int minor, int micro, std::string machine);

// A comparison needs exactly one variable side (packaging parses `"a" == "b"` and then raises
// when evaluating it); the literal compared with `extra` is normalised (PEP 685) when parsed, as
// packaging does for the first comparison. Whitespace is spaces and tabs; strings are single- or
// double-quoted, without escapes; parentheses nest at most 64 deep. Errors are located as
// pep440.hpp's are: `"TEXT":COL: problem`.
util::Result<Marker> parse_marker(std::string_view text);

// As packaging's str(Marker): `python_version < "3.10" and (os_name == "nt" or extra == "gpu")`,
// with double quotes, canonical variable names, and redundant parentheses dropped.
std::string to_string(const Marker& marker);
std::string_view to_string(MarkerVariable variable);
std::string_view to_string(MarkerOp op);

// packaging's evaluation, for every variable: a comparison `LHS OP RHS` (either side the variable)
// first tries `OP RHS` as a PEP 440 specifier and LHS as a version (contains() with pre-releases
// allowed); when either does not parse it compares the strings (in / not in: LHS is a substring
// of RHS; ~= and === answer false). Where packaging raises instead (a specifier that parses
// against a non-version, e.g. platform_release >= "5" on "6.1.0-13-amd64"), this compares strings.
// `extra` is the extra being installed ("" for none); for the extra variable both sides are
// compared after PEP 685 normalisation (normalize_name), so `extra == "GPU_Support"` matches
// "gpu-support".
bool evaluate(const Marker& marker, const MarkerEnvironment& environment,
              std::string_view extra = "");

struct Requirement {
    std::string name;                 // as written
    std::string normalized_name;      // normalize_name(name)
    std::vector<std::string> extras;  // normalised, sorted, unique
    SpecifierSet specifiers;          // empty for none (and for a URL requirement)
    std::optional<std::string> url;   // "name @ URL"
    std::optional<Marker> marker;     // "; marker"
};

// `name [extras] (specifier | (specifier) | @ URL) [; marker]`, as packaging parses it: the
// specifier bare or parenthesised ("torch (==2.8.0)" as old METADATA writes), a URL runs to the
// next whitespace, and a marker after a URL needs whitespace before its ';'. Errors located in the
// whole text: `"foo[bar":8: expected ',' or ']' after an extra`.
util::Result<Requirement> parse_requirement(std::string_view text);

// As packaging's str(Requirement), with the normalised extras and the clauses as written.
std::string to_string(const Requirement& requirement);

// True when `requirement` applies to `environment` while installing `extra` ("" for none): it has
// no marker, or its marker evaluates true.
bool applies(const Requirement& requirement, const MarkerEnvironment& environment,
             std::string_view extra = "");

namespace detail {
// parse_marker over whole[begin, end), with errors located (and shown) in `whole`.
util::Result<Marker> parse_marker_in(std::string_view whole, size_t begin, size_t end);
}  // namespace detail

}  // namespace rootlock::python
