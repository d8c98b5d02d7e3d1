// Token expansion and path-list splitting for the loader model; see dst.hpp.
#include "loader/dst.hpp"

namespace rootlock::loader {

namespace {
// Matches "$NAME" or "${NAME}" at `pos`; returns the token length or 0.
size_t token_length(std::string_view text, size_t pos, std::string_view name) {
    std::string_view rest = text.substr(pos + 1);
    if (rest.substr(0, name.size()) == name) {
        // "$ORIGINAL" is not "$ORIGIN": the name must end at a non-identifier character.
        if (rest.size() == name.size())
            return name.size() + 1;
        char next = rest[name.size()];
        bool ident = (next >= 'A' && next <= 'Z') || (next >= 'a' && next <= 'z') ||
                     (next >= '0' && next <= '9') || next == '_';
        return ident ? 0 : name.size() + 1;
    }
    if (!rest.empty() && rest[0] == '{' && rest.substr(1, name.size()) == name &&
        rest.size() > name.size() + 1 && rest[name.size() + 1] == '}') {
        return name.size() + 3;
    }
    return 0;
}
}  // namespace

ExpandedPath expand_dst(std::string_view element, const DstContext& context) {
    ExpandedPath out;
    for (size_t i = 0; i < element.size(); ++i) {
        if (element[i] != '$') {
            out.path += element[i];
            continue;
        }
        if (size_t n = token_length(element, i, "ORIGIN")) {
            if (context.origin) {
                out.path += *context.origin;
            } else {
                out.unknown_token = "$ORIGIN";
            }
            i += n - 1;
        } else if (size_t m = token_length(element, i, "LIB")) {
            out.path += context.target ? context.target->lib_token : "lib";
            i += m - 1;
        } else if (size_t p = token_length(element, i, "PLATFORM")) {
            if (context.target && context.target->platform) {
                out.path += *context.target->platform;
            } else {
                out.unknown_token = "$PLATFORM";
            }
            i += p - 1;
        } else {
            out.path += '$';
        }
    }
    return out;
}

std::vector<std::string> split_path_list(std::string_view list, bool allow_semicolon) {
    std::vector<std::string> out;
    std::string current;
    for (char c : list) {
        if (c == ':' || (allow_semicolon && c == ';')) {
            out.push_back(current);
            current.clear();
        } else {
            current += c;
        }
    }
    out.push_back(current);
    return out;
}

std::string origin_of(std::string_view name) {
    size_t slash = name.rfind('/');
    if (slash == std::string_view::npos)
        return "/";
    if (slash == 0)
        return "/";
    return std::string(name.substr(0, slash));
}

}  // namespace rootlock::loader
