// PEP 440 version specifiers: parsing a comma-separated set with PEP 440's validity rules, and
// matching a version against each operator the way packaging does (local, post and pre rules).
#include "python/pep440.hpp"
#include "util/quote.hpp"

#include <algorithm>
#include <array>

namespace rootlock::python {

namespace {

bool is_space(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

char ascii_lower(char c) {
    return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

std::string lowered(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (char c : text)
        out.push_back(ascii_lower(c));
    return out;
}

// "==P.*" (P is an epoch and release only): the candidate's release padded with zeros to P's
// length starts with P's release; everything after the release is ignored.
bool prefix_matches(const Version& prefix, const Version& candidate) {
    if (prefix.epoch != candidate.epoch)
        return false;
    std::vector<uint64_t> release = candidate.release;
    if (release.size() < prefix.release.size())
        release.resize(prefix.release.size(), 0);
    return std::equal(prefix.release.begin(), prefix.release.end(), release.begin());
}

bool equal_to(const Specifier& spec, const Version& candidate) {
    if (spec.wildcard)
        return prefix_matches(spec.version, candidate.public_version());
    if (spec.version.local.empty())
        return candidate.public_version() == spec.version;
    return candidate == spec.version;
}

bool same_base(const Version& a, const Version& b) {
    return a.base_version() == b.base_version();
}

constexpr std::array<std::string_view, 8> k_operators = {
    "===", "~=", "==", "!=", "<=", ">=", "<", ">"};

util::Result<Specifier> parse_clause(std::string_view whole, size_t begin, size_t end) {
    Specifier out;
    const std::string_view clause = whole.substr(begin, end - begin);
    for (std::string_view op : k_operators) {
        if (clause.substr(0, op.size()) == op) {
            out.op = std::string(op);
            break;
        }
    }
    if (out.op.empty()) {
        return util::make_error(detail::located(whole, begin),
                                "expected an operator (~=, ==, !=, <=, >=, <, >, ===)");
    }
    size_t vbegin = begin + out.op.size();
    while (vbegin < end && is_space(whole[vbegin]))
        ++vbegin;
    size_t vend = end;
    while (vend > vbegin && is_space(whole[vend - 1]))
        --vend;
    if (vbegin == vend)
        return util::make_error(detail::located(whole, vbegin),
                                "expected a version after '" + util::printable(out.op) + "'");
    out.version_text = std::string(whole.substr(vbegin, vend - vbegin));
    const auto problem = [&](const std::string& message) {
        return util::make_error(detail::located(whole, vbegin), message);
    };
    if (out.op == "===") {
        for (size_t i = vbegin; i < vend; ++i) {
            if (is_space(whole[i]))
                return util::make_error(detail::located(whole, i),
                                        "unexpected whitespace inside a version");
            // packaging's arbitrary version is [^\s;)]*: ';' would start a marker and ')'
            // close a parenthesised specifier once the requirement is written out again.
            if (whole[i] == ';' || whole[i] == ')')
                return util::make_error(detail::located(whole, i),
                                        "unexpected '" + util::printable(whole.substr(i, 1)) +
                                            "' inside an arbitrary version");
        }
        auto parsed = parse_version(out.version_text);
        out.has_version = parsed.ok();
        if (parsed.ok())
            out.version = std::move(parsed).value();
        return out;
    }
    size_t parse_end = vend;
    if (out.version_text.size() >= 2 && out.version_text.ends_with(".*")) {
        if (out.op != "==" && out.op != "!=")
            return problem("a '.*' wildcard is only allowed after '==' or '!='");
        out.wildcard = true;
        parse_end = vend - 2;
        if (parse_end > vbegin && is_space(whole[parse_end - 1]))
            return util::make_error(detail::located(whole, parse_end - 1),
                                    "unexpected whitespace inside a version");
    }
    ROOTLOCK_TRY(version, detail::parse_version_in(whole, vbegin, parse_end));
    out.version = std::move(version);
    if (out.wildcard && !out.version.local.empty())
        return problem("a '.*' wildcard cannot follow a local version");
    if (out.wildcard && (out.version.pre || out.version.post || out.version.dev))
        return problem("a '.*' wildcard may only follow release numbers");
    if (out.op != "==" && out.op != "!=" && !out.version.local.empty())
        return problem("'" + util::printable(out.op) + "' does not allow a local version");
    if (out.op == "~=" && out.version.release.size() < 2)
        return problem("'~=' needs a version with at least two release numbers");
    return out;
}

}  // namespace

bool Specifier::names_prerelease() const {
    if (op == "==" || op == "===" || op == ">=" || op == "<=" || op == "~=")
        return has_version && version.is_prerelease();
    return false;
}

bool Specifier::matches(const Version& candidate) const {
    if (op == "===")
        return to_string(candidate) == lowered(version_text);
    if (op == "==")
        return equal_to(*this, candidate);
    if (op == "!=")
        return !equal_to(*this, candidate);
    if (op == "<=")
        return candidate.public_version() <= version;
    if (op == ">=")
        return candidate.public_version() >= version;
    if (op == "<") {
        if (!(candidate < version))
            return false;
        // "<V" excludes pre-releases of V itself unless V is one.
        return version.is_prerelease() || !candidate.is_prerelease() ||
               !same_base(candidate, version);
    }
    if (op == ">") {
        if (!(candidate > version))
            return false;
        // ">V" excludes post-releases and local versions of V itself unless V is a post-release.
        if (!version.is_postrelease() && candidate.is_postrelease() &&
            same_base(candidate, version))
            return false;
        return candidate.local.empty() || !same_base(candidate, version);
    }
    // "~=V": ">=V" and "==P.*" where P is V's release without its last number.
    Version prefix;
    prefix.epoch = version.epoch;
    prefix.release.assign(version.release.begin(), version.release.end() - 1);
    return candidate.public_version() >= version &&
           prefix_matches(prefix, candidate.public_version());
}

bool SpecifierSet::names_prerelease() const {
    return std::any_of(specifiers.begin(), specifiers.end(),
                       [](const Specifier& s) { return s.names_prerelease(); });
}

bool SpecifierSet::contains(const Version& candidate, bool allow_prereleases) const {
    if (candidate.is_prerelease() && !allow_prereleases && !names_prerelease())
        return false;
    return std::all_of(specifiers.begin(), specifiers.end(),
                       [&](const Specifier& s) { return s.matches(candidate); });
}

util::Result<SpecifierSet> parse_specifiers(std::string_view text) {
    SpecifierSet out;
    size_t begin = 0;
    while (begin <= text.size()) {
        size_t end = text.find(',', begin);
        if (end == std::string_view::npos)
            end = text.size();
        size_t b = begin;
        while (b < end && is_space(text[b]))
            ++b;
        size_t e = end;
        while (e > b && is_space(text[e - 1]))
            --e;
        if (b < e) {
            ROOTLOCK_TRY(clause, parse_clause(text, b, e));
            out.specifiers.push_back(std::move(clause));
        }
        begin = end + 1;
    }
    return out;
}

std::string to_string(const Specifier& specifier) {
    return specifier.op + specifier.version_text;
}

std::string to_string(const SpecifierSet& set) {
    std::string out;
    for (const Specifier& s : set.specifiers) {
        if (!out.empty())
            out += ',';
        out += to_string(s);
    }
    return out;
}

}  // namespace rootlock::python
