// RFC 3986 reference resolution (parse with Appendix B's grammar, merge, remove dot segments,
// recompose) and the digest and file-name checks both index page parsers share.
#include "index/url.hpp"

#include <optional>

#include "index/project_page.hpp"
#include "util/quote.hpp"

namespace rootlock::index {

namespace {

// A URI reference split into RFC 3986's five components; an absent component differs from an
// empty one ("file:///x" has an empty authority, "mailto:x" none).
struct UrlParts {
    std::optional<std::string_view> scheme;
    std::optional<std::string_view> authority;
    std::string_view path;
    std::optional<std::string_view> query;
    std::optional<std::string_view> fragment;
};

bool is_alpha(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

bool is_hex_digit(char c) {
    return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

char to_lower(char c) {
    return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

std::string quoted(std::string_view text) {
    return "'" + util::printable(text) + "'";
}

bool is_delimiter(char c) {
    return c == ':' || c == '/' || c == '?' || c == '#';
}

// Appendix B: ^(([^:/?#]+):)?(//([^/?#]*))?([^?#]*)(\?([^#]*))?(#(.*))?
// Plain loops rather than find_first_of, which probes the set once per character.
UrlParts split_url(std::string_view url) {
    UrlParts parts;
    size_t scheme_end = 0;
    while (scheme_end < url.size() && !is_delimiter(url[scheme_end]))
        ++scheme_end;
    if (scheme_end > 0 && scheme_end < url.size() && url[scheme_end] == ':') {
        parts.scheme = url.substr(0, scheme_end);
        url.remove_prefix(scheme_end + 1);
    }
    if (url.size() >= 2 && url[0] == '/' && url[1] == '/') {
        url.remove_prefix(2);
        size_t end = 0;
        while (end < url.size() && url[end] != '/' && url[end] != '?' && url[end] != '#')
            ++end;
        parts.authority = url.substr(0, end);
        url.remove_prefix(end);
    }
    const size_t fragment_start = url.find('#');
    if (fragment_start != std::string_view::npos) {
        parts.fragment = url.substr(fragment_start + 1);
        url = url.substr(0, fragment_start);
    }
    const size_t query_start = url.find('?');
    if (query_start != std::string_view::npos) {
        parts.query = url.substr(query_start + 1);
        url = url.substr(0, query_start);
    }
    parts.path = url;
    return parts;
}

bool is_valid_scheme(std::string_view scheme) {
    if (scheme.empty() || !is_alpha(scheme[0]))
        return false;
    for (char c : scheme) {
        if (!is_alpha(c) && !is_digit(c) && c != '+' && c != '-' && c != '.')
            return false;
    }
    return true;
}

// Drops the last segment and its preceding '/' from `output` (section 5.2.4, step 2C), never
// reaching into the first `floor` characters (the scheme and authority already written).
void drop_last_segment(std::string& output, size_t floor) {
    const size_t slash = output.rfind('/');
    output.erase(slash == std::string::npos || slash < floor ? floor : slash);
}

// Section 5.2.4, appending to `output`, one step per iteration. Each step consumes input, and
// dropping a segment only erases what was appended, so the whole is linear in the path.
void remove_dot_segments(std::string_view input, std::string& output) {
    const size_t floor = output.size();
    while (!input.empty()) {
        if (input.starts_with("../")) {
            input.remove_prefix(3);
        } else if (input.starts_with("./")) {
            input.remove_prefix(2);
        } else if (input.starts_with("/./")) {
            input.remove_prefix(2);
        } else if (input == "/.") {
            output.push_back('/');
            break;
        } else if (input.starts_with("/../")) {
            input.remove_prefix(3);
            drop_last_segment(output, floor);
        } else if (input == "/..") {
            drop_last_segment(output, floor);
            output.push_back('/');
            break;
        } else if (input == "." || input == "..") {
            break;
        } else {
            const size_t end = std::min(input.find('/', 1), input.size());
            output.append(input.substr(0, end));
            input.remove_prefix(end);
        }
    }
}

// Section 5.2.3.
std::string merge_paths(const UrlParts& base, std::string_view reference_path) {
    if (base.authority && base.path.empty())
        return "/" + std::string(reference_path);
    const size_t slash = base.path.rfind('/');
    if (slash == std::string_view::npos)
        return std::string(reference_path);
    return std::string(base.path.substr(0, slash + 1)) + std::string(reference_path);
}

std::optional<std::string> url_problem(std::string_view url) {
    for (char c : url) {
        const auto byte = static_cast<unsigned char>(c);
        if (byte <= 0x20 || byte == 0x7f)
            return "URL " + quoted(url) + " contains a space or control character";
    }
    return std::nullopt;
}

}  // namespace

util::Result<std::string> resolve_url(std::string_view base, std::string_view reference) {
    for (std::string_view url : {base, reference}) {
        if (auto problem = url_problem(url))
            return util::make_error("", *problem);
    }
    const UrlParts b = split_url(base);
    const UrlParts r = split_url(reference);
    if (!b.scheme)
        return util::make_error("", "base URL " + quoted(base) + " has no scheme");
    for (const UrlParts* parts : {&b, &r}) {
        if (parts->scheme && !is_valid_scheme(*parts->scheme)) {
            return util::make_error("", "URL " + quoted(parts == &b ? base : reference) +
                                            " has an invalid scheme " + quoted(*parts->scheme));
        }
    }

    // Section 5.2.2, written straight into the result (section 5.3).
    const bool from_reference = r.scheme.has_value();
    const std::string_view scheme = from_reference ? *r.scheme : *b.scheme;
    const std::optional<std::string_view> authority =
        from_reference || r.authority ? r.authority : b.authority;
    std::optional<std::string_view> query = r.query;
    std::string result;
    result.reserve(base.size() + reference.size() + 4);
    result.append(scheme);
    result.push_back(':');
    if (authority) {
        result.append("//");
        result.append(*authority);
    }
    if (from_reference || r.authority) {
        remove_dot_segments(r.path, result);
    } else if (r.path.empty()) {
        result.append(b.path);
        if (!r.query)
            query = b.query;
    } else if (r.path.starts_with('/')) {
        remove_dot_segments(r.path, result);
    } else {
        remove_dot_segments(merge_paths(b, r.path), result);
    }
    if (query) {
        result.push_back('?');
        result.append(*query);
    }
    if (r.fragment) {
        result.push_back('#');
        result.append(*r.fragment);
    }
    return result;
}

std::pair<std::string, std::string> split_fragment(std::string_view url) {
    const size_t hash = url.find('#');
    if (hash == std::string_view::npos)
        return {std::string(url), std::string()};
    return {std::string(url.substr(0, hash)), std::string(url.substr(hash + 1))};
}

std::string last_path_segment(std::string_view url) {
    const std::string_view path = split_url(url).path;
    const size_t slash = path.rfind('/');
    return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

util::Result<std::map<std::string, std::string>> fragment_hashes(std::string_view fragment) {
    static constexpr std::string_view k_algorithms[] = {"md5",    "sha1",   "sha224",
                                                        "sha256", "sha384", "sha512"};
    std::map<std::string, std::string> hashes;
    while (!fragment.empty()) {
        const size_t amp = std::min(fragment.find('&'), fragment.size());
        const std::string_view pair = fragment.substr(0, amp);
        fragment.remove_prefix(amp == fragment.size() ? amp : amp + 1);
        const size_t equals = pair.find('=');
        if (equals == std::string_view::npos)
            continue;
        std::string name;
        for (char c : pair.substr(0, equals))
            name.push_back(to_lower(c));
        bool known = false;
        for (std::string_view algorithm : k_algorithms)
            known = known || name == algorithm;
        if (!known)
            continue;
        auto digest = normalize_digest(name, pair.substr(equals + 1));
        if (!digest.ok())
            return digest.error();
        hashes[name] = std::move(digest).value();
    }
    return hashes;
}

std::string project_url(std::string_view index_url, std::string_view normalized_name) {
    while (!index_url.empty() && index_url.back() == '/')
        index_url.remove_suffix(1);
    std::string url(index_url);
    url.push_back('/');
    url.append(normalized_name);
    url.push_back('/');
    return url;
}

util::Result<std::string> normalize_digest(std::string_view algorithm, std::string_view digest) {
    struct Known {
        std::string_view name;
        size_t hex_digits;
    };
    static constexpr Known k_known[] = {{"md5", 32},    {"sha1", 40},   {"sha224", 56},
                                        {"sha256", 64}, {"sha384", 96}, {"sha512", 128}};
    const std::string name = util::printable(algorithm);
    if (digest.empty())
        return util::make_error("", name + " digest is empty");
    std::string lowered(digest);
    for (char& c : lowered) {
        if (!is_hex_digit(c)) {
            // A digest of a few hundred characters is already absurd; do not echo megabytes.
            const std::string shown = digest.size() > 140
                                          ? std::string(digest.substr(0, 128)) + "..."
                                          : std::string(digest);
            return util::make_error("", name + " digest " + quoted(shown) + " is not hex");
        }
        c = to_lower(c);
    }
    for (const Known& known : k_known) {
        if (known.name == algorithm && known.hex_digits != digest.size()) {
            return util::make_error("", name + " digest has " + std::to_string(digest.size()) +
                                            " hex digits, expected " +
                                            std::to_string(known.hex_digits));
        }
    }
    return lowered;
}

bool is_plain_filename(std::string_view name) {
    if (name.empty() || name == "." || name == "..")
        return false;
    for (char c : name) {
        const auto byte = static_cast<unsigned char>(c);
        if (c == '/' || c == '\\' || byte < 0x20 || byte == 0x7f)
            return false;
    }
    return true;
}

}  // namespace rootlock::index
