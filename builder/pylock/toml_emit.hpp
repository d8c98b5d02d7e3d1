// Small pieces of TOML text for the canonical lock writer: escaped strings, keys, arrays and
// inline tables. Hand-written (not toml++'s formatter) so that the bytes never change under us.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rootlock::pylock {

// A TOML basic string with its quotes. '"' and '\' are escaped, every control character (C0,
// DEL and C1) becomes \uXXXX, other characters stay as UTF-8; each byte that is not part of
// valid UTF-8 becomes U+FFFD, since TOML text must be UTF-8.
std::string toml_string(std::string_view text);

// A key: bare when it is made only of A-Za-z0-9, '_' and '-', else a basic string.
std::string toml_key(std::string_view key);

// True when `text` is a TOML date-time that toml++ reads (offset or local): YYYY-MM-DD, 'T', 't'
// or ' ', HH:MM:SS, optional fraction, optional 'Z', 'z' or +HH:MM/-HH:MM, with real calendar
// days (leap years included) and seconds 00-59 (toml++ refuses leap seconds).
bool is_toml_date_time(std::string_view text);

// True for exactly `count` characters of lowercase hex.
bool is_lower_hex(std::string_view text, std::size_t count);

// "[]", or one item per line indented by four spaces, each followed by a comma, then "]".
// Items are already TOML text.
std::string toml_array(const std::vector<std::string>& items);

// toml_array of toml_string of each.
std::string toml_string_array(const std::vector<std::string>& strings);

// "{ key = value, ... }" in insertion order, or "{}". Values are already TOML text.
class InlineTable {
  public:
    InlineTable& add(std::string_view key, std::string value);
    std::string str() const;

  private:
    std::vector<std::pair<std::string, std::string>> m_items;
};

}  // namespace rootlock::pylock
