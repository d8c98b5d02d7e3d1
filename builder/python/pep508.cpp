// PEP 508 requirements: name, extras, a bare or parenthesised version specifier or a direct URL,
// and a marker, parsed the way packaging (22 and later) parses them, errors located by column.
#include "python/pep508.hpp"

#include <algorithm>
#include <cstdlib>
#include <utility>

#include "python/metadata.hpp"

namespace rootlock::python {

namespace {

bool is_blank(char c) {
    return c == ' ' || c == '\t';
}

bool is_alnum(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

bool is_name_char(char c) {
    return is_alnum(c) || c == '-' || c == '_' || c == '.';
}

class Parser {
  public:
    explicit Parser(std::string_view text) : m_text(text) {}

    util::Result<Requirement> parse() {
        Requirement out;
        skip_blank();
        auto name = identifier("expected a project name");
        if (!name.ok())
            return name.error();
        out.name = std::string(*name);
        out.normalized_name = normalize_name(out.name);
        skip_blank();
        if (peek() == '[') {
            auto extras = parse_extras();
            if (!extras.ok())
                return extras.error();
            out.extras = std::move(*extras);
            skip_blank();
        }
        if (peek() == '@') {
            ++m_pos;
            skip_blank();
            const size_t start = m_pos;
            while (m_pos < m_text.size() && !is_blank(m_text[m_pos]))
                ++m_pos;
            if (m_pos == start)
                return error_at(m_pos, "expected a URL after '@'");
            out.url = std::string(m_text.substr(start, m_pos - start));
            const size_t url_end = m_pos;
            skip_blank();
            if (at_end())
                return out;
            if (peek() != ';' || m_pos == url_end)
                return error_at(m_pos, "expected ';' or the end after the URL");
        } else if (peek() == '(') {
            const size_t open = m_pos++;
            const size_t close = m_text.find(')', m_pos);
            if (close == std::string_view::npos)
                return error_at(m_text.size(), "expected ')' to close the '(' at column " +
                                                   std::to_string(open + 1));
            auto specifiers = specifiers_in(m_pos, close);
            if (!specifiers.ok())
                return specifiers.error();
            out.specifiers = std::move(*specifiers);
            m_pos = close + 1;
            skip_blank();
        } else if (!at_end() && peek() != ';') {
            const char c = peek();
            if (c != '<' && c != '>' && c != '=' && c != '!' && c != '~')
                return error_at(m_pos,
                                "expected '[', a version specifier, '@', ';' or the end after the "
                                "project name");
            const size_t stop = std::min(m_text.find(';', m_pos), m_text.size());
            auto specifiers = specifiers_in(m_pos, stop);
            if (!specifiers.ok())
                return specifiers.error();
            out.specifiers = std::move(*specifiers);
            m_pos = stop;
        }
        if (at_end())
            return out;
        if (peek() != ';')
            return error_at(m_pos, "expected ';' or the end after the version specifier");
        ++m_pos;
        skip_blank();
        if (at_end())
            return error_at(m_pos, "expected a marker after ';'");
        auto marker = detail::parse_marker_in(m_text, m_pos, m_text.size());
        if (!marker.ok())
            return marker.error();
        out.marker = std::move(*marker);
        return out;
    }

  private:
    util::Error error_at(size_t offset, std::string message) const {
        return util::make_error(detail::located(m_text, offset), std::move(message));
    }

    bool at_end() const { return m_pos >= m_text.size(); }
    char peek() const { return at_end() ? '\0' : m_text[m_pos]; }

    void skip_blank() {
        while (!at_end() && is_blank(m_text[m_pos]))
            ++m_pos;
    }

    // A name or an extra: an ASCII letter or digit, then letters, digits, '-', '_', '.', ending
    // on a letter or digit (a trailing separator is left for the caller to reject).
    util::Result<std::string_view> identifier(const char* what) {
        if (at_end() || !is_alnum(m_text[m_pos]))
            return error_at(m_pos, what);
        size_t stop = m_pos;
        while (stop < m_text.size() && is_name_char(m_text[stop]))
            ++stop;
        while (!is_alnum(m_text[stop - 1]))
            --stop;
        const std::string_view out = m_text.substr(m_pos, stop - m_pos);
        m_pos = stop;
        return out;
    }

    util::Result<std::vector<std::string>> parse_extras() {
        ++m_pos;  // '['
        std::vector<std::string> out;
        skip_blank();
        if (peek() == ']') {
            ++m_pos;
            return out;
        }
        while (true) {
            skip_blank();
            auto extra = identifier("expected an extra name");
            if (!extra.ok())
                return extra.error();
            out.push_back(normalize_name(*extra));
            skip_blank();
            if (peek() == ']') {
                ++m_pos;
                break;
            }
            if (peek() != ',')
                return error_at(m_pos, "expected ',' or ']' after an extra");
            ++m_pos;
        }
        std::sort(out.begin(), out.end());
        out.erase(std::unique(out.begin(), out.end()), out.end());
        return out;
    }

    // parse_specifiers over m_text[begin, end), its error re-located in the whole requirement.
    util::Result<SpecifierSet> specifiers_in(size_t begin, size_t end) const {
        const std::string_view part = m_text.substr(begin, end - begin);
        auto parsed = parse_specifiers(part);
        if (parsed.ok())
            return parsed;
        const std::string& where = parsed.error().where;
        const size_t colon = where.rfind(':');
        const long column = colon == std::string::npos ? 1 : std::atol(where.c_str() + colon + 1);
        const size_t offset = begin + static_cast<size_t>(column > 0 ? column - 1 : 0);
        return error_at(offset, parsed.error().message);
    }

    std::string_view m_text;
    size_t m_pos = 0;
};

}  // namespace

util::Result<Requirement> parse_requirement(std::string_view text) {
    return Parser(text).parse();
}

std::string to_string(const Requirement& requirement) {
    std::string out = requirement.name;
    if (!requirement.extras.empty()) {
        out += "[";
        for (size_t i = 0; i < requirement.extras.size(); ++i)
            out += (i > 0 ? "," : "") + requirement.extras[i];
        out += "]";
    }
    out += to_string(requirement.specifiers);
    if (requirement.url) {
        out += "@ " + *requirement.url;
        if (requirement.marker)
            out += " ";
    }
    if (requirement.marker)
        out += "; " + to_string(*requirement.marker);
    return out;
}

bool applies(const Requirement& requirement, const MarkerEnvironment& environment,
             std::string_view extra) {
    return !requirement.marker || evaluate(*requirement.marker, environment, extra);
}

}  // namespace rootlock::python
