// Value checks of the recipe as pure functions, so that the parser only locates and words them
// and the tests can pin each rule on its own.
#include "recipe/recipe_validate.hpp"

#include <algorithm>
#include <array>
#include <charconv>

namespace rootlock::recipe {

using namespace std::string_view_literals;

namespace {

bool is_digit(char c) {
    return c >= '0' && c <= '9';
}
bool is_lower(char c) {
    return c >= 'a' && c <= 'z';
}
bool is_alpha(char c) {
    return is_lower(c) || (c >= 'A' && c <= 'Z');
}
bool is_hex(char c) {
    return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
bool all_digits(std::string_view text) {
    return !text.empty() && std::all_of(text.begin(), text.end(), is_digit);
}

std::optional<int> to_int(std::string_view text) {
    if (!all_digits(text) || text.size() > 6)
        return std::nullopt;
    int value = 0;
    std::from_chars(text.data(), text.data() + text.size(), value);
    return value;
}

std::vector<std::string_view> split(std::string_view text, char separator) {
    std::vector<std::string_view> parts;
    std::size_t start = 0;
    while (true) {
        const std::size_t end = text.find(separator, start);
        if (end == std::string_view::npos) {
            parts.push_back(text.substr(start));
            return parts;
        }
        parts.push_back(text.substr(start, end - start));
        start = end + 1;
    }
}

const char* const k_not_canonical =
    "is not canonical (no empty, \".\" or \"..\" component, no trailing slash)";

// Starts with '/' and names something below the root.
bool is_absolute_below_root(std::string_view path) {
    return path.size() > 1 && path.front() == '/';
}

// Written the one way the image's tree spells it, so that equal paths are equal strings.
bool is_canonical(std::string_view path) {
    const auto components = split(path.substr(1), '/');
    return std::none_of(components.begin(), components.end(), [](std::string_view component) {
        return component.empty() || component == "." || component == "..";
    });
}

}  // namespace

bool is_kebab_case(std::string_view text) {
    if (text.empty() || text.front() == '-' || text.back() == '-')
        return false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '-') {
            if (text[i + 1] == '-')
                return false;
        } else if (!is_lower(c) && !is_digit(c)) {
            return false;
        }
    }
    return true;
}

bool is_sha256_hex(std::string_view text) {
    return text.size() == 64 && std::all_of(text.begin(), text.end(), is_hex);
}

bool is_python_version(std::string_view text) {
    return text.size() > 2 && text.substr(0, 2) == "3." && all_digits(text.substr(2));
}

bool is_release_version(std::string_view text) {
    if (text.empty() || !is_digit(text.front()) || text.back() == '.')
        return false;
    return std::all_of(text.begin(), text.end(),
                       [](char c) { return is_digit(c) || is_alpha(c) || c == '.'; });
}

std::optional<CudaVersion> parse_cuda_version(std::string_view text) {
    const auto parts = split(text, '.');
    if (parts.size() != 2)
        return std::nullopt;
    const auto major = to_int(parts[0]);
    const auto minor = to_int(parts[1]);
    if (!major || !minor)
        return std::nullopt;
    return CudaVersion{*major, *minor};
}

std::optional<int> parse_driver_major(std::string_view text) {
    const auto parts = split(text, '.');
    if (parts.size() < 2 || parts.size() > 3)
        return std::nullopt;
    for (const auto part : parts) {
        if (!all_digits(part))
            return std::nullopt;
    }
    return to_int(parts[0]);
}

std::optional<int> minimum_driver(int cuda_major) {
    switch (cuda_major) {
        case 13:
            return 580;
        case 12:
            return 525;
        case 11:
            return 450;
        default:
            return std::nullopt;
    }
}

std::string cuda_tag(CudaVersion version) {
    return "cu" + std::to_string(version.major) + std::to_string(version.minor);
}

std::optional<std::string> cuda_tag_in_url(std::string_view url) {
    const std::size_t scheme = url.find("://");
    if (scheme != std::string_view::npos)
        url.remove_prefix(scheme + 3);
    const std::size_t query = url.find_first_of("?#");
    if (query != std::string_view::npos)
        url = url.substr(0, query);
    const auto segments = split(url, '/');
    for (std::size_t i = 1; i < segments.size(); ++i) {  // segment 0 is the host
        const auto segment = segments[i];
        if (segment.size() >= 4 && segment.substr(0, 2) == "cu" && all_digits(segment.substr(2)))
            return std::string(segment);
    }
    return std::nullopt;
}

bool is_index_url(std::string_view text) {
    for (const std::string_view scheme : {"http://", "https://", "file://"}) {
        if (text.size() > scheme.size() && text.substr(0, scheme.size()) == scheme)
            return true;
    }
    return false;
}

bool is_package_pattern(std::string_view text) {
    return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
        return is_digit(c) || is_alpha(c) || c == '-' || c == '_' || c == '.' || c == '*';
    });
}

bool is_env_name(std::string_view text) {
    if (text.empty() || is_digit(text.front()))
        return false;
    return std::all_of(text.begin(), text.end(),
                       [](char c) { return is_digit(c) || is_alpha(c) || c == '_'; });
}

bool is_soname(std::string_view text) {
    return text.find('/') == std::string_view::npos && text.find(".so") != std::string_view::npos &&
           text.find(".so") > 0;
}

bool is_debian_architecture(std::string_view text) {
    static constexpr std::array<std::string_view, 7> k_architectures = {
        "amd64", "arm64", "i386", "ppc64el", "s390x", "armhf", "armel"};
    return std::find(k_architectures.begin(), k_architectures.end(), text) != k_architectures.end();
}

bool is_debian_variant(std::string_view text) {
    static constexpr std::array<std::string_view, 11> k_variants = {
        "extract", "custom",    "essential",   "apt",      "required", "minbase",
        "buildd",  "important", "debootstrap", "standard", "-"};
    return std::find(k_variants.begin(), k_variants.end(), text) != k_variants.end();
}

bool has_image_suffix(std::string_view text) {
    for (const std::string_view suffix : {".tar.zst", ".tar.xz", ".tar.gz", ".tar"}) {
        if (text.size() > suffix.size() && text.substr(text.size() - suffix.size()) == suffix)
            return true;
    }
    return false;
}

std::optional<std::string> library_path_problem(std::string_view path) {
    if (!is_absolute_below_root(path))
        return "is not an absolute directory path such as /opt/lib";
    if (!is_canonical(path))
        return k_not_canonical;
    // ldconfig ends a line at NUL, cuts it at '#', trims whitespace and reads what follows '=' as
    // a library type; ':' and ',' separated directories in the older syntax.
    if (path.find_first_of(" \t\n\v\f\r#:,=\0"sv) != std::string_view::npos)
        return "holds a character ld.so.conf cannot carry (whitespace, '#', ':', ',' or '=')";
    return std::nullopt;
}

std::optional<std::string> file_path_problem(std::string_view path) {
    if (!is_absolute_below_root(path))
        return "is not an absolute file path such as /etc/motd";
    if (!is_canonical(path))
        return k_not_canonical;
    if (path.find_first_of("\n\0"sv) != std::string_view::npos)
        return "holds a NUL or newline character";
    for (const std::string_view mount : {"/dev", "/proc", "/sys"}) {
        if (path.substr(0, mount.size()) == mount &&
            (path.size() == mount.size() || path[mount.size()] == '/'))
            return "is under /dev, /proc or /sys, which pct and LXC mount themselves";
    }
    for (const std::string_view own : {"/etc/ld.so.cache", "/etc/ld.so.conf.d/rootlock.conf",
                                       "/etc/profile.d/rootlock-venv.sh"}) {
        if (path == own)
            return "is written by rootlock itself";
    }
    return std::nullopt;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
    // Optimal string alignment: insertions, deletions, substitutions and adjacent swaps.
    const std::size_t width = b.size() + 1;
    std::vector<std::size_t> d((a.size() + 1) * width);
    for (std::size_t i = 0; i <= a.size(); ++i)
        d[i * width] = i;
    for (std::size_t j = 0; j <= b.size(); ++j)
        d[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            std::size_t best = std::min({d[(i - 1) * width + j] + 1, d[i * width + j - 1] + 1,
                                         d[(i - 1) * width + j - 1] + cost});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
                best = std::min(best, d[(i - 2) * width + j - 2] + 1);
            d[i * width + j] = best;
        }
    }
    return d[a.size() * width + b.size()];
}

std::optional<std::string> suggest_key(std::string_view key,
                                       const std::vector<std::string_view>& candidates) {
    // Close enough: at most a third of the longer name differs, and never more than 3 edits.
    std::optional<std::string> best;
    std::size_t best_distance = 0;
    for (const auto candidate : candidates) {
        const std::size_t distance = edit_distance(key, candidate);
        const std::size_t limit =
            std::min<std::size_t>(3, std::max(key.size(), candidate.size()) / 3);
        if (distance == 0 || distance > std::max<std::size_t>(limit, 1))
            continue;
        if (!best || distance < best_distance) {
            best = std::string(candidate);
            best_distance = distance;
        }
    }
    return best;
}

}  // namespace rootlock::recipe
