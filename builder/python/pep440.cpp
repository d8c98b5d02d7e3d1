// PEP 440 versions: a hand-written scanner equivalent to packaging's VERSION_PATTERN (greedy where
// the regex is, so it accepts exactly the same texts), the normalised text and the total order.
#include "python/pep440.hpp"
#include "util/quote.hpp"

#include <algorithm>
#include <limits>

namespace rootlock::python {

namespace {

char ascii_lower(char c) {
    return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

bool is_alnum(char c) {
    return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

bool is_separator(char c) {
    return c == '-' || c == '_' || c == '.';
}

// Python's \s over ASCII.
bool is_space(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

std::string shown_char(char c) {
    static const char* const k_hex = "0123456789abcdef";
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte >= 0x7f)
        return std::string("\\x") + k_hex[byte >> 4] + k_hex[byte & 0xf];
    return std::string(1, c);
}

// The scanner: a cursor over whole[begin, end) that reports errors located in `whole`.
class Scanner {
  public:
    Scanner(std::string_view whole, size_t begin, size_t end)
        : m_whole(whole), m_pos(begin), m_end(end) {}

    size_t pos() const { return m_pos; }
    void reset(size_t pos) { m_pos = pos; }
    bool at_end() const { return m_pos >= m_end; }
    char peek(size_t ahead = 0) const {
        return m_pos + ahead < m_end ? m_whole[m_pos + ahead] : '\0';
    }
    void skip_space() {
        while (!at_end() && is_space(peek()))
            ++m_pos;
    }
    bool take_separator() {
        if (!at_end() && is_separator(peek())) {
            ++m_pos;
            return true;
        }
        return false;
    }
    // Case-insensitive keyword match at the cursor; consumes it on success.
    bool take_word(std::string_view word) {
        if (m_end - m_pos < word.size())
            return false;
        for (size_t i = 0; i < word.size(); ++i) {
            if (ascii_lower(m_whole[m_pos + i]) != word[i])
                return false;
        }
        m_pos += word.size();
        return true;
    }
    util::Error error_at(size_t offset, std::string message) const {
        return util::make_error(detail::located(m_whole, offset), std::move(message));
    }
    // Digits at the cursor (at least one present); error when they overflow 64 bits.
    util::Result<uint64_t> take_number() {
        const size_t start = m_pos;
        uint64_t value = 0;
        while (!at_end() && is_digit(peek())) {
            const auto digit = static_cast<uint64_t>(peek() - '0');
            if (value > (std::numeric_limits<uint64_t>::max() - digit) / 10)
                return error_at(start, "number is too large");
            value = value * 10 + digit;
            ++m_pos;
        }
        return value;
    }
    std::string_view slice(size_t from, size_t to) const { return m_whole.substr(from, to - from); }

  private:
    std::string_view m_whole;
    size_t m_pos;
    size_t m_end;
};

// `[-_.]?[0-9]*` after a pre, post or dev label; the number defaults to 0.
util::Result<uint64_t> take_implicit_number(Scanner& scan) {
    // A separator with no number after it is still consumed, as the regex does: "1.0a.-1" is
    // 1.0a0.post1.
    scan.take_separator();
    if (!is_digit(scan.peek()))
        return uint64_t{0};
    return scan.take_number();
}

std::optional<PreLabel> take_pre_label(Scanner& scan) {
    if (scan.take_word("preview") || scan.take_word("pre") || scan.take_word("rc") ||
        scan.take_word("c"))
        return PreLabel::rc;
    if (scan.take_word("alpha") || scan.take_word("a"))
        return PreLabel::alpha;
    if (scan.take_word("beta") || scan.take_word("b"))
        return PreLabel::beta;
    return std::nullopt;
}

int compare_local(const std::vector<LocalSegment>& a, const std::vector<LocalSegment>& b) {
    const size_t n = std::min(a.size(), b.size());
    for (size_t i = 0; i < n; ++i) {
        const bool a_num = std::holds_alternative<uint64_t>(a[i]);
        const bool b_num = std::holds_alternative<uint64_t>(b[i]);
        if (a_num != b_num)
            return a_num ? 1 : -1;  // numbers sort above strings
        if (a_num) {
            const uint64_t x = std::get<uint64_t>(a[i]);
            const uint64_t y = std::get<uint64_t>(b[i]);
            if (x != y)
                return x < y ? -1 : 1;
        } else {
            const int c = std::get<std::string>(a[i]).compare(std::get<std::string>(b[i]));
            if (c != 0)
                return c < 0 ? -1 : 1;
        }
    }
    if (a.size() == b.size())
        return 0;
    return a.size() < b.size() ? -1 : 1;
}

template <class T>
int three_way(const T& a, const T& b) {
    return a < b ? -1 : (b < a ? 1 : 0);
}

// packaging's _cmpkey, field by field; -1, 0 or 1.
int compare_versions(const Version& a, const Version& b) {
    if (int c = three_way(a.epoch, b.epoch); c != 0)
        return c;
    // Release, trailing zeros ignored: compare as if both were padded with zeros.
    const size_t n = std::max(a.release.size(), b.release.size());
    for (size_t i = 0; i < n; ++i) {
        const uint64_t x = i < a.release.size() ? a.release[i] : 0;
        const uint64_t y = i < b.release.size() ? b.release[i] : 0;
        if (int c = three_way(x, y); c != 0)
            return c;
    }
    // Pre: a dev-only release sorts before every pre-release; a final after all of them.
    auto pre_rank = [](const Version& v) {
        if (!v.pre && !v.post && v.dev)
            return 0;
        return v.pre ? 1 : 2;
    };
    if (int c = three_way(pre_rank(a), pre_rank(b)); c != 0)
        return c;
    if (a.pre && b.pre) {
        if (int c = three_way(static_cast<int>(a.pre->label), static_cast<int>(b.pre->label));
            c != 0)
            return c;
        if (int c = three_way(a.pre->number, b.pre->number); c != 0)
            return c;
    }
    // Post: none sorts first.
    if (int c = three_way(a.post.has_value(), b.post.has_value()); c != 0)
        return c;
    if (a.post && b.post) {
        if (int c = three_way(*a.post, *b.post); c != 0)
            return c;
    }
    // Dev: none sorts last.
    if (int c = three_way(!a.dev.has_value(), !b.dev.has_value()); c != 0)
        return c;
    if (a.dev && b.dev) {
        if (int c = three_way(*a.dev, *b.dev); c != 0)
            return c;
    }
    return compare_local(a.local, b.local);
}

}  // namespace

namespace detail {

std::string located(std::string_view text, size_t offset) {
    constexpr size_t k_max_shown = 60;
    return util::quote_prefix(text, k_max_shown) + ":" + std::to_string(offset + 1);
}

util::Result<Version> parse_version_in(std::string_view whole, size_t begin, size_t end) {
    Scanner scan(whole, begin, end);
    Version out;
    scan.skip_space();
    if (scan.at_end())
        return scan.error_at(scan.pos(), "expected a version");
    if (scan.peek() == 'v' || scan.peek() == 'V')
        scan.reset(scan.pos() + 1);
    if (!is_digit(scan.peek()))
        return scan.error_at(scan.pos(), "expected a release number");
    ROOTLOCK_TRY(first, scan.take_number());
    if (scan.peek() == '!') {
        out.epoch = first;
        scan.reset(scan.pos() + 1);
        if (!is_digit(scan.peek()))
            return scan.error_at(scan.pos(), "expected a release number after '!'");
        ROOTLOCK_TRY(number, scan.take_number());
        out.release.push_back(number);
    } else {
        out.release.push_back(first);
    }
    while (scan.peek() == '.' && is_digit(scan.peek(1))) {
        scan.reset(scan.pos() + 1);
        ROOTLOCK_TRY(number, scan.take_number());
        out.release.push_back(number);
    }
    // Pre-release: [-_.]? label [-_.]? number?
    {
        const size_t mark = scan.pos();
        scan.take_separator();
        if (auto label = take_pre_label(scan)) {
            ROOTLOCK_TRY(number, take_implicit_number(scan));
            out.pre = PreRelease{*label, number};
        } else {
            scan.reset(mark);
        }
    }
    // Post-release: -N, or [-_.]? (post|rev|r) [-_.]? number?
    {
        const size_t mark = scan.pos();
        if (scan.peek() == '-' && is_digit(scan.peek(1))) {
            scan.reset(scan.pos() + 1);
            ROOTLOCK_TRY(number, scan.take_number());
            out.post = number;
        } else {
            scan.take_separator();
            if (scan.take_word("post") || scan.take_word("rev") || scan.take_word("r")) {
                ROOTLOCK_TRY(number, take_implicit_number(scan));
                out.post = number;
            } else {
                scan.reset(mark);
            }
        }
    }
    // Dev release: [-_.]? dev [-_.]? number?
    {
        const size_t mark = scan.pos();
        scan.take_separator();
        if (scan.take_word("dev")) {
            ROOTLOCK_TRY(number, take_implicit_number(scan));
            out.dev = number;
        } else {
            scan.reset(mark);
        }
    }
    // Local version: + segment ([-_.] segment)*
    if (scan.peek() == '+') {
        for (;;) {
            const char sep = scan.peek();
            scan.reset(scan.pos() + 1);
            const size_t start = scan.pos();
            while (!scan.at_end() && is_alnum(scan.peek()))
                scan.reset(scan.pos() + 1);
            if (scan.pos() == start) {
                return scan.error_at(
                    start, "expected a local version segment after '" + shown_char(sep) + "'");
            }
            const std::string_view segment = scan.slice(start, scan.pos());
            if (std::all_of(segment.begin(), segment.end(), is_digit)) {
                Scanner digits(segment, 0, segment.size());
                auto number = digits.take_number();
                if (!number.ok())
                    return scan.error_at(start, "number is too large");
                out.local.emplace_back(*number);
            } else {
                std::string lowered;
                for (char c : segment)
                    lowered.push_back(ascii_lower(c));
                out.local.emplace_back(std::move(lowered));
            }
            if (!is_separator(scan.peek()))
                break;
        }
    }
    const size_t stop = scan.pos();
    scan.skip_space();
    if (!scan.at_end()) {
        if (scan.pos() != stop)
            return scan.error_at(stop, "unexpected whitespace inside a version");
        const char c = scan.peek();
        scan.reset(scan.pos() + 1);
        scan.skip_space();
        if (is_separator(c) && scan.at_end())
            return scan.error_at(stop, "a version cannot end with '" + shown_char(c) + "'");
        return scan.error_at(stop, "unexpected character '" + shown_char(c) + "'");
    }
    return out;
}

}  // namespace detail

util::Result<Version> parse_version(std::string_view text) {
    return detail::parse_version_in(text, 0, text.size());
}

Version Version::public_version() const {
    Version out = *this;
    out.local.clear();
    return out;
}

Version Version::base_version() const {
    Version out;
    out.epoch = epoch;
    out.release = release;
    return out;
}

std::strong_ordering operator<=>(const Version& a, const Version& b) {
    const int c = compare_versions(a, b);
    return c < 0 ? std::strong_ordering::less
                 : (c > 0 ? std::strong_ordering::greater : std::strong_ordering::equal);
}

bool operator==(const Version& a, const Version& b) {
    return compare_versions(a, b) == 0;
}

std::string to_string(const Version& version) {
    std::string out;
    if (version.epoch != 0)
        out += std::to_string(version.epoch) + "!";
    for (size_t i = 0; i < version.release.size(); ++i) {
        if (i != 0)
            out += '.';
        out += std::to_string(version.release[i]);
    }
    if (version.pre) {
        static const char* const k_labels[] = {"a", "b", "rc"};
        out += k_labels[static_cast<size_t>(version.pre->label)];
        out += std::to_string(version.pre->number);
    }
    if (version.post)
        out += ".post" + std::to_string(*version.post);
    if (version.dev)
        out += ".dev" + std::to_string(*version.dev);
    for (size_t i = 0; i < version.local.size(); ++i) {
        out += i == 0 ? '+' : '.';
        if (const auto* number = std::get_if<uint64_t>(&version.local[i]))
            out += std::to_string(*number);
        else
            out += std::get<std::string>(version.local[i]);
    }
    return out;
}

}  // namespace rootlock::python
