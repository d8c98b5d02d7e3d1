// TOML text pieces for the lock writer: string escaping with a strict UTF-8 decoder, key quoting,
// the date-time check that keeps an untrusted upload time from breaking the file.
#include "pylock/toml_emit.hpp"

#include <cstdint>

namespace rootlock::pylock {

namespace {

// The length of the valid UTF-8 sequence at text[i], or 0 when the byte there does not start
// one (overlong forms, surrogates and values above U+10FFFF are invalid).
std::size_t utf8_length(std::string_view text, std::size_t i, uint32_t* code_point) {
    const auto byte = [&](std::size_t k) { return static_cast<uint8_t>(text[k]); };
    const uint8_t first = byte(i);
    std::size_t length = 0;
    uint32_t value = 0;
    uint32_t minimum = 0;
    if (first < 0x80) {
        *code_point = first;
        return 1;
    }
    if (first >= 0xC2 && first <= 0xDF) {
        length = 2;
        value = first & 0x1Fu;
        minimum = 0x80;
    } else if (first >= 0xE0 && first <= 0xEF) {
        length = 3;
        value = first & 0x0Fu;
        minimum = 0x800;
    } else if (first >= 0xF0 && first <= 0xF4) {
        length = 4;
        value = first & 0x07u;
        minimum = 0x10000;
    } else {
        return 0;
    }
    if (text.size() - i < length)
        return 0;
    for (std::size_t k = 1; k < length; ++k) {
        const uint8_t next = byte(i + k);
        if ((next & 0xC0u) != 0x80u)
            return 0;
        value = (value << 6) | (next & 0x3Fu);
    }
    if (value < minimum || value > 0x10FFFF || (value >= 0xD800 && value <= 0xDFFF))
        return 0;
    *code_point = value;
    return length;
}

bool is_control(uint32_t code_point) {
    return code_point < 0x20 || (code_point >= 0x7F && code_point <= 0x9F);
}

void append_escape(std::string& out, uint32_t code_point) {
    static const char k_hex[] = "0123456789ABCDEF";
    out += "\\u00";
    out += k_hex[(code_point >> 4) & 0xFu];
    out += k_hex[code_point & 0xFu];
}

bool all_digits(std::string_view text) {
    for (const char c : text) {
        if (c < '0' || c > '9')
            return false;
    }
    return !text.empty();
}

// The number in `text` (all digits, checked by the caller).
int number(std::string_view text) {
    int value = 0;
    for (const char c : text)
        value = value * 10 + (c - '0');
    return value;
}

bool two_digits_at_most(std::string_view text, int maximum) {
    return text.size() == 2 && all_digits(text) && number(text) <= maximum;
}

int days_in_month(int year, int month) {
    static const int k_days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    if (month == 2 && leap)
        return 29;
    return k_days[month - 1];
}

}  // namespace

std::string toml_string(std::string_view text) {
    std::string out = "\"";
    std::size_t i = 0;
    while (i < text.size()) {
        uint32_t code_point = 0;
        const std::size_t length = utf8_length(text, i, &code_point);
        if (length == 0) {
            out += "\xEF\xBF\xBD";  // U+FFFD REPLACEMENT CHARACTER
            ++i;
            continue;
        }
        if (code_point == '"') {
            out += "\\\"";
        } else if (code_point == '\\') {
            out += "\\\\";
        } else if (is_control(code_point)) {
            append_escape(out, code_point);
        } else {
            out.append(text.substr(i, length));
        }
        i += length;
    }
    out += '"';
    return out;
}

std::string toml_key(std::string_view key) {
    bool bare = !key.empty();
    for (const char c : key) {
        const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                        (c >= '0' && c <= '9') || c == '_' || c == '-';
        bare = bare && ok;
    }
    return bare ? std::string(key) : toml_string(key);
}

bool is_toml_date_time(std::string_view text) {
    // YYYY-MM-DDTHH:MM:SS is 19 characters; everything after it is the fraction and offset.
    if (text.size() < 19)
        return false;
    const std::string_view year = text.substr(0, 4);
    const std::string_view month = text.substr(5, 2);
    const std::string_view day = text.substr(8, 2);
    if (!all_digits(year) || text[4] != '-' || text[7] != '-' || !all_digits(month) ||
        !all_digits(day))
        return false;
    const int month_number = number(month);
    if (month_number < 1 || month_number > 12)
        return false;
    const int day_number = number(day);
    if (day_number < 1 || day_number > days_in_month(number(year), month_number))
        return false;
    if (text[10] != 'T' && text[10] != 't' && text[10] != ' ')
        return false;
    if (!two_digits_at_most(text.substr(11, 2), 23) || text[13] != ':' ||
        !two_digits_at_most(text.substr(14, 2), 59) || text[16] != ':' ||
        !two_digits_at_most(text.substr(17, 2), 59))
        return false;
    std::string_view rest = text.substr(19);
    if (!rest.empty() && rest[0] == '.') {
        std::size_t digits = 1;
        while (digits < rest.size() && rest[digits] >= '0' && rest[digits] <= '9')
            ++digits;
        if (digits == 1)
            return false;
        rest.remove_prefix(digits);
    }
    if (rest.empty() || rest == "Z" || rest == "z")
        return true;
    return rest.size() == 6 && (rest[0] == '+' || rest[0] == '-') &&
           two_digits_at_most(rest.substr(1, 2), 23) && rest[3] == ':' &&
           two_digits_at_most(rest.substr(4, 2), 59);
}

bool is_lower_hex(std::string_view text, std::size_t count) {
    if (text.size() != count)
        return false;
    for (const char c : text) {
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
            return false;
    }
    return true;
}

std::string toml_array(const std::vector<std::string>& items) {
    if (items.empty())
        return "[]";
    std::string out = "[\n";
    for (const std::string& item : items)
        out += "    " + item + ",\n";
    out += "]";
    return out;
}

std::string toml_string_array(const std::vector<std::string>& strings) {
    std::vector<std::string> items;
    items.reserve(strings.size());
    for (const std::string& text : strings)
        items.push_back(toml_string(text));
    return toml_array(items);
}

InlineTable& InlineTable::add(std::string_view key, std::string value) {
    m_items.emplace_back(toml_key(key), std::move(value));
    return *this;
}

std::string InlineTable::str() const {
    if (m_items.empty())
        return "{}";
    std::string out = "{ ";
    for (std::size_t i = 0; i < m_items.size(); ++i) {
        if (i > 0)
            out += ", ";
        out += m_items[i].first + " = " + m_items[i].second;
    }
    out += " }";
    return out;
}

}  // namespace rootlock::pylock
