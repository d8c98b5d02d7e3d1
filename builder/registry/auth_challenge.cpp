// RFC 7235's challenge grammar, kept to what registries send: one challenge with auth-params
// (token68 challenges carry nothing a registry client can use).
#include "registry/auth_challenge.hpp"

#include <cctype>

#include "util/quote.hpp"

namespace rootlock::registry {

namespace {

// RFC 7230 tchar.
bool is_token_char(char c) {
    if (std::isalnum(static_cast<unsigned char>(c)))
        return true;
    switch (c) {
        case '!':
        case '#':
        case '$':
        case '%':
        case '&':
        case '\'':
        case '*':
        case '+':
        case '-':
        case '.':
        case '^':
        case '_':
        case '`':
        case '|':
        case '~':
            return true;
        default:
            return false;
    }
}

std::string lower(std::string_view text) {
    std::string out(text);
    for (char& c : out)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

void skip_spaces(std::string_view text, size_t& i) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t'))
        ++i;
}

util::Error malformed(std::string_view header, const std::string& why) {
    return util::make_error("", "WWW-Authenticate " + util::quote_prefix(header, 200) + ": " + why);
}

}  // namespace

util::Result<AuthChallenge> parse_auth_challenge(std::string_view header) {
    size_t i = 0;
    skip_spaces(header, i);
    size_t start = i;
    while (i < header.size() && is_token_char(header[i]))
        ++i;
    if (i == start)
        return malformed(header, "no authentication scheme");
    AuthChallenge challenge;
    challenge.scheme = lower(header.substr(start, i - start));
    while (true) {
        skip_spaces(header, i);
        while (i < header.size() && header[i] == ',') {
            ++i;
            skip_spaces(header, i);
        }
        if (i >= header.size())
            break;
        size_t name_start = i;
        while (i < header.size() && is_token_char(header[i]))
            ++i;
        if (i == name_start)
            return malformed(header,
                             "a parameter name was expected at byte " + std::to_string(i + 1));
        std::string name = lower(header.substr(name_start, i - name_start));
        skip_spaces(header, i);
        if (i >= header.size() || header[i] != '=') {
            // A second challenge ("Basic realm=x, Bearer ...") starts here: the first is enough.
            if (!challenge.params.empty())
                break;
            return malformed(header, "parameter " + util::quote(name) + " has no '='");
        }
        ++i;
        skip_spaces(header, i);
        std::string value;
        if (i < header.size() && header[i] == '"') {
            ++i;
            bool closed = false;
            while (i < header.size()) {
                char c = header[i++];
                if (c == '"') {
                    closed = true;
                    break;
                }
                if (c == '\\' && i < header.size())
                    c = header[i++];
                value.push_back(c);
            }
            if (!closed)
                return malformed(header, "the value of " + util::quote(name) + " is not closed");
        } else {
            size_t value_start = i;
            while (i < header.size() && (is_token_char(header[i]) || header[i] == '/' ||
                                         header[i] == ':' || header[i] == '='))
                ++i;
            if (i == value_start)
                return malformed(header, "parameter " + util::quote(name) + " has no value");
            value = std::string(header.substr(value_start, i - value_start));
        }
        challenge.params[name] = std::move(value);
        skip_spaces(header, i);
        if (i < header.size() && header[i] != ',')
            return malformed(header, "a ',' was expected at byte " + std::to_string(i + 1));
    }
    return challenge;
}

}  // namespace rootlock::registry
