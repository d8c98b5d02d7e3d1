// RECORD parsing: a small CSV reader with exact positions for errors, then the checks on each
// row's path, hash and size that the wheel spec asks of an installed distribution.
#include "python/record.hpp"
#include "util/quote.hpp"

#include <algorithm>
#include <charconv>
#include <utility>

namespace rootlock::python {

namespace {

// One CSV row as read: its fields and the line it started on (a quoted field may span lines).
struct CsvRow {
    std::vector<std::string> fields;
    size_t line = 0;
};

// Reads rows the way Python's csv module writes them. Anything csv.writer never produces (a
// quote inside an unquoted field, text after a closing quote, a bare carriage return) is an
// error rather than guessed at, since a RECORD is written by tools, never by hand.
class CsvReader {
  public:
    CsvReader(std::string_view text, const std::string& name) : m_text(text), m_name(name) {}

    bool at_end() const { return m_pos >= m_text.size(); }

    util::Result<CsvRow> read_row() {
        CsvRow row;
        row.line = m_line;
        if (at_line_end()) {
            return error_at_line("empty line");
        }
        while (true) {
            std::string field;
            // A row may end in a comma right at the end of the text: csv reads an empty field.
            if (!at_end() && m_text[m_pos] == '"') {
                auto status = read_quoted(field);
                if (!status)
                    return status.error();
            } else {
                auto status = read_unquoted(field);
                if (!status)
                    return status.error();
            }
            row.fields.push_back(std::move(field));
            if (at_end())
                break;
            if (m_text[m_pos] == ',') {
                ++m_pos;
                continue;
            }
            // read_* stop only at a comma, the end, or a line end they have validated.
            skip_line_end();
            break;
        }
        return row;
    }

    util::Error error_at_line(std::string message) const {
        return util::make_error(m_name + ":" + std::to_string(m_line), std::move(message));
    }

  private:
    bool at_line_end() const {
        if (at_end())
            return false;
        if (m_text[m_pos] == '\n')
            return true;
        return m_text[m_pos] == '\r' && m_pos + 1 < m_text.size() && m_text[m_pos + 1] == '\n';
    }

    void skip_line_end() {
        if (m_text[m_pos] == '\r')
            ++m_pos;
        ++m_pos;  // the '\n'
        new_line();
    }

    void new_line() {
        ++m_line;
        m_line_start = m_pos;
    }

    size_t column(size_t pos) const { return pos - m_line_start + 1; }

    util::Error error_at(size_t line, size_t col, std::string message) const {
        return util::make_error(m_name + ":" + std::to_string(line) + ":" + std::to_string(col),
                                std::move(message));
    }

    util::Status read_unquoted(std::string& field) {
        while (!at_end()) {
            char c = m_text[m_pos];
            if (c == ',' || at_line_end())
                return util::ok_status();
            if (c == '\0')
                return error_at(m_line, column(m_pos), "NUL byte");
            if (c == '"')
                return error_at(m_line, column(m_pos), "quote inside an unquoted field");
            if (c == '\r')
                return error_at(m_line, column(m_pos), "carriage return inside a field");
            field.push_back(c);
            ++m_pos;
        }
        return util::ok_status();
    }

    util::Status read_quoted(std::string& field) {
        const size_t open_line = m_line;
        const size_t open_col = column(m_pos);
        ++m_pos;  // the opening quote
        while (true) {
            if (at_end())
                return error_at(open_line, open_col, "unterminated quoted field");
            char c = m_text[m_pos];
            if (c == '\0')
                return error_at(m_line, column(m_pos), "NUL byte");
            if (c == '"') {
                if (m_pos + 1 < m_text.size() && m_text[m_pos + 1] == '"') {
                    field.push_back('"');
                    m_pos += 2;
                    continue;
                }
                ++m_pos;  // the closing quote
                if (at_end() || m_text[m_pos] == ',' || at_line_end())
                    return util::ok_status();
                return error_at(m_line, column(m_pos), "unexpected character after closing quote");
            }
            field.push_back(c);
            ++m_pos;
            if (c == '\n')
                new_line();
        }
    }

    std::string_view m_text;
    const std::string& m_name;
    size_t m_pos = 0;
    size_t m_line = 1;
    size_t m_line_start = 0;
};

bool is_base64url(char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_';
}

bool is_hex(char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

std::string quoted(std::string_view text) {
    return util::quote(text);
}

// Checks one row's columns and turns them into an entry; errors name the row's first line.
util::Result<RecordEntry> make_entry(CsvRow row, const std::string& name) {
    auto error = [&](std::string message) {
        return util::make_error(name + ":" + std::to_string(row.line), std::move(message));
    };
    if (row.fields.size() != 3) {
        return error("expected 3 fields, found " + std::to_string(row.fields.size()));
    }
    RecordEntry entry;
    entry.path = std::move(row.fields[0]);
    if (entry.path.empty())
        return error("empty path");
    if (entry.path.front() == '/')
        return error("path " + quoted(entry.path) + " is absolute");

    const std::string& hash = row.fields[1];
    if (!hash.empty()) {
        const size_t equals = hash.find('=');
        if (equals == std::string::npos || equals == 0) {
            return error("hash " + quoted(hash) + " is not of the form algorithm=digest");
        }
        entry.hash_algorithm = hash.substr(0, equals);
        entry.hash_value = hash.substr(equals + 1);
        if (entry.hash_algorithm == "md5" || entry.hash_algorithm == "sha1") {
            return error("hash algorithm " + entry.hash_algorithm +
                         " is not allowed (the wheel spec asks for sha256 or stronger)");
        }
        const auto bytes = record_digest_bytes(entry.hash_algorithm);
        if (!bytes)
            return error("unknown hash algorithm " + quoted(entry.hash_algorithm));
        for (char c : entry.hash_value) {
            if (!is_base64url(c)) {
                return error("digest " + quoted(entry.hash_value) +
                             " is not urlsafe base64 without padding");
            }
        }
        const size_t base64_length = (*bytes * 4 + 2) / 3;  // padding dropped
        const size_t hex_length = *bytes * 2;
        entry.hash_is_hex = entry.hash_value.size() == hex_length &&
                            std::all_of(entry.hash_value.begin(), entry.hash_value.end(), is_hex);
        if (entry.hash_value.size() == hex_length && !entry.hash_is_hex) {
            return error(entry.hash_algorithm + " digest has " + std::to_string(hex_length) +
                         " characters but is not lowercase hex");
        }
        if (entry.hash_value.size() != base64_length && !entry.hash_is_hex) {
            return error(entry.hash_algorithm + " digest has " +
                         std::to_string(entry.hash_value.size()) + " characters, expected " +
                         std::to_string(base64_length) + " (base64) or " +
                         std::to_string(hex_length) + " (hex)");
        }
    }

    const std::string& size = row.fields[2];
    if (!size.empty()) {
        for (char c : size) {
            if (c < '0' || c > '9')
                return error("size " + quoted(size) + " is not a decimal number");
        }
        uint64_t value = 0;
        const char* end = size.data() + size.size();
        if (std::from_chars(size.data(), end, value).ec != std::errc()) {
            return error("size " + size + " is too large");
        }
        entry.size = value;
    }
    return entry;
}

}  // namespace

std::optional<size_t> record_digest_bytes(std::string_view algorithm) {
    if (algorithm == "sha256")
        return 32;
    if (algorithm == "sha384")
        return 48;
    if (algorithm == "sha512")
        return 64;
    return std::nullopt;
}

util::Result<std::vector<RecordEntry>> parse_record(std::string_view text,
                                                    const std::string& name) {
    std::vector<RecordEntry> entries;
    CsvReader reader(text, name);
    while (!reader.at_end()) {
        auto row = reader.read_row();
        if (!row)
            return row.error();
        auto entry = make_entry(std::move(row.value()), name);
        if (!entry)
            return entry.error();
        entries.push_back(std::move(entry.value()));
    }
    return entries;
}

}  // namespace rootlock::python
