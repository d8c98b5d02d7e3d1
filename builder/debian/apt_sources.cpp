// apt's one-line and deb822 source entries; see apt_sources.hpp.
#include "debian/apt_sources.hpp"

#include <algorithm>
#include <utility>

#include "debian/armor.hpp"
#include "debian/deb822.hpp"
#include "debian/text_checks.hpp"
#include "util/quote.hpp"

namespace rootlock::debian {

namespace {

// The blank-separated words of a field's value, its continuation lines included.
std::vector<std::string> words_of(std::string_view value) {
    std::vector<std::string> out;
    for (std::string_view line : split_lines(value))
        for (std::string_view word : split_blanks(line))
            out.emplace_back(word);
    return out;
}

std::string without_trailing_slashes(std::string url) {
    while (!url.empty() && url.back() == '/')
        url.pop_back();
    return url;
}

}  // namespace

bool is_flat_suite(const std::string& suite) {
    return !suite.empty() && suite.back() == '/';
}

std::vector<SourceLine> parse_sources_list(std::string_view text, const std::string& file) {
    std::vector<SourceLine> out;
    size_t start = 0;
    uint32_t number = 0;
    while (start < text.size()) {
        size_t end = text.find('\n', start);
        if (end == std::string_view::npos)
            end = text.size();
        std::string line(text.substr(start, end - start));
        start = end + 1;
        ++number;
        if (auto hash = line.find('#'); hash != std::string::npos)
            line.resize(hash);
        std::vector<std::string> words;
        std::string options;
        size_t i = 0;
        while (i < line.size()) {
            while (i < line.size() && (line[i] == ' ' || line[i] == '\t'))
                ++i;
            if (i >= line.size())
                break;
            if (line[i] == '[' && words.size() == 1) {
                const size_t close = line.find(']', i);
                if (close == std::string::npos)
                    break;
                options = line.substr(i + 1, close - i - 1);
                i = close + 1;
                continue;
            }
            const size_t word_end = line.find_first_of(" \t", i);
            words.push_back(
                line.substr(i, word_end == std::string::npos ? std::string::npos : word_end - i));
            i = word_end == std::string::npos ? line.size() : word_end;
        }
        // "deb URL SUITE COMPONENT...", or a flat repository's "deb URL DIR/" without any:
        // apt refuses a suite ending in '/' with components, and any other suite without.
        if (words.size() < 3 || words[0] != "deb" || is_flat_suite(words[2]) != (words.size() == 3))
            continue;
        SourceLine source;
        source.url = without_trailing_slashes(words[1]);
        if (source.url.empty())
            continue;  // "/": no URL at all
        source.suite = words[2];
        source.components.assign(words.begin() + 3, words.end());
        source.from = file.empty() ? std::string() : file + ":" + std::to_string(number);
        const size_t signed_by = options.find("signed-by=");
        if (signed_by != std::string::npos) {
            const size_t value = signed_by + 10;
            const size_t value_end = options.find_first_of(" \t", value);
            source.signed_by = options.substr(
                value, value_end == std::string::npos ? std::string::npos : value_end - value);
        }
        out.push_back(std::move(source));
    }
    return out;
}

util::Result<std::vector<SourceLine>> parse_deb822_sources(std::string_view text,
                                                           const std::string& file) {
    ROOTLOCK_TRY(stanzas, debian::parse_deb822(text, file));
    std::vector<SourceLine> out;
    for (const auto& stanza : stanzas) {
        const std::string where = file + ":" + std::to_string(stanza.line);
        auto words = [&](std::string_view name) {
            const std::string* value = stanza.get(name);
            return value != nullptr ? words_of(*value) : std::vector<std::string>();
        };
        if (const std::string* enabled = stanza.get("Enabled"); enabled && *enabled == "no")
            continue;
        const auto types = words("Types");
        if (types.empty())
            return util::make_error(where, "a stanza without Types");
        if (std::find(types.begin(), types.end(), "deb") == types.end())
            continue;  // deb-src only
        const auto uris = words("URIs");
        const auto suites = words("Suites");
        const auto components = words("Components");
        if (uris.empty())
            return util::make_error(where, "a stanza without URIs");
        if (suites.empty())
            return util::make_error(where, "a stanza without Suites");
        std::string key_path;
        std::string key_text;
        if (const std::string* signed_by = stanza.get("Signed-By")) {
            if (is_armoured_key(*signed_by)) {
                key_text = *signed_by + "\n";
            } else {
                // Keyring files or fingerprints: the first file is the keyring gpgv reads.
                for (const auto& word : words_of(*signed_by))
                    if (word.starts_with("/")) {
                        key_path = word;
                        break;
                    }
            }
        }
        for (const auto& uri : uris) {
            if (without_trailing_slashes(uri).empty())
                return util::make_error(where, "a URI of slashes only");
            for (const auto& suite : suites) {
                if (is_flat_suite(suite) != components.empty())
                    return util::make_error(
                        where, is_flat_suite(suite)
                                   ? "Components given for the flat suite " + util::quote(suite)
                                   : "a stanza without Components");
                out.push_back(SourceLine{without_trailing_slashes(uri), suite, components, key_path,
                                         key_text, where});
            }
        }
    }
    return out;
}

}  // namespace rootlock::debian
