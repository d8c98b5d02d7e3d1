// Core metadata parsing: header lines, continuation lines and the checks on Name and Version;
// the body after the first blank line is never read.
#include "python/metadata.hpp"
#include "util/quote.hpp"

#include <cstddef>

namespace rootlock::python {

namespace {

char ascii_lower(char c) {
    return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

bool equals_ignoring_case(std::string_view a, std::string_view b) {
    if (a.size() != b.size())
        return false;
    for (size_t i = 0; i < a.size(); ++i) {
        if (ascii_lower(a[i]) != ascii_lower(b[i]))
            return false;
    }
    return true;
}

bool is_space(char c) {
    return c == ' ' || c == '\t';
}

std::string_view trim(std::string_view text) {
    while (!text.empty() && is_space(text.front()))
        text.remove_prefix(1);
    while (!text.empty() && is_space(text.back()))
        text.remove_suffix(1);
    return text;
}

// A line shown inside an error message: quoted, and cut short so one bad line cannot flood it.
std::string shown(std::string_view line) {
    constexpr size_t k_max_shown = 60;
    return util::quote_prefix(line, k_max_shown);
}

bool is_alnum(char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

// An RFC 822 field name: printable ASCII other than ':' (space excluded).
bool is_field_char(char c) {
    return c >= '!' && c <= '~' && c != ':';
}

// A header as read, before the known ones are picked out.
struct RawHeader {
    std::string field;
    std::string value;
    size_t line = 0;
};

}  // namespace

std::string normalize_name(std::string_view name) {
    std::string out;
    out.reserve(name.size());
    bool in_separator_run = false;
    for (char c : name) {
        if (c == '-' || c == '_' || c == '.') {
            if (!in_separator_run)
                out.push_back('-');
            in_separator_run = true;
            continue;
        }
        in_separator_run = false;
        out.push_back(ascii_lower(c));
    }
    return out;
}

bool is_valid_project_name(std::string_view name) {
    if (name.empty() || !is_alnum(name.front()) || !is_alnum(name.back()))
        return false;
    for (char c : name) {
        if (!is_alnum(c) && c != '-' && c != '_' && c != '.')
            return false;
    }
    return true;
}

util::Result<Metadata> parse_metadata(std::string_view text, const std::string& name) {
    auto error_at = [&](size_t line, std::string message) {
        return util::make_error(name + ":" + std::to_string(line), std::move(message));
    };

    std::vector<RawHeader> raw;
    size_t line_number = 0;
    size_t pos = 0;
    while (pos < text.size()) {
        ++line_number;
        size_t end = text.find('\n', pos);
        if (end == std::string_view::npos)
            end = text.size();
        std::string_view line = text.substr(pos, end - pos);
        pos = end + 1;
        if (!line.empty() && line.back() == '\r')
            line.remove_suffix(1);
        if (const size_t nul = line.find('\0'); nul != std::string_view::npos) {
            return util::make_error(
                name + ":" + std::to_string(line_number) + ":" + std::to_string(nul + 1),
                "NUL byte");
        }
        if (line.empty())
            break;  // the body starts here
        if (is_space(line.front())) {
            if (raw.empty())
                return error_at(line_number, "continuation line before any header");
            const std::string_view more = trim(line);
            if (!more.empty()) {
                if (!raw.back().value.empty())
                    raw.back().value.push_back(' ');
                raw.back().value.append(more);
            }
            continue;
        }
        const size_t colon = line.find(':');
        if (colon == std::string_view::npos) {
            return error_at(line_number, "expected \"Field: value\", found " + shown(line));
        }
        const std::string_view field = line.substr(0, colon);
        if (field.empty())
            return error_at(line_number, "header without a field name");
        for (char c : field) {
            if (!is_field_char(c)) {
                return error_at(line_number, "invalid header field name " + shown(field));
            }
        }
        raw.push_back(
            RawHeader{std::string(field), std::string(trim(line.substr(colon + 1))), line_number});
    }

    Metadata metadata;
    std::optional<size_t> name_line;
    std::optional<size_t> version_line;
    std::optional<size_t> metadata_version_line;
    std::optional<size_t> requires_python_line;
    // The single-valued headers rootlock relies on: a second copy is an error, not a guess.
    auto take_once = [&](const RawHeader& header, std::string_view field,
                         std::optional<size_t>& seen, std::string& out) -> util::Status {
        if (seen) {
            return error_at(header.line, "duplicate " + std::string(field) +
                                             " header (first on line " + std::to_string(*seen) +
                                             ")");
        }
        seen = header.line;
        out = header.value;
        return util::ok_status();
    };
    for (const RawHeader& header : raw) {
        util::Status status = util::ok_status();
        if (equals_ignoring_case(header.field, "Name")) {
            status = take_once(header, "Name", name_line, metadata.name);
            if (status && metadata.name.empty())
                return error_at(header.line, "empty Name header");
            if (status && !is_valid_project_name(metadata.name)) {
                return error_at(header.line, "invalid project name " + shown(metadata.name));
            }
        } else if (equals_ignoring_case(header.field, "Version")) {
            status = take_once(header, "Version", version_line, metadata.version);
            if (status && metadata.version.empty()) {
                return error_at(header.line, "empty Version header");
            }
        } else if (equals_ignoring_case(header.field, "Metadata-Version")) {
            status = take_once(header, "Metadata-Version", metadata_version_line,
                               metadata.metadata_version);
        } else if (equals_ignoring_case(header.field, "Requires-Python")) {
            std::string value;
            status = take_once(header, "Requires-Python", requires_python_line, value);
            metadata.requires_python = std::move(value);
        } else if (equals_ignoring_case(header.field, "Requires-Dist")) {
            metadata.requires_dist.push_back(header.value);
        }
        if (!status)
            return status.error();
        metadata.headers.emplace_back(header.field, header.value);
    }
    if (!name_line)
        return util::make_error(name, "missing Name header");
    if (!version_line)
        return util::make_error(name, "missing Version header");
    return metadata;
}

}  // namespace rootlock::python
