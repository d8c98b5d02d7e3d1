// Small text helpers shared by the Debian parsers, kept in one place so that every parser
// quotes, splits and checks names and digests the same way.
#include "debian/text_checks.hpp"

#include "debian/deb_version.hpp"

#include <charconv>

namespace rootlock::debian {

namespace {

bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

bool is_alnum(char c) {
    return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

}  // namespace

bool is_blank(char c) {
    return c == ' ' || c == '\t';
}

std::string_view trim_blanks(std::string_view text) {
    while (!text.empty() && is_blank(text.front()))
        text.remove_prefix(1);
    while (!text.empty() && is_blank(text.back()))
        text.remove_suffix(1);
    return text;
}

std::vector<std::string_view> split_blanks(std::string_view text) {
    std::vector<std::string_view> words;
    size_t pos = 0;
    while (pos < text.size()) {
        while (pos < text.size() && is_blank(text[pos]))
            ++pos;
        const size_t start = pos;
        while (pos < text.size() && !is_blank(text[pos]))
            ++pos;
        if (pos > start)
            words.push_back(text.substr(start, pos - start));
    }
    return words;
}

std::vector<std::string_view> split_lines(std::string_view text) {
    std::vector<std::string_view> lines;
    size_t start = 0;
    while (true) {
        const size_t end = text.find('\n', start);
        if (end == std::string_view::npos) {
            lines.push_back(text.substr(start));
            return lines;
        }
        lines.push_back(text.substr(start, end - start));
        start = end + 1;
    }
}

bool iequals(std::string_view a, std::string_view b) {
    if (a.size() != b.size())
        return false;
    for (size_t i = 0; i < a.size(); ++i) {
        char x = a[i];
        char y = b[i];
        if (x >= 'A' && x <= 'Z')
            x = static_cast<char>(x - 'A' + 'a');
        if (y >= 'A' && y <= 'Z')
            y = static_cast<char>(y - 'A' + 'a');
        if (x != y)
            return false;
    }
    return true;
}

std::optional<std::string> lowercase_hex(std::string_view text, size_t length) {
    if (text.size() != length)
        return std::nullopt;
    std::string out(text);
    for (char& c : out) {
        if (c >= 'A' && c <= 'F')
            c = static_cast<char>(c - 'A' + 'a');
        else if (!is_digit(c) && !(c >= 'a' && c <= 'f'))
            return std::nullopt;
    }
    return out;
}

std::optional<uint64_t> parse_decimal(std::string_view text) {
    if (text.empty())
        return std::nullopt;
    for (char c : text) {
        if (!is_digit(c))
            return std::nullopt;
    }
    uint64_t value = 0;
    const auto result = std::from_chars(text.data(), text.data() + text.size(), value);
    if (result.ec != std::errc())
        return std::nullopt;
    return value;
}

bool is_package_name(std::string_view name) {
    if (name.empty() || !is_alnum(name.front()))
        return false;
    for (char c : name) {
        if (!is_alnum(c) && c != '-' && c != '+' && c != '.' && c != '_')
            return false;
    }
    return true;
}

bool is_architecture_name(std::string_view name) {
    if (name.empty() || !is_alnum(name.front()))
        return false;
    for (char c : name) {
        if (!is_alnum(c) && c != '-')
            return false;
    }
    return true;
}

bool has_dot_dot(std::string_view path) {
    size_t start = 0;
    while (start <= path.size()) {
        size_t end = path.find('/', start);
        if (end == std::string_view::npos)
            end = path.size();
        if (path.substr(start, end - start) == "..")
            return true;
        start = end + 1;
    }
    return false;
}

std::optional<SourceField> split_source(std::string_view value) {
    const size_t open = value.find('(');
    if (open == std::string_view::npos) {
        if (!is_package_name(value))
            return std::nullopt;
        return SourceField{std::string(value), std::string()};
    }
    const std::string_view name = trim_blanks(value.substr(0, open));
    if (!is_package_name(name) || value.back() != ')')
        return std::nullopt;
    const std::string_view version = trim_blanks(value.substr(open + 1, value.size() - open - 2));
    if (version.empty())
        return std::nullopt;
    return SourceField{std::string(name), std::string(version)};
}

bool is_multi_arch(std::string_view value) {
    return value == "no" || value == "same" || value == "foreign" || value == "allowed";
}

util::Result<SourceField> source_of(const std::string* field, const std::string& name,
                                    const std::string& version) {
    if (field == nullptr)
        return SourceField{name, version};
    auto split = split_source(*field);
    if (!split)
        return util::make_error("",
                                "Source " + util::quote(*field) + " is not NAME or NAME (VERSION)");
    if (split->version.empty()) {
        split->version = version;
        return std::move(*split);
    }
    auto parsed = parse_deb_version(split->version);
    if (!parsed)
        return util::make_error("", "Source version " + parsed.error().text());
    return std::move(*split);
}

}  // namespace rootlock::debian
