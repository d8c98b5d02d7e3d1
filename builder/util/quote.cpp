// Quoting untrusted text into one-line messages; see quote.hpp.
#include "util/quote.hpp"

namespace rootlock::util {

namespace {

bool is_control(char c) {
    const auto byte = static_cast<unsigned char>(c);
    return byte < 0x20 || byte == 0x7f;
}

void append_escaped(std::string& out, char c) {
    static const char k_digits[] = "0123456789abcdef";
    const auto byte = static_cast<unsigned char>(c);
    out += "\\x";
    out.push_back(k_digits[byte >> 4]);
    out.push_back(k_digits[byte & 0xf]);
}

}  // namespace

std::string quote(std::string_view text) {
    std::string out = "\"";
    out.reserve(text.size() + 2);
    for (char c : text) {
        if (c == '"' || c == '\\') {
            out.push_back('\\');
            out.push_back(c);
        } else if (is_control(c)) {
            append_escaped(out, c);
        } else {
            out.push_back(c);
        }
    }
    out.push_back('"');
    return out;
}

std::string quote_prefix(std::string_view text, size_t limit) {
    if (text.size() <= limit)
        return quote(text);
    std::string out = quote(text.substr(0, limit));
    out.insert(out.size() - 1, "...");
    return out;
}

std::string printable(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (char c : text) {
        if (is_control(c))
            append_escaped(out, c);
        else
            out.push_back(c);
    }
    return out;
}

bool is_one_line(std::string_view text) {
    for (char c : text) {
        if (is_control(c))
            return false;
    }
    return true;
}

}  // namespace rootlock::util
