// Wheel file name parsing: percent decoding, the five or six '-'-separated fields, and the
// expansion of compressed tag sets ("cp311.cp312") into tag triples.
#include "python/wheel_filename.hpp"

#include <algorithm>
#include <cstddef>
#include <utility>

#include "python/metadata.hpp"
#include "util/quote.hpp"

namespace rootlock::python {

namespace {

constexpr std::string_view k_suffix = ".whl";

bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

bool is_alnum(char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || is_digit(c);
}

char ascii_lower(char c) {
    return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

int hex_value(char c) {
    if (is_digit(c))
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

// The file name as shown in an error: cut short so one hostile name cannot flood the message.
std::string shown(std::string_view name) {
    constexpr size_t k_max_shown = 120;
    if (name.size() > k_max_shown)
        return std::string(name.substr(0, k_max_shown)) + "...";
    return std::string(name);
}

std::string quoted(std::string_view text) {
    return util::quote(text);
}

std::vector<std::string_view> split(std::string_view text, char separator) {
    std::vector<std::string_view> parts;
    size_t start = 0;
    while (true) {
        const size_t end = text.find(separator, start);
        if (end == std::string_view::npos) {
            parts.push_back(text.substr(start));
            return parts;
        }
        parts.push_back(text.substr(start, end - start));
        start = end + 1;
    }
}

// PEP 440 characters as they appear in a file name (public version, local part after '+',
// epoch '!'); the full grammar is checked where versions are parsed.
bool is_version_char(char c) {
    return is_alnum(c) || c == '.' || c == '+' || c == '!' || c == '_';
}

bool is_build_char(char c) {
    return is_alnum(c) || c == '.' || c == '_';
}

bool is_tag_char(char c) {
    return is_alnum(c) || c == '_';
}

// Splits one compressed tag set ("manylinux2014_x86_64.manylinux_2_17_x86_64") into lowercased
// tags, or returns the problem.
util::Result<std::vector<std::string>> split_tag_set(std::string_view set, std::string_view what) {
    std::vector<std::string> out;
    if (set.empty())
        return util::make_error("", "empty " + std::string(what) + " tag");
    for (std::string_view part : split(set, '.')) {
        if (part.empty())
            return util::make_error("", "empty " + std::string(what) + " tag in " + quoted(set));
        if (!std::all_of(part.begin(), part.end(), is_tag_char))
            return util::make_error("", "invalid " + std::string(what) + " tag " + quoted(part));
        std::string lowered;
        lowered.reserve(part.size());
        for (char c : part)
            lowered.push_back(ascii_lower(c));
        out.push_back(std::move(lowered));
    }
    return out;
}

}  // namespace

util::Result<std::string> percent_decode(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (size_t i = 0; i < text.size(); ++i) {
        if (text[i] != '%') {
            out.push_back(text[i]);
            continue;
        }
        if (i + 2 >= text.size() || hex_value(text[i + 1]) < 0 || hex_value(text[i + 2]) < 0)
            return util::make_error("", "bad percent escape at offset " + std::to_string(i));
        const int value = hex_value(text[i + 1]) * 16 + hex_value(text[i + 2]);
        if (value == 0)
            return util::make_error("",
                                    "percent escape decodes to NUL at offset " + std::to_string(i));
        out.push_back(static_cast<char>(static_cast<unsigned char>(value)));
        i += 2;
    }
    return out;
}

util::Result<WheelFilename> parse_wheel_filename(std::string_view filename) {
    const std::string where = shown(filename);
    auto fail = [&](std::string message) { return util::make_error(where, std::move(message)); };

    auto decoded_result = percent_decode(filename);
    if (!decoded_result.ok())
        return fail(decoded_result.error().message);
    std::string decoded = std::move(decoded_result).value();

    if (decoded.empty())
        return fail("empty file name");
    for (char c : decoded) {
        if (c == '/' || c == '\\')
            return fail("a wheel file name has no directory part");
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
            return fail("control character in file name");
    }
    if (decoded.size() < k_suffix.size() ||
        decoded.compare(decoded.size() - k_suffix.size(), k_suffix.size(), k_suffix) != 0)
        return fail("not a wheel file name (no .whl suffix)");

    const std::string_view stem =
        std::string_view(decoded).substr(0, decoded.size() - k_suffix.size());
    const std::vector<std::string_view> parts = split(stem, '-');
    if (parts.size() != 5 && parts.size() != 6)
        return fail("expected 5 or 6 '-'-separated fields, found " + std::to_string(parts.size()));

    WheelFilename wheel;
    wheel.filename = decoded;
    const std::string_view name = parts[0];
    if (name.empty())
        return fail("empty distribution name");
    if (!is_valid_project_name(name))
        return fail("invalid distribution name " + quoted(name));
    wheel.name = std::string(name);
    wheel.normalized_name = normalize_name(name);

    const std::string_view version = parts[1];
    if (version.empty())
        return fail("empty version");
    if (!is_alnum(version.front()) || !std::all_of(version.begin(), version.end(), is_version_char))
        return fail("invalid version " + quoted(version));
    wheel.version = std::string(version);

    size_t next = 2;
    if (parts.size() == 6) {
        const std::string_view build = parts[2];
        if (build.empty() || !is_digit(build.front()))
            return fail("build tag " + quoted(build) + " does not start with a digit");
        if (!std::all_of(build.begin(), build.end(), is_build_char))
            return fail("invalid build tag " + quoted(build));
        wheel.build_tag = std::string(build);
        next = 3;
    }

    auto pythons = split_tag_set(parts[next], "python");
    if (!pythons.ok())
        return fail(pythons.error().message);
    auto abis = split_tag_set(parts[next + 1], "abi");
    if (!abis.ok())
        return fail(abis.error().message);
    auto platforms = split_tag_set(parts[next + 2], "platform");
    if (!platforms.ok())
        return fail(platforms.error().message);

    constexpr size_t k_max_tags = 1024;  // real wheels claim a handful; bounds hostile names
    if (pythons->size() * abis->size() * platforms->size() > k_max_tags)
        return fail("more than " + std::to_string(k_max_tags) + " tags");
    for (const std::string& python : *pythons) {
        for (const std::string& abi : *abis) {
            for (const std::string& platform : *platforms) {
                Tag tag{python, abi, platform};
                if (std::find(wheel.tags.begin(), wheel.tags.end(), tag) == wheel.tags.end())
                    wheel.tags.push_back(std::move(tag));
            }
        }
    }
    return wheel;
}

}  // namespace rootlock::python
