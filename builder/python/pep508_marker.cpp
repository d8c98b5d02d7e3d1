// PEP 508 environment markers: the parser (a tree of and/or over comparisons, parentheses kept as
// packaging keeps them), packaging's string form, and evaluation against a declared target.
#include <array>
#include <utility>

#include "python/metadata.hpp"
#include "python/pep508.hpp"
#include "util/quote.hpp"

namespace rootlock::python {

namespace {

bool is_blank(char c) {
    return c == ' ' || c == '\t';
}

bool is_word(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '.';
}

struct VariableName {
    std::string_view text;
    MarkerVariable variable;
};

constexpr std::array<VariableName, 18> k_variables = {{
    {"python_version", MarkerVariable::python_version},
    {"python_full_version", MarkerVariable::python_full_version},
    {"os_name", MarkerVariable::os_name},
    {"os.name", MarkerVariable::os_name},
    {"sys_platform", MarkerVariable::sys_platform},
    {"sys.platform", MarkerVariable::sys_platform},
    {"platform_release", MarkerVariable::platform_release},
    {"platform_system", MarkerVariable::platform_system},
    {"platform_version", MarkerVariable::platform_version},
    {"platform.version", MarkerVariable::platform_version},
    {"platform_machine", MarkerVariable::platform_machine},
    {"platform.machine", MarkerVariable::platform_machine},
    {"platform_python_implementation", MarkerVariable::platform_python_implementation},
    {"platform.python_implementation", MarkerVariable::platform_python_implementation},
    {"python_implementation", MarkerVariable::platform_python_implementation},
    {"implementation_name", MarkerVariable::implementation_name},
    {"implementation_version", MarkerVariable::implementation_version},
    {"extra", MarkerVariable::extra},
}};

// One side of a comparison.
struct Operand {
    bool is_variable = false;
    MarkerVariable variable = MarkerVariable::python_version;
    std::string literal;
};

// A recursive-descent parser over whole[begin, end).
class Parser {
  public:
    Parser(std::string_view whole, size_t begin, size_t end)
        : m_whole(whole), m_pos(begin), m_end(end) {}

    util::Result<Marker> parse_all() {
        skip_blank();
        if (m_pos >= m_end)
            return error_at(m_pos, "expected a marker");
        auto marker = parse_expression();
        if (!marker.ok())
            return marker;
        skip_blank();
        if (m_pos < m_end)
            return error_at(m_pos, "expected 'and', 'or' or the end of the marker");
        return marker;
    }

  private:
    util::Error error_at(size_t offset, std::string message) const {
        return util::make_error(detail::located(m_whole, offset), std::move(message));
    }

    void skip_blank() {
        while (m_pos < m_end && is_blank(m_whole[m_pos]))
            ++m_pos;
    }

    // The identifier-like word at m_pos (letters, digits, '_', '.'), possibly empty.
    std::string_view word_at(size_t pos) const {
        size_t stop = pos;
        while (stop < m_end && is_word(m_whole[stop]))
            ++stop;
        return m_whole.substr(pos, stop - pos);
    }

    bool keyword(std::string_view word) {
        if (word_at(m_pos) != word)
            return false;
        m_pos += word.size();
        return true;
    }

    util::Result<Marker> parse_expression() {
        Marker out;
        while (true) {
            skip_blank();
            auto term = parse_term();
            if (!term.ok())
                return term.error();
            out.terms.push_back(std::move(term.value()));
            skip_blank();
            if (keyword("and"))
                out.joins.push_back(MarkerJoin::and_);
            else if (keyword("or"))
                out.joins.push_back(MarkerJoin::or_);
            else
                return out;
        }
    }

    util::Result<MarkerTerm> parse_term() {
        MarkerTerm term;
        if (m_pos < m_end && m_whole[m_pos] == '(') {
            if (m_depth == k_max_depth)
                return error_at(m_pos, "parentheses nested deeper than " +
                                           std::to_string(k_max_depth) + " levels");
            const size_t open = m_pos++;
            ++m_depth;
            auto inner = parse_expression();
            --m_depth;
            if (!inner.ok())
                return inner.error();
            skip_blank();
            if (m_pos >= m_end || m_whole[m_pos] != ')')
                return error_at(
                    m_pos, "expected ')' to close the '(' at column " + std::to_string(open + 1));
            ++m_pos;
            term.group.push_back(std::move(inner.value()));
            return term;
        }
        const size_t left_at = m_pos;
        auto left = parse_operand();
        if (!left.ok())
            return left.error();
        skip_blank();
        auto op = parse_op();
        if (!op.ok())
            return op.error();
        skip_blank();
        const size_t right_at = m_pos;
        auto right = parse_operand();
        if (!right.ok())
            return right.error();
        if (!left->is_variable && !right->is_variable)
            return error_at(left_at, "a comparison needs a marker variable on one side");
        if (left->is_variable && right->is_variable)
            return error_at(right_at, "a comparison needs a quoted string on one side");
        MarkerComparison comparison;
        comparison.op = *op;
        comparison.variable_on_left = left->is_variable;
        comparison.variable = left->is_variable ? left->variable : right->variable;
        comparison.literal = left->is_variable ? right->literal : left->literal;
        if (comparison.variable == MarkerVariable::extra)
            comparison.literal = normalize_name(comparison.literal);  // PEP 685
        term.comparison = std::move(comparison);
        return term;
    }

    util::Result<Operand> parse_operand() {
        Operand out;
        if (m_pos >= m_end)
            return error_at(m_pos, "expected a marker variable or a quoted string");
        const char c = m_whole[m_pos];
        if (c == '"' || c == '\'') {
            const size_t close = m_whole.find(c, m_pos + 1);
            if (close == std::string_view::npos || close >= m_end)
                return error_at(m_pos, std::string("unterminated string, expected a closing ") +
                                           (c == '"' ? "'\"'" : "\"'\""));
            out.literal = std::string(m_whole.substr(m_pos + 1, close - m_pos - 1));
            m_pos = close + 1;
            return out;
        }
        const std::string_view word = word_at(m_pos);
        if (word.empty())
            return error_at(m_pos, "expected a marker variable or a quoted string");
        for (const VariableName& known : k_variables) {
            if (known.text == word) {
                out.is_variable = true;
                out.variable = known.variable;
                m_pos += word.size();
                return out;
            }
        }
        return error_at(m_pos, "unknown marker variable '" + util::printable(word) + "'");
    }

    util::Result<MarkerOp> parse_op() {
        if (m_pos >= m_end)
            return error_at(m_pos, "expected a comparison operator");
        if (keyword("in"))
            return MarkerOp::in;
        if (keyword("not")) {
            skip_blank();
            if (!keyword("in"))
                return error_at(m_pos, "expected 'in' after 'not'");
            return MarkerOp::not_in;
        }
        static constexpr std::array<std::pair<std::string_view, MarkerOp>, 8> k_ops = {{
            {"===", MarkerOp::arbitrary},
            {"==", MarkerOp::equal},
            {"~=", MarkerOp::compatible},
            {"!=", MarkerOp::not_equal},
            {"<=", MarkerOp::less_equal},
            {">=", MarkerOp::greater_equal},
            {"<", MarkerOp::less},
            {">", MarkerOp::greater},
        }};
        const std::string_view rest = m_whole.substr(m_pos, m_end - m_pos);
        for (const auto& [text, op] : k_ops) {
            if (rest.substr(0, text.size()) == text) {
                m_pos += text.size();
                return op;
            }
        }
        return error_at(m_pos, "expected a comparison operator");
    }

    static constexpr size_t k_max_depth = 64;  // bounds the recursion on hostile METADATA

    std::string_view m_whole;
    size_t m_pos;
    size_t m_end;
    size_t m_depth = 0;
};

// packaging's _format_marker: a lone parenthesised term or a lone comparison is not wrapped.
std::string format_marker(const Marker& marker, bool first);

std::string format_comparison(const MarkerComparison& comparison) {
    const std::string variable(to_string(comparison.variable));
    // Double quotes as packaging writes them, unless the string holds one: markers have no
    // escapes, so 'a"b' must keep its single quotes to parse again.
    const char quote = comparison.literal.find('"') == std::string::npos ? '"' : '\'';
    const std::string literal = quote + comparison.literal + quote;
    const std::string op(to_string(comparison.op));
    return comparison.variable_on_left ? variable + " " + op + " " + literal
                                       : literal + " " + op + " " + variable;
}

std::string format_term(const MarkerTerm& term) {
    if (term.comparison)
        return format_comparison(*term.comparison);
    return format_marker(term.group.front(), false);
}

std::string format_marker(const Marker& marker, bool first) {
    if (marker.terms.size() == 1) {
        const MarkerTerm& only = marker.terms.front();
        if (only.comparison)
            return format_comparison(*only.comparison);
        return format_marker(only.group.front(), true);
    }
    std::string out;
    for (size_t i = 0; i < marker.terms.size(); ++i) {
        if (i > 0)
            out += marker.joins[i - 1] == MarkerJoin::and_ ? " and " : " or ";
        out += format_term(marker.terms[i]);
    }
    return first ? out : "(" + out + ")";
}

// packaging's _eval_op(lhs, op, rhs).
bool compare(const std::string& lhs, MarkerOp op, const std::string& rhs) {
    if (op == MarkerOp::in)
        return rhs.find(lhs) != std::string::npos;
    if (op == MarkerOp::not_in)
        return rhs.find(lhs) == std::string::npos;
    if (rhs.find(',') == std::string::npos) {
        auto spec = parse_specifiers(std::string(to_string(op)) + rhs);
        auto version = parse_version(lhs);
        if (spec.ok() && spec->specifiers.size() == 1 && version.ok())
            return spec->contains(*version, true);
    }
    switch (op) {
        case MarkerOp::less:
            return lhs < rhs;
        case MarkerOp::less_equal:
            return lhs <= rhs;
        case MarkerOp::equal:
            return lhs == rhs;
        case MarkerOp::not_equal:
            return lhs != rhs;
        case MarkerOp::greater_equal:
            return lhs >= rhs;
        case MarkerOp::greater:
            return lhs > rhs;
        default:
            return false;  // ~= and === between non-versions: packaging raises
    }
}

bool evaluate_term(const MarkerTerm& term, const MarkerEnvironment& environment,
                   std::string_view extra) {
    if (!term.comparison)
        return evaluate(term.group.front(), environment, extra);
    const MarkerComparison& c = *term.comparison;
    std::string value =
        c.variable == MarkerVariable::extra ? std::string(extra) : environment.value(c.variable);
    std::string literal = c.literal;
    if (c.variable == MarkerVariable::extra) {
        value = normalize_name(value);
        literal = normalize_name(literal);
    }
    return c.variable_on_left ? compare(value, c.op, literal) : compare(literal, c.op, value);
}

}  // namespace

const std::string& MarkerEnvironment::value(MarkerVariable variable) const {
    switch (variable) {
        case MarkerVariable::python_version:
            return python_version;
        case MarkerVariable::python_full_version:
            return python_full_version;
        case MarkerVariable::os_name:
            return os_name;
        case MarkerVariable::sys_platform:
            return sys_platform;
        case MarkerVariable::platform_release:
            return platform_release;
        case MarkerVariable::platform_system:
            return platform_system;
        case MarkerVariable::platform_version:
            return platform_version;
        case MarkerVariable::platform_machine:
            return platform_machine;
        case MarkerVariable::platform_python_implementation:
            return platform_python_implementation;
        case MarkerVariable::implementation_name:
            return implementation_name;
        case MarkerVariable::implementation_version:
        case MarkerVariable::extra:
            break;
    }
    return implementation_version;
}

MarkerEnvironment linux_cpython(int major, int minor, int micro, std::string machine) {
    MarkerEnvironment out;
    const std::string short_version = std::to_string(major) + "." + std::to_string(minor);
    const std::string full_version = short_version + "." + std::to_string(micro);
    out.python_version = short_version;
    out.python_full_version = full_version;
    out.os_name = "posix";
    out.sys_platform = "linux";
    out.platform_system = "Linux";
    out.platform_machine = std::move(machine);
    out.platform_python_implementation = "CPython";
    out.implementation_name = "cpython";
    out.implementation_version = full_version;
    return out;
}

std::string_view to_string(MarkerVariable variable) {
    switch (variable) {
        case MarkerVariable::python_version:
            return "python_version";
        case MarkerVariable::python_full_version:
            return "python_full_version";
        case MarkerVariable::os_name:
            return "os_name";
        case MarkerVariable::sys_platform:
            return "sys_platform";
        case MarkerVariable::platform_release:
            return "platform_release";
        case MarkerVariable::platform_system:
            return "platform_system";
        case MarkerVariable::platform_version:
            return "platform_version";
        case MarkerVariable::platform_machine:
            return "platform_machine";
        case MarkerVariable::platform_python_implementation:
            return "platform_python_implementation";
        case MarkerVariable::implementation_name:
            return "implementation_name";
        case MarkerVariable::implementation_version:
            return "implementation_version";
        case MarkerVariable::extra:
            break;
    }
    return "extra";
}

std::string_view to_string(MarkerOp op) {
    switch (op) {
        case MarkerOp::less:
            return "<";
        case MarkerOp::less_equal:
            return "<=";
        case MarkerOp::equal:
            return "==";
        case MarkerOp::not_equal:
            return "!=";
        case MarkerOp::greater_equal:
            return ">=";
        case MarkerOp::greater:
            return ">";
        case MarkerOp::compatible:
            return "~=";
        case MarkerOp::arbitrary:
            return "===";
        case MarkerOp::in:
            return "in";
        case MarkerOp::not_in:
            break;
    }
    return "not in";
}

util::Result<Marker> parse_marker(std::string_view text) {
    return detail::parse_marker_in(text, 0, text.size());
}

std::string to_string(const Marker& marker) {
    return format_marker(marker, true);
}

bool evaluate(const Marker& marker, const MarkerEnvironment& environment, std::string_view extra) {
    // any(all(group) for group split at 'or')
    bool group_true = true;
    for (size_t i = 0; i < marker.terms.size(); ++i) {
        if (i > 0 && marker.joins[i - 1] == MarkerJoin::or_) {
            if (group_true)
                return true;
            group_true = true;
        }
        if (group_true && !evaluate_term(marker.terms[i], environment, extra))
            group_true = false;
    }
    return group_true;
}

namespace detail {

util::Result<Marker> parse_marker_in(std::string_view whole, size_t begin, size_t end) {
    return Parser(whole, begin, end).parse_all();
}

}  // namespace detail

}  // namespace rootlock::python
