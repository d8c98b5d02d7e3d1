// Curl-free HTTP text helpers: parsing what servers send back and formatting what users read.
#include "index/http_text.hpp"

#include <fmt/format.h>

#include <charconv>

namespace rootlock::index {

std::string lowercase(std::string_view text) {
    std::string out(text);
    for (char& c : out) {
        if (c >= 'A' && c <= 'Z')
            c = static_cast<char>(c - 'A' + 'a');
    }
    return out;
}

std::string_view trim(std::string_view text) {
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t'))
        text.remove_prefix(1);
    while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r' ||
                             text.back() == '\n'))
        text.remove_suffix(1);
    return text;
}

std::string format_seconds(long ms) {
    std::string text = fmt::format("{}.{:03}", ms / 1000, ms % 1000);
    while (text.back() == '0')
        text.pop_back();
    if (text.back() == '.')
        text.pop_back();
    return text;
}

std::optional<uint64_t> parse_u64(std::string_view text) {
    uint64_t value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size() || text.empty())
        return std::nullopt;
    return value;
}

std::optional<std::pair<uint64_t, std::optional<uint64_t>>> parse_content_range(
    std::string_view value) {
    if (value.substr(0, 6) != "bytes ")
        return std::nullopt;
    value.remove_prefix(6);
    auto dash = value.find('-');
    auto slash = value.find('/');
    if (dash == std::string_view::npos || slash == std::string_view::npos || slash < dash)
        return std::nullopt;
    auto start = parse_u64(value.substr(0, dash));
    if (!start || !parse_u64(value.substr(dash + 1, slash - dash - 1)))
        return std::nullopt;
    return std::pair{*start, parse_u64(value.substr(slash + 1))};
}

std::string redact_url(std::string_view url) {
    auto scheme_end = url.find("://");
    if (scheme_end == std::string_view::npos)
        return std::string(url);
    size_t start = scheme_end + 3;
    size_t end = url.find_first_of("/?#", start);
    if (end == std::string_view::npos)
        end = url.size();
    auto at = url.substr(start, end - start).rfind('@');
    if (at == std::string_view::npos)
        return std::string(url);
    std::string out(url.substr(0, start));
    out += url.substr(start + at + 1);
    return out;
}

}  // namespace rootlock::index
