// Untrusted text shown inside a one-line message: every parser quotes what it echoes through
// here, so that no input (a NUL, a newline, an escape sequence) can break an error's one line
// or write to the user's terminal.
#pragma once

#include <string>
#include <string_view>

namespace rootlock::util {

// `text` in double quotes, with '"', '\\' and control bytes (below 0x20, and 0x7f) escaped as
// \" \\ \xNN, so that the quoted text reads back unambiguously.
std::string quote(std::string_view text);

// At most `limit` bytes of `text`, quoted, with "..." before the closing quote when cut.
std::string quote_prefix(std::string_view text, size_t limit);

// `text` as is but for its control bytes, written \xNN: for text already in quotes of its own
// (a character shown between apostrophes) and for whole lines echoed from a file.
std::string printable(std::string_view text);

// True when `text` holds no control byte: what a one-line message must be.
bool is_one_line(std::string_view text);

}  // namespace rootlock::util
