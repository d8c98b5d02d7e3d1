// PEP 503 HTML project pages: a hand-written, single-pass scanner of <a> and <base> start tags
// (attribute values entity-decoded), then each link turned into a DistributionFile.
#include <algorithm>
#include <optional>

#include "index/project_page.hpp"
#include "index/url.hpp"
#include "python/wheel_filename.hpp"

namespace rootlock::index {

namespace {

bool is_space(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f';
}

bool is_alpha(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

char to_lower(char c) {
    return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

bool starts_with_nocase(std::string_view text, size_t pos, std::string_view lower_prefix) {
    if (text.size() - pos < lower_prefix.size())
        return false;
    for (size_t i = 0; i < lower_prefix.size(); ++i) {
        if (to_lower(text[pos + i]) != lower_prefix[i])
            return false;
    }
    return true;
}

void append_utf8(std::string& out, uint32_t code_point) {
    if (code_point < 0x80) {
        out.push_back(static_cast<char>(code_point));
    } else if (code_point < 0x800) {
        out.push_back(static_cast<char>(0xC0 | (code_point >> 6)));
        out.push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
    } else if (code_point < 0x10000) {
        out.push_back(static_cast<char>(0xE0 | (code_point >> 12)));
        out.push_back(static_cast<char>(0x80 | ((code_point >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
    } else {
        out.push_back(static_cast<char>(0xF0 | (code_point >> 18)));
        out.push_back(static_cast<char>(0x80 | ((code_point >> 12) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | ((code_point >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
    }
}

// Decodes "&#NN;" or "&#xHH;" at `pos` (the '&'); the ';' may be missing, as HTML allows.
// Returns the length consumed, 0 when this is not a numeric reference.
size_t decode_numeric(std::string_view text, size_t pos, std::string& out) {
    size_t i = pos + 2;
    const bool hex = i < text.size() && (text[i] == 'x' || text[i] == 'X');
    if (hex)
        ++i;
    const size_t digits_start = i;
    uint32_t value = 0;
    for (; i < text.size(); ++i) {
        const char c = text[i];
        uint32_t digit = 0;
        if (c >= '0' && c <= '9')
            digit = static_cast<uint32_t>(c - '0');
        else if (hex && to_lower(c) >= 'a' && to_lower(c) <= 'f')
            digit = static_cast<uint32_t>(to_lower(c) - 'a' + 10);
        else
            break;
        // Saturate: anything past U+10FFFF becomes U+FFFD anyway.
        value = value > 0x10FFFF ? value : value * (hex ? 16U : 10U) + digit;
    }
    if (i == digits_start)
        return 0;
    if (i < text.size() && text[i] == ';')
        ++i;
    const bool invalid = value == 0 || value > 0x10FFFF || (value >= 0xD800 && value <= 0xDFFF);
    append_utf8(out, invalid ? 0xFFFD : value);
    return i - pos;
}

// The references index pages use; anything else is kept as written.
std::string decode_entities(std::string_view text) {
    struct Named {
        std::string_view name;
        char value;
    };
    static constexpr Named k_named[] = {
        {"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&apos;", '\''}};
    std::string out;
    out.reserve(text.size());
    for (size_t i = 0; i < text.size();) {
        const size_t amp = std::min(text.find('&', i), text.size());
        out.append(text.substr(i, amp - i));
        i = amp;
        if (i == text.size())
            break;
        if (i + 1 < text.size() && text[i + 1] == '#') {
            if (size_t used = decode_numeric(text, i, out)) {
                i += used;
                continue;
            }
        }
        bool matched = false;
        for (const Named& named : k_named) {
            if (starts_with_nocase(text, i, named.name)) {
                out.push_back(named.value);
                i += named.name.size();
                matched = true;
                break;
            }
        }
        if (!matched)
            out.push_back(text[i++]);
    }
    return out;
}

// What a browser does to an href before parsing it: surrounding whitespace and control
// characters dropped, tabs and newlines inside removed, spaces and non-ASCII bytes escaped.
// Returns a view of `href` when nothing inside needs changing, else of `storage`.
std::string_view clean_href(std::string_view href, std::string& storage) {
    auto is_c0_or_space = [](char c) { return static_cast<unsigned char>(c) <= 0x20; };
    while (!href.empty() && is_c0_or_space(href.front()))
        href.remove_prefix(1);
    while (!href.empty() && is_c0_or_space(href.back()))
        href.remove_suffix(1);
    auto needs_change = [](char c) {
        return c == '\t' || c == '\n' || c == '\r' || c == ' ' ||
               static_cast<unsigned char>(c) >= 0x80;
    };
    if (std::none_of(href.begin(), href.end(), needs_change))
        return href;
    static constexpr char k_hex[] = "0123456789ABCDEF";
    storage.clear();
    storage.reserve(href.size() + 16);
    for (char c : href) {
        const auto byte = static_cast<unsigned char>(c);
        if (c == '\t' || c == '\n' || c == '\r')
            continue;
        if (c == ' ' || byte >= 0x80) {
            storage.push_back('%');
            storage.push_back(k_hex[byte >> 4]);
            storage.push_back(k_hex[byte & 0xF]);
            continue;
        }
        storage.push_back(c);
    }
    return storage;
}

// Entity-decodes an attribute value, copying only when it holds a reference.
std::string_view decoded_view(std::string_view raw, std::string& storage) {
    if (raw.find('&') == std::string_view::npos)
        return raw;
    storage = decode_entities(raw);
    return storage;
}

// The attributes of one start tag that matter here, raw (entity-decoded later, only when used).
// The first occurrence of an attribute wins, as in HTML.
struct Anchor {
    size_t offset = 0;  // of the '<'
    std::optional<std::string_view> href;
    std::optional<std::string_view> requires_python;
    std::optional<std::string_view> yanked;
    std::optional<std::string_view> core_metadata;
    std::optional<std::string_view> dist_info_metadata;
};

// One forward pass over the page; every branch advances, so the work is linear in its size.
class HtmlScanner {
  public:
    explicit HtmlScanner(std::string_view body) : m_body(body) {}

    void scan() {
        while (m_pos < m_body.size()) {
            const size_t lt = m_body.find('<', m_pos);
            if (lt == std::string_view::npos)
                return;
            m_pos = lt + 1;
            if (m_body.substr(lt).starts_with("<!--")) {
                skip_past(m_body.find("-->", lt + 4), 3);
            } else if (m_pos < m_body.size() &&
                       (m_body[m_pos] == '!' || m_body[m_pos] == '?' || m_body[m_pos] == '/')) {
                skip_past(m_body.find('>', m_pos), 1);
            } else if (m_pos < m_body.size() && is_alpha(m_body[m_pos])) {
                if (!read_start_tag(lt))
                    return;  // cut short inside a tag: what came before still counts
            }
        }
    }

    std::vector<Anchor> anchors;
    std::optional<std::string_view> base_href;

  private:
    void skip_past(size_t found, size_t length) {
        m_pos = found == std::string_view::npos ? m_body.size() : found + length;
    }

    bool read_start_tag(size_t lt) {
        std::string name;
        while (m_pos < m_body.size() && !is_space(m_body[m_pos]) && m_body[m_pos] != '/' &&
               m_body[m_pos] != '>') {
            // Tag names longer than any we look for need not be kept in full.
            if (name.size() < 16)
                name.push_back(to_lower(m_body[m_pos]));
            ++m_pos;
        }
        Anchor tag;
        tag.offset = lt;
        if (!read_attributes(tag))
            return false;
        if (name == "a") {
            if (tag.href)
                anchors.push_back(tag);
        } else if (name == "base") {
            if (!base_href && tag.href)
                base_href = tag.href;
        } else if (name == "script" || name == "style") {
            skip_raw_text(name);
        }
        return true;
    }

    // Reads attributes up to and past the closing '>'; false when the page ends first.
    bool read_attributes(Anchor& tag) {
        while (true) {
            while (m_pos < m_body.size() && (is_space(m_body[m_pos]) || m_body[m_pos] == '/'))
                ++m_pos;
            if (m_pos >= m_body.size())
                return false;
            if (m_body[m_pos] == '>') {
                ++m_pos;
                return true;
            }
            const size_t name_start = m_pos;
            ++m_pos;  // the first character may be '=', as HTML allows
            while (m_pos < m_body.size() && !is_space(m_body[m_pos]) && m_body[m_pos] != '/' &&
                   m_body[m_pos] != '>' && m_body[m_pos] != '=')
                ++m_pos;
            const std::string_view name = m_body.substr(name_start, m_pos - name_start);
            while (m_pos < m_body.size() && is_space(m_body[m_pos]))
                ++m_pos;
            std::string_view value;
            if (m_pos < m_body.size() && m_body[m_pos] == '=') {
                ++m_pos;
                while (m_pos < m_body.size() && is_space(m_body[m_pos]))
                    ++m_pos;
                if (m_pos >= m_body.size())
                    return false;
                const char quote = m_body[m_pos];
                if (quote == '"' || quote == '\'') {
                    const size_t close = m_body.find(quote, m_pos + 1);
                    if (close == std::string_view::npos)
                        return false;
                    value = m_body.substr(m_pos + 1, close - m_pos - 1);
                    m_pos = close + 1;
                } else {
                    const size_t start = m_pos;
                    while (m_pos < m_body.size() && !is_space(m_body[m_pos]) &&
                           m_body[m_pos] != '>')
                        ++m_pos;
                    value = m_body.substr(start, m_pos - start);
                }
            }
            keep_attribute(tag, name, value);
        }
    }

    static void keep_attribute(Anchor& tag, std::string_view name, std::string_view value) {
        struct Wanted {
            std::string_view name;
            std::optional<std::string_view> Anchor::*slot;
        };
        static constexpr Wanted k_wanted[] = {
            {"href", &Anchor::href},
            {"data-requires-python", &Anchor::requires_python},
            {"data-yanked", &Anchor::yanked},
            {"data-core-metadata", &Anchor::core_metadata},
            {"data-dist-info-metadata", &Anchor::dist_info_metadata},
        };
        for (const Wanted& wanted : k_wanted) {
            if (name.size() == wanted.name.size() && starts_with_nocase(name, 0, wanted.name)) {
                if (!(tag.*wanted.slot))
                    tag.*wanted.slot = value;
                return;
            }
        }
    }

    // <script> and <style> hold text that may contain "<a": skip to their end tag.
    void skip_raw_text(const std::string& name) {
        const std::string end_tag = "</" + name;
        while (m_pos < m_body.size()) {
            const size_t lt = m_body.find("</", m_pos);
            if (lt == std::string_view::npos) {
                m_pos = m_body.size();
                return;
            }
            m_pos = lt + 2;
            if (starts_with_nocase(m_body, lt, end_tag)) {
                m_pos = lt;  // the main loop skips the end tag itself
                return;
            }
        }
    }

    std::string_view m_body;
    size_t m_pos = 0;
};

// "LINE:COL" of a byte offset, counted only when an error needs it.
std::string position(std::string_view body, size_t offset) {
    size_t line = 1;
    size_t line_start = 0;
    for (size_t i = 0; i < offset && i < body.size(); ++i) {
        if (body[i] == '\n') {
            ++line;
            line_start = i + 1;
        }
    }
    return std::to_string(line) + ":" + std::to_string(offset - line_start + 1);
}

// data-core-metadata / data-dist-info-metadata: "true", or "ALGORITHM=HEX" (PEP 658). Other
// values ("false", empty) promise nothing and give nullopt.
util::Result<std::optional<std::map<std::string, std::string>>> read_metadata_attribute(
    std::string_view raw) {
    std::string decoded;
    std::string_view value = decoded_view(raw, decoded);
    while (!value.empty() && is_space(value.back()))
        value.remove_suffix(1);
    while (!value.empty() && is_space(value.front()))
        value.remove_prefix(1);
    std::map<std::string, std::string> hashes;
    if (value.size() == 4 && starts_with_nocase(value, 0, "true"))
        return std::optional(hashes);
    const size_t equals = value.find('=');
    if (equals == std::string::npos || equals == 0)
        return std::optional<std::map<std::string, std::string>>();
    std::string algorithm(value.substr(0, equals));
    for (char& c : algorithm)
        c = to_lower(c);
    auto digest = normalize_digest(algorithm, value.substr(equals + 1));
    if (!digest.ok())
        return digest.error();
    hashes[algorithm] = std::move(digest).value();
    return std::optional(hashes);
}

// Turns one anchor into a file; nullopt for links that name no file (directories, links that
// cannot be resolved or decoded).
util::Result<std::optional<DistributionFile>> make_file(const Anchor& anchor,
                                                        const std::string& base) {
    std::string decoded;
    std::string cleaned;
    auto resolved = resolve_url(base, clean_href(decoded_view(*anchor.href, decoded), cleaned));
    if (!resolved.ok())
        return std::optional<DistributionFile>();
    std::string url = std::move(resolved).value();
    const size_t hash_sign = std::min(url.find('#'), url.size());
    auto hashes =
        fragment_hashes(std::string_view(url).substr(std::min(hash_sign + 1, url.size())));
    url.resize(hash_sign);
    std::string segment = last_path_segment(url);
    if (segment.find('%') != std::string::npos) {
        auto unescaped = python::percent_decode(segment);
        if (!unescaped.ok())
            return std::optional<DistributionFile>();
        segment = std::move(unescaped).value();
    }
    if (!is_plain_filename(segment))
        return std::optional<DistributionFile>();

    DistributionFile file;
    file.filename = std::move(segment);
    file.url = std::move(url);
    if (!hashes.ok())
        return hashes.error();
    file.hashes = std::move(hashes).value();
    if (anchor.requires_python && !anchor.requires_python->empty())
        file.requires_python = decode_entities(*anchor.requires_python);
    if (anchor.yanked) {
        file.yanked = true;
        file.yanked_reason = decode_entities(*anchor.yanked);
    }
    // PEP 714: data-core-metadata is the current name and wins when both are given.
    const auto& metadata = anchor.core_metadata ? anchor.core_metadata : anchor.dist_info_metadata;
    if (metadata) {
        auto read = read_metadata_attribute(*metadata);
        if (!read.ok())
            return read.error();
        if (read.value()) {
            file.has_metadata = true;
            file.metadata_hashes = std::move(*read.value());
        }
    }
    return std::optional(std::move(file));
}

}  // namespace

util::Result<ProjectPage> parse_simple_html(std::string_view body, const std::string& page_url,
                                            const std::string& project_name) {
    if (body.size() > k_max_page_bytes) {
        return util::make_error(page_url, "index page is " + std::to_string(body.size()) +
                                              " bytes, more than the 64 MiB limit");
    }
    HtmlScanner scanner(body);
    scanner.scan();

    std::string base = page_url;
    if (scanner.base_href) {
        std::string decoded;
        std::string cleaned;
        auto resolved =
            resolve_url(page_url, clean_href(decoded_view(*scanner.base_href, decoded), cleaned));
        if (resolved.ok())
            base = std::move(resolved).value();
    }

    ProjectPage page;
    page.name = project_name;
    for (const Anchor& anchor : scanner.anchors) {
        auto file = make_file(anchor, base);
        if (!file.ok()) {
            return util::make_error(page_url + ":" + position(body, anchor.offset),
                                    file.error().message);
        }
        if (file.value())
            page.files.push_back(std::move(*file.value()));
    }
    return page;
}

}  // namespace rootlock::index
