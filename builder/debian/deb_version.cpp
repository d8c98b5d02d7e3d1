// Debian versions: dpkg's parseversion (made strict: its warnings are errors here) and its
// verrevcmp ordering, transcribed so that rootlock orders packages exactly as dpkg and apt do.
#include "debian/deb_version.hpp"

#include <climits>

#include "debian/text_checks.hpp"

namespace rootlock::debian {

namespace {

bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

bool is_alpha(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

// A character for an error message: 'x', or its escape when it is not printable.
std::string describe(char c) {
    const std::string quoted = util::quote(std::string_view(&c, 1));
    return "'" + quoted.substr(1, quoted.size() - 2) + "'";
}

// dpkg's order(): digits and the end weigh 0, letters their code, '~' below everything, and
// every other character above all letters.
int order(char c) {
    if (is_digit(c))
        return 0;
    if (is_alpha(c))
        return static_cast<unsigned char>(c);
    if (c == '~')
        return -1;
    if (c != '\0')
        return static_cast<unsigned char>(c) + 256;
    return 0;
}

int sign(int value) {
    return (value > 0) - (value < 0);
}

// dpkg's verrevcmp: alternating runs of non-digits (compared by order()) and digits (compared
// as numbers without leading zeros). Reading past the end yields '\0', as the C strings do.
int verrevcmp(std::string_view a, std::string_view b) {
    size_t i = 0;
    size_t j = 0;
    auto at = [](std::string_view s, size_t k) { return k < s.size() ? s[k] : '\0'; };
    while (i < a.size() || j < b.size()) {
        int first_diff = 0;
        while ((i < a.size() && !is_digit(a[i])) || (j < b.size() && !is_digit(b[j]))) {
            const int ac = order(at(a, i));
            const int bc = order(at(b, j));
            if (ac != bc)
                return sign(ac - bc);
            ++i;
            ++j;
        }
        while (at(a, i) == '0')
            ++i;
        while (at(b, j) == '0')
            ++j;
        while (is_digit(at(a, i)) && is_digit(at(b, j))) {
            if (first_diff == 0)
                first_diff = at(a, i) - at(b, j);
            ++i;
            ++j;
        }
        if (is_digit(at(a, i)))
            return 1;
        if (is_digit(at(b, j)))
            return -1;
        if (first_diff != 0)
            return sign(first_diff);
    }
    return 0;
}

}  // namespace

util::Result<DebVersion> parse_deb_version(std::string_view text) {
    auto error = [&](std::string message) {
        return util::make_error(util::quote(text), std::move(message));
    };
    // dpkg trims blanks around the version but refuses them inside.
    const std::string_view version = trim_blanks(text);
    if (version.empty())
        return error("an empty version");
    for (char c : version) {
        if (is_blank(c))
            return error("a blank inside the version");
    }

    DebVersion result;
    std::string_view rest = version;
    const size_t colon = version.find(':');
    if (colon != std::string_view::npos) {
        const std::string_view epoch = version.substr(0, colon);
        if (epoch.empty())
            return error("the epoch is empty");
        const auto number = parse_decimal(epoch);
        if (!number) {
            for (char c : epoch) {
                if (!is_digit(c))
                    return error("the epoch is not a number");
            }
        }
        if (!number || *number > static_cast<uint64_t>(INT_MAX))
            return error("the epoch is too large");
        rest = version.substr(colon + 1);
        if (rest.empty())
            return error("nothing after the epoch");
        result.epoch = *number;
    }

    const size_t hyphen = rest.rfind('-');
    if (hyphen != std::string_view::npos) {
        result.revision = std::string(rest.substr(hyphen + 1));
        if (result.revision.empty())
            return error("the revision is empty");
        rest = rest.substr(0, hyphen);
    }
    result.upstream = std::string(rest);
    if (result.upstream.empty())
        return error("the upstream version is empty");
    if (!is_digit(result.upstream.front()))
        return error("the upstream version does not start with a digit");
    for (char c : result.upstream) {
        if (!is_digit(c) && !is_alpha(c) && c != '.' && c != '+' && c != '~' && c != '-' &&
            c != ':')
            return error("invalid character " + describe(c) + " in the upstream version");
    }
    for (char c : result.revision) {
        if (!is_digit(c) && !is_alpha(c) && c != '.' && c != '+' && c != '~')
            return error("invalid character " + describe(c) + " in the revision");
    }
    return result;
}

int compare_deb_versions(const DebVersion& a, const DebVersion& b) {
    if (a.epoch != b.epoch)
        return a.epoch > b.epoch ? 1 : -1;
    const int upstream = verrevcmp(a.upstream, b.upstream);
    if (upstream != 0)
        return upstream;
    return verrevcmp(a.revision, b.revision);
}

int compare_deb_versions(std::string_view a, std::string_view b) {
    const auto parsed_a = parse_deb_version(a);
    const auto parsed_b = parse_deb_version(b);
    if (parsed_a.ok() && parsed_b.ok())
        return compare_deb_versions(parsed_a.value(), parsed_b.value());
    if (parsed_a.ok())
        return 1;
    if (parsed_b.ok())
        return -1;
    return sign(a.compare(b));
}

std::string to_string(const DebVersion& version) {
    std::string text;
    // As dpkg's vdew_nonambig: a ':' in the upstream part needs its "0:", or it reads back as
    // an epoch ("0:1:2" is not "1:2").
    if (version.epoch != 0 || version.upstream.find(':') != std::string::npos)
        text = std::to_string(version.epoch) + ":";
    text += version.upstream;
    if (!version.revision.empty())
        text += "-" + version.revision;
    return text;
}

}  // namespace rootlock::debian
