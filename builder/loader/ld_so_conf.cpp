// ld.so.conf parsing and include globbing over a FileTree, after glibc 2.36's parse_conf,
// parse_conf_include and add_dir_1 (elf/ldconfig.c) and glob(3)/fnmatch(3) in the C locale.
#include "loader/ld_so_conf.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "fs/path_resolve.hpp"

namespace rootlock::loader {

namespace {

// Conf files are a few lines; anything larger is not one.
constexpr uint64_t k_max_conf_size = 1U << 20;

// The C locale's isspace and isblank, whatever the process locale is.
bool is_space(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}
bool is_blank(char c) {
    return c == ' ' || c == '\t';
}

char lower(char c) {
    return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

bool starts_with_nocase(std::string_view text, std::string_view prefix) {
    if (text.size() < prefix.size())
        return false;
    for (size_t i = 0; i < prefix.size(); ++i) {
        if (lower(text[i]) != lower(prefix[i]))
            return false;
    }
    return true;
}

bool in_class(std::string_view name, unsigned char c) {
    auto between = [c](char lo, char hi) { return c >= lo && c <= hi; };
    if (name == "alpha")
        return between('a', 'z') || between('A', 'Z');
    if (name == "digit")
        return between('0', '9');
    if (name == "alnum")
        return between('a', 'z') || between('A', 'Z') || between('0', '9');
    if (name == "upper")
        return between('A', 'Z');
    if (name == "lower")
        return between('a', 'z');
    if (name == "space")
        return is_space(static_cast<char>(c));
    if (name == "blank")
        return is_blank(static_cast<char>(c));
    if (name == "xdigit")
        return between('0', '9') || between('a', 'f') || between('A', 'F');
    if (name == "punct")
        return c > 0x20 && c < 0x7f && !between('0', '9') && !between('a', 'z') &&
               !between('A', 'Z');
    if (name == "print")
        return c >= 0x20 && c < 0x7f;
    if (name == "graph")
        return c > 0x20 && c < 0x7f;
    if (name == "cntrl")
        return c < 0x20 || c == 0x7f;
    return false;
}

// Matches the bracket expression starting at pattern[p] == '[' against `c`. Returns the index
// after the closing ']', or npos when the bracket is not closed (then '[' is an ordinary char).
size_t match_bracket(std::string_view pattern, size_t p, unsigned char c, bool& matched) {
    size_t i = p + 1;
    bool negate = i < pattern.size() && (pattern[i] == '!' || pattern[i] == '^');
    if (negate)
        ++i;
    bool found = false;
    bool first = true;
    while (i < pattern.size()) {
        char pc = pattern[i];
        if (pc == ']' && !first) {
            matched = found != negate;
            return i + 1;
        }
        first = false;
        if (pc == '[' && i + 1 < pattern.size() && pattern[i + 1] == ':') {
            size_t close = pattern.find(":]", i + 2);
            if (close != std::string_view::npos) {
                found = found || in_class(pattern.substr(i + 2, close - i - 2), c);
                i = close + 2;
                continue;
            }
        }
        if (pc == '\\' && i + 1 < pattern.size())
            pc = pattern[++i];
        auto lo = static_cast<unsigned char>(pc);
        ++i;
        if (i + 1 < pattern.size() && pattern[i] == '-' && pattern[i + 1] != ']') {
            char hi_char = pattern[i + 1];
            i += 2;
            if (hi_char == '\\' && i < pattern.size())
                hi_char = pattern[i++];
            auto hi = static_cast<unsigned char>(hi_char);
            found = found || (c >= lo && c <= hi);
        } else {
            found = found || c == lo;
        }
    }
    return std::string_view::npos;
}

// One pattern element (not '*') against one character; `next` is set past the element.
bool match_one(std::string_view pattern, size_t p, char c, size_t& next) {
    char pc = pattern[p];
    if (pc == '?') {
        next = p + 1;
        return true;
    }
    if (pc == '[') {
        bool matched = false;
        size_t end = match_bracket(pattern, p, static_cast<unsigned char>(c), matched);
        if (end != std::string_view::npos) {
            next = end;
            return matched;
        }
    }
    if (pc == '\\' && p + 1 < pattern.size()) {
        next = p + 2;
        return pattern[p + 1] == c;
    }
    next = p + 1;
    return pc == c;
}

bool has_magic(std::string_view pattern) {
    for (size_t i = 0; i < pattern.size(); ++i) {
        if (pattern[i] == '\\') {
            ++i;
        } else if (pattern[i] == '*' || pattern[i] == '?' || pattern[i] == '[') {
            return true;
        }
    }
    return false;
}

std::string unescape(std::string_view pattern) {
    std::string out;
    for (size_t i = 0; i < pattern.size(); ++i) {
        if (pattern[i] == '\\' && i + 1 < pattern.size())
            ++i;
        out += pattern[i];
    }
    return out;
}

std::vector<std::string> split_components(std::string_view path) {
    std::vector<std::string> parts;
    size_t start = 0;
    while (start <= path.size()) {
        size_t slash = path.find('/', start);
        if (slash == std::string_view::npos)
            slash = path.size();
        if (slash > start)
            parts.emplace_back(path.substr(start, slash - start));
        start = slash + 1;
    }
    return parts;
}

class ConfReader {
  public:
    explicit ConfReader(const fs::FileTree& tree) : m_tree(tree) {}

    util::Status read(const std::string& path, const std::string& from);
    ConfResult take() { return std::move(m_result); }

  private:
    util::Status parse_line(std::string_view line, const std::string& file, size_t line_number);
    void add_directory(std::string_view text, const std::string& where);

    const fs::FileTree& m_tree;
    ConfResult m_result;
    std::set<std::string, std::less<>> m_directories;
    // The files being read (canonical path, spelled path): an include of one of them is a cycle.
    std::vector<std::pair<std::string, std::string>> m_stack;
};

util::Status ConfReader::read(const std::string& path, const std::string& from) {
    auto resolved = fs::resolve(m_tree, path);
    if (!resolved)
        return util::ok_status();  // ldconfig skips a missing file silently
    if (resolved->stat.kind != fs::NodeKind::regular) {
        m_result.warnings.push_back(path + ": not a regular file, ignored");
        return util::ok_status();
    }
    for (const auto& open_file : m_stack) {
        if (open_file.first != resolved->path)
            continue;
        std::string chain;
        for (const auto& entry : m_stack)
            chain += entry.second + " -> ";
        return util::make_error(from, "include cycle: " + chain + path);
    }
    if (m_stack.size() >= static_cast<size_t>(k_max_include_depth)) {
        return util::make_error(
            from, fmt::format("includes nested deeper than {} levels", k_max_include_depth));
    }
    auto content = m_tree.read_file(resolved->path, k_max_conf_size);
    if (!content.ok()) {
        m_result.warnings.push_back(
            fmt::format("{}: ignoring configuration file that cannot be read: {}", path,
                        content.error().text()));
        return util::ok_status();
    }
    m_result.files_read.push_back(path);
    m_stack.emplace_back(resolved->path, path);
    std::string_view text = *content;
    size_t line_number = 0;
    while (!text.empty()) {
        size_t newline = text.find('\n');
        std::string_view line = text.substr(0, newline);
        text = newline == std::string_view::npos ? std::string_view() : text.substr(newline + 1);
        auto status = parse_line(line, path, ++line_number);
        if (!status.ok())
            return status;
    }
    m_stack.pop_back();
    return util::ok_status();
}

util::Status ConfReader::parse_line(std::string_view line, const std::string& file,
                                    size_t line_number) {
    std::string where = fmt::format("{}:{}", file, line_number);
    // getline's buffer is a C string to ldconfig: it ends at a NUL byte; '#' starts a comment.
    line = line.substr(0, line.find('\0'));
    line = line.substr(0, line.find('#'));
    while (!line.empty() && is_space(line.front()))
        line.remove_prefix(1);
    if (line.empty())
        return util::ok_status();

    if (line.starts_with("include") && line.size() > 7 && is_blank(line[7])) {
        std::vector<std::string> patterns;
        std::string_view rest = line.substr(8);
        while (!rest.empty()) {
            size_t end = rest.find_first_of(" \t");
            if (end > 0)
                patterns.emplace_back(rest.substr(0, end));
            rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
        }
        if (patterns.empty())
            return util::make_error(where, "include without a pattern");
        for (const auto& pattern : patterns) {
            // A relative pattern is taken from the including file's directory, not from "/".
            std::string full = pattern.front() == '/' ? pattern : fs::dirname(file) + "/" + pattern;
            for (const auto& match : expand_glob(m_tree, full)) {
                auto status = read(match, where);
                if (!status.ok())
                    return status;
            }
        }
        return util::ok_status();
    }
    if (starts_with_nocase(line, "hwcap") && line.size() > 5 && is_blank(line[5])) {
        m_result.warnings.push_back(where + ": hwcap directive ignored");
        return util::ok_status();
    }
    add_directory(line, where);
    return util::ok_status();
}

void ConfReader::add_directory(std::string_view text, const std::string& where) {
    if (size_t equal = text.find('='); equal != std::string_view::npos) {
        std::string_view type = text.substr(equal + 1);
        if (type != "libc4" && type != "libc5" && type != "libc6" && type != "glibc2") {
            m_result.warnings.push_back(
                fmt::format("{}: {} is not a known library type", where, type));
        }
        text = text.substr(0, equal);
    }
    // add_dir_1's canonical form: trailing whitespace, then trailing slashes, removed.
    while (!text.empty() && is_space(text.back()))
        text.remove_suffix(1);
    while (!text.empty() && text.back() == '/')
        text.remove_suffix(1);
    if (text.empty())
        return;
    if (text.front() != '/') {
        m_result.warnings.push_back(fmt::format(
            "{}: relative directory \"{}\" ignored (ld.so would take it from its working "
            "directory)",
            where, text));
        return;
    }
    if (!m_directories.insert(std::string(text)).second)
        return;
    m_result.directories.emplace_back(text);
    m_result.sources.push_back(ConfDirectory{std::string(text), where});
}

}  // namespace

bool glob_match(std::string_view pattern, std::string_view name) {
    // FNM_PERIOD: a leading dot is matched only by a literal dot.
    if (!name.empty() && name.front() == '.') {
        bool literal_dot = (!pattern.empty() && pattern.front() == '.') ||
                           (pattern.size() > 1 && pattern[0] == '\\' && pattern[1] == '.');
        if (!literal_dot)
            return false;
    }
    size_t p = 0;
    size_t n = 0;
    size_t star_p = std::string_view::npos;
    size_t star_n = 0;
    while (n < name.size()) {
        if (p < pattern.size()) {
            if (pattern[p] == '*') {
                star_p = ++p;
                star_n = n;
                continue;
            }
            size_t next = 0;
            if (match_one(pattern, p, name[n], next)) {
                p = next;
                ++n;
                continue;
            }
        }
        if (star_p == std::string_view::npos)
            return false;
        p = star_p;
        n = ++star_n;
    }
    while (p < pattern.size() && pattern[p] == '*')
        ++p;
    return p == pattern.size();
}

std::vector<std::string> expand_glob(const fs::FileTree& tree, std::string_view pattern) {
    std::vector<std::string> parts = split_components(pattern);
    std::vector<std::string> current = {""};  // spelled prefixes; "" is the root
    bool last_literal = true;
    for (const auto& part : parts) {
        std::vector<std::string> next;
        last_literal = !has_magic(part);
        for (const auto& prefix : current) {
            if (last_literal) {
                next.push_back(prefix + "/" + unescape(part));
                continue;
            }
            auto dir = fs::resolve(tree, prefix.empty() ? "/" : prefix);
            if (!dir || dir->stat.kind != fs::NodeKind::directory)
                continue;
            auto listing = tree.list(dir->path);
            if (!listing.ok())
                continue;  // glob skips unreadable directories
            for (const auto& entry : *listing) {
                if (glob_match(part, entry.name))
                    next.push_back(prefix + "/" + entry.name);
            }
        }
        current = std::move(next);
    }
    if (parts.empty())
        current = {"/"};
    std::vector<std::string> result;
    for (auto& path : current) {
        // A literal last component counts when lstat finds it (a dangling link included).
        if (last_literal && !fs::resolve(tree, path, false))
            continue;
        result.push_back(std::move(path));
    }
    std::sort(result.begin(), result.end());
    return result;
}

util::Result<ConfResult> read_ld_so_conf(const fs::FileTree& tree, std::string_view conf_path) {
    ConfReader reader(tree);
    std::string path = fs::normalize(conf_path);
    auto status = reader.read(path, path);
    if (!status.ok())
        return status.error();
    return reader.take();
}

}  // namespace rootlock::loader
