// deb822 control syntax (Release, Packages, dpkg's status): paragraphs of fields with
// continuation lines, read line by line with every malformed line reported as FILE:LINE.
#include "debian/deb822.hpp"

#include <unordered_set>
#include <utility>

#include "debian/text_checks.hpp"

namespace rootlock::debian {

namespace {

constexpr size_t k_max_line = size_t{1} << 20;

std::string lowercase(std::string_view text) {
    std::string out(text);
    for (char& c : out) {
        if (c >= 'A' && c <= 'Z')
            c = static_cast<char>(c - 'A' + 'a');
    }
    return out;
}

// Policy 5.1: printable US-ASCII other than ':', not starting with '-' ('#' is a comment).
bool is_field_name(std::string_view name) {
    if (name.front() == '-')
        return false;
    for (char c : name) {
        if (c < '!' || c > '~')
            return false;
    }
    return true;
}

class Reader {
  public:
    Reader(std::string_view text, const std::string& file_name)
        : m_text(text), m_file_name(file_name) {}

    util::Result<std::vector<Paragraph>> run() {
        while (m_pos < m_text.size()) {
            size_t end = m_text.find('\n', m_pos);
            if (end == std::string_view::npos)
                end = m_text.size();
            if (m_line == UINT32_MAX)
                return error("more lines than can be counted");
            ++m_line;
            if (end - m_pos > k_max_line)
                return error("a line longer than 1 MiB");
            const std::string_view line = m_text.substr(m_pos, end - m_pos);
            m_pos = end + 1;
            auto status = read_line(line);
            if (!status)
                return status.error();
        }
        finish_paragraph();
        return std::move(m_paragraphs);
    }

  private:
    util::Error error(std::string message) const {
        return util::make_error(m_file_name + ":" + std::to_string(m_line), std::move(message));
    }

    util::Status read_line(std::string_view line) {
        if (line.find('\0') != std::string_view::npos)
            return error("a NUL byte");
        if (line.find('\r') != std::string_view::npos)
            return error("a carriage return");
        if (!line.empty() && line.front() == '#')
            return util::ok_status();
        if (trim_blanks(line).empty()) {
            finish_paragraph();
            return util::ok_status();
        }
        if (is_blank(line.front())) {
            if (!m_in_paragraph)
                return error("a continuation line before any field");
            // Blank-only lines ended the paragraph above, so `rest` holds some text.
            std::string_view rest = line.substr(1);
            while (!rest.empty() && is_blank(rest.back()))
                rest.remove_suffix(1);
            if (rest == ".")
                rest = std::string_view();
            std::string& value = m_paragraph.fields.back().value;
            value.push_back('\n');
            value += rest;
            return util::ok_status();
        }
        const size_t colon = line.find(':');
        if (colon == std::string_view::npos)
            return error("a line without ':'");
        const std::string_view name = line.substr(0, colon);
        if (name.empty())
            return error("an empty field name");
        if (!is_field_name(name))
            return error("an invalid field name " + util::quote(name));
        if (!m_in_paragraph) {
            m_in_paragraph = true;
            m_paragraph.line = m_line;
        }
        if (!m_names.insert(lowercase(name)).second)
            return error(util::quote(name) + " appears twice in one paragraph");
        m_paragraph.fields.push_back(
            Field{std::string(name), std::string(trim_blanks(line.substr(colon + 1))), m_line});
        return util::ok_status();
    }

    void finish_paragraph() {
        if (!m_in_paragraph)
            return;
        m_paragraphs.push_back(std::move(m_paragraph));
        m_paragraph = Paragraph{};
        m_names.clear();
        m_in_paragraph = false;
    }

    std::string_view m_text;
    const std::string& m_file_name;
    size_t m_pos = 0;
    uint32_t m_line = 0;
    bool m_in_paragraph = false;
    Paragraph m_paragraph;
    std::unordered_set<std::string> m_names;
    std::vector<Paragraph> m_paragraphs;
};

}  // namespace

const std::string* Paragraph::get(std::string_view name) const {
    for (const Field& field : fields) {
        if (iequals(field.name, name))
            return &field.value;
    }
    return nullptr;
}

util::Result<std::vector<Paragraph>> parse_deb822(std::string_view text,
                                                  const std::string& file_name) {
    return Reader(text, file_name).run();
}

}  // namespace rootlock::debian
