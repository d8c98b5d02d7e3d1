// The reference grammar of the distribution spec (and docker/distribution's reference package),
// checked piece by piece so that an error can say which piece is wrong.
#include "registry/image_reference.hpp"

#include <cctype>

#include "util/quote.hpp"

namespace rootlock::registry {

namespace {

constexpr size_t k_max_name = 255;
constexpr size_t k_max_tag = 128;

bool is_lower_alnum(char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

bool is_hex(char c) {
    return (c >= 'a' && c <= 'f') || (c >= '0' && c <= '9');
}

// One path component: [a-z0-9]+ ((\.|_|__|-+)[a-z0-9]+)*
bool valid_component(std::string_view part) {
    if (part.empty() || !is_lower_alnum(part.front()) || !is_lower_alnum(part.back()))
        return false;
    for (size_t i = 0; i < part.size();) {
        if (is_lower_alnum(part[i])) {
            ++i;
            continue;
        }
        size_t start = i;
        while (i < part.size() && !is_lower_alnum(part[i]))
            ++i;
        std::string_view separator = part.substr(start, i - start);
        bool dashes = separator.find_first_not_of('-') == std::string_view::npos;
        if (!(separator == "." || separator == "_" || separator == "__" || dashes))
            return false;
    }
    return true;
}

bool valid_tag(std::string_view tag) {
    if (tag.empty() || tag.size() > k_max_tag || tag.front() == '.' || tag.front() == '-')
        return false;
    for (char c : tag)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-'))
            return false;
    return true;
}

// host = domain-name or [IPv6], then an optional :port.
bool valid_host(std::string_view host) {
    if (host.empty())
        return false;
    std::string_view name = host;
    std::string_view port;
    if (host.front() == '[') {
        size_t close = host.find(']');
        if (close == std::string_view::npos)
            return false;
        for (char c : host.substr(1, close - 1))
            if (!(std::isxdigit(static_cast<unsigned char>(c)) || c == ':' || c == '.'))
                return false;
        name = {};
        std::string_view rest = host.substr(close + 1);
        if (!rest.empty()) {
            if (rest.front() != ':')
                return false;
            port = rest.substr(1);
            if (port.empty())
                return false;
        }
    } else if (size_t colon = host.rfind(':'); colon != std::string_view::npos) {
        name = host.substr(0, colon);
        port = host.substr(colon + 1);
        if (port.empty())
            return false;
    }
    for (char c : port)
        if (c < '0' || c > '9')
            return false;
    if (port.size() > 5)
        return false;
    if (host.front() == '[')
        return true;
    if (name.empty() || name.front() == '.' || name.back() == '.' || name.front() == '-')
        return false;
    for (char c : name)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-'))
            return false;
    return true;
}

util::Error refused(std::string_view text, const std::string& why) {
    return util::make_error("", "image reference " + util::quote_prefix(text, 200) + ": " + why);
}

}  // namespace

std::string ImageReference::text() const {
    std::string out = host + "/" + name;
    if (!digest.empty())
        return out + "@" + digest;
    return out + ":" + tag;
}

util::Result<ImageReference> parse_image_reference(std::string_view text) {
    std::string_view rest = text;
    if (rest.substr(0, 9) == "docker://")
        rest.remove_prefix(9);
    if (rest.empty())
        return refused(text, "empty");
    ImageReference ref;
    if (size_t at = rest.find('@'); at != std::string_view::npos) {
        std::string_view digest = rest.substr(at + 1);
        rest = rest.substr(0, at);
        bool good = digest.size() == 71 && digest.substr(0, 7) == "sha256:";
        for (size_t i = 7; good && i < digest.size(); ++i)
            good = is_hex(digest[i]);
        if (!good)
            return refused(text, "the digest must be sha256: and 64 lowercase hex digits");
        ref.digest = std::string(digest);
    }
    size_t slash = rest.find('/');
    std::string_view first = rest.substr(0, slash);
    bool names_host = first.find_first_of(".:") != std::string_view::npos || first == "localhost" ||
                      (!first.empty() && first.front() == '[');
    if (slash == std::string_view::npos || !names_host)
        return refused(text, "name the registry first, as in 127.0.0.1:5000/" +
                                 util::printable(rest.substr(0, 60)));
    if (!valid_host(first))
        return refused(text, "the registry " + util::quote(first) + " is not a host[:port]");
    ref.host = std::string(first);
    std::string_view path = rest.substr(slash + 1);
    // A tag follows the last ':' after the last '/' (a port's ':' is in the host, gone already).
    size_t last_slash = path.rfind('/');
    size_t colon = path.find(':', last_slash == std::string_view::npos ? 0 : last_slash);
    if (colon != std::string_view::npos) {
        std::string_view tag = path.substr(colon + 1);
        if (!valid_tag(tag))
            return refused(text, "the tag " + util::quote_prefix(tag, 140) +
                                     " must be up to 128 letters, digits, '_', '.' or '-', "
                                     "not starting with '.' or '-'");
        ref.tag = std::string(tag);
        path = path.substr(0, colon);
    }
    if (path.empty())
        return refused(text, "no repository name after the registry");
    if (path.size() > k_max_name)
        return refused(text, "the repository name is longer than 255 characters");
    for (size_t start = 0; start <= path.size();) {
        size_t end = path.find('/', start);
        std::string_view part =
            path.substr(start, end == std::string_view::npos ? end : end - start);
        if (!valid_component(part))
            return refused(text, "the name component " + util::quote_prefix(part, 80) +
                                     " must be lowercase letters and digits, joined by '.', "
                                     "'_', '__' or '-'");
        if (end == std::string_view::npos)
            break;
        start = end + 1;
    }
    ref.name = std::string(path);
    if (ref.tag.empty() && ref.digest.empty())
        ref.tag = "latest";
    return ref;
}

}  // namespace rootlock::registry
