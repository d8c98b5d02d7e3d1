// Release files: the archive's identity and the SHA256 of every index it lists, checked line by
// line, plus the RFC 2822 dates they carry and the snapshot.debian.org timestamps made from them.
#include "debian/release.hpp"

#include <array>
#include <optional>
#include <set>
#include <utility>

#include "debian/deb822.hpp"
#include "debian/text_checks.hpp"

namespace rootlock::debian {

namespace {

const Field* find_field(const Paragraph& paragraph, std::string_view name) {
    for (const Field& field : paragraph.fields) {
        if (iequals(field.name, name))
            return &field;
    }
    return nullptr;
}

std::vector<std::string> words(const std::string* value) {
    std::vector<std::string> out;
    if (value == nullptr)
        return out;
    for (std::string_view line : split_lines(*value)) {
        for (std::string_view word : split_blanks(line))
            out.emplace_back(word);
    }
    return out;
}

// Howard Hinnant's days_from_civil and civil_from_days, in 64 bits so no input overflows.
int64_t days_from_civil(int64_t y, int64_t m, int64_t d) {
    y -= m <= 2 ? 1 : 0;
    const int64_t era = (y >= 0 ? y : y - 399) / 400;
    const int64_t yoe = y - era * 400;
    const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

struct Civil {
    int64_t year, month, day;
};

Civil civil_from_days(int64_t z) {
    z += 719468;
    const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    const int64_t doe = z - era * 146097;
    const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    const int64_t mp = (5 * doy + 2) / 153;
    const int64_t day = doy - (153 * mp + 2) / 5 + 1;
    const int64_t month = mp < 10 ? mp + 3 : mp - 9;
    return Civil{yoe + era * 400 + (month <= 2 ? 1 : 0), month, day};
}

int64_t days_in_month(int64_t year, int64_t month) {
    static const std::array<int64_t, 12> k_days = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    return month == 2 && leap ? 29 : k_days[static_cast<size_t>(month - 1)];
}

// Digits only, exactly `min`..`max` of them.
std::optional<int64_t> number(std::string_view text, size_t min, size_t max) {
    if (text.size() < min || text.size() > max)
        return std::nullopt;
    const auto value = parse_decimal(text);
    if (!value)
        return std::nullopt;
    return static_cast<int64_t>(*value);
}

std::string two_digits(int64_t value) {
    return (value < 10 ? "0" : "") + std::to_string(value);
}

// One "HASH SIZE PATH" line of the SHA256 section.
util::Result<ReleaseFile> parse_sha256_line(std::string_view line, const std::string& where) {
    auto error = [&](const std::string& problem) {
        return util::make_error(where, "SHA256 line " + util::quote(line) + ": " + problem);
    };
    const auto parts = split_blanks(line);
    if (parts.size() != 3)
        return error("expected HASH SIZE PATH");
    ReleaseFile file;
    auto hash = lowercase_hex(parts[0], 64);
    if (!hash)
        return error("the hash is not 64 hex digits");
    file.sha256 = std::move(*hash);
    const auto size = parse_decimal(parts[1]);
    if (!size)
        return error("the size is not a number");
    file.size = *size;
    file.path = std::string(parts[2]);
    if (file.path.front() == '/')
        return error("the path is absolute");
    if (has_dot_dot(file.path))
        return error("the path has \"..\"");
    return file;
}

}  // namespace

const ReleaseFile* Release::find(std::string_view path) const {
    for (const ReleaseFile& file : files) {
        if (file.path == path)
            return &file;
    }
    return nullptr;
}

util::Result<Release> parse_release(std::string_view text, const std::string& file_name) {
    ROOTLOCK_TRY(paragraphs, parse_deb822(text, file_name));
    if (paragraphs.empty())
        return util::make_error(file_name, "no paragraph");
    auto at = [&](uint32_t line) { return file_name + ":" + std::to_string(line); };
    if (paragraphs.size() > 1)
        return util::make_error(at(paragraphs[1].line), "a second paragraph");
    const Paragraph& paragraph = paragraphs.front();
    auto text_of = [&](std::string_view name) {
        const std::string* value = paragraph.get(name);
        return value == nullptr ? std::string() : *value;
    };

    Release release;
    release.origin = text_of("Origin");
    release.label = text_of("Label");
    release.suite = text_of("Suite");
    release.codename = text_of("Codename");
    release.version = text_of("Version");
    if (release.suite.empty() && release.codename.empty())
        return util::make_error(at(paragraph.line), "no Suite or Codename");

    const Field* date = find_field(paragraph, "Date");
    if (date == nullptr)
        return util::make_error(at(paragraph.line), "no Date");
    for (const Field* field : {date, find_field(paragraph, "Valid-Until")}) {
        if (field == nullptr)
            continue;
        auto seconds = parse_release_date(field->value);
        if (!seconds)
            return util::make_error(at(field->line), field->name + " " + seconds.error().text());
    }
    release.date = date->value;
    release.valid_until = text_of("Valid-Until");

    release.architectures = words(paragraph.get("Architectures"));
    release.components = words(paragraph.get("Components"));
    if (const Field* by_hash = find_field(paragraph, "Acquire-By-Hash")) {
        if (by_hash->value != "yes" && by_hash->value != "no") {
            return util::make_error(
                at(by_hash->line),
                "Acquire-By-Hash " + util::quote(by_hash->value) + " is neither yes nor no");
        }
        release.acquire_by_hash = by_hash->value == "yes";
    }

    const Field* sha256 = find_field(paragraph, "SHA256");
    if (sha256 == nullptr)
        return util::make_error(at(paragraph.line), "no SHA256 section");
    // Continuation lines follow the field's line one for one, the first being the field's own.
    std::set<std::string> seen;
    const auto lines = split_lines(sha256->value);
    for (size_t i = 0; i < lines.size(); ++i) {
        if (lines[i].empty())
            continue;
        const std::string where = at(sha256->line + static_cast<uint32_t>(i));
        ROOTLOCK_TRY(file, parse_sha256_line(lines[i], where));
        if (!seen.insert(file.path).second) {
            return util::make_error(
                where, "SHA256 line " + util::quote(lines[i]) + ": the path is listed twice");
        }
        release.files.push_back(std::move(file));
    }
    if (release.files.empty())
        return util::make_error(at(sha256->line), "an empty SHA256 section");
    return release;
}

util::Result<int64_t> parse_release_date(std::string_view text) {
    static const std::array<std::string_view, 7> k_weekdays = {"Mon", "Tue", "Wed", "Thu",
                                                               "Fri", "Sat", "Sun"};
    static const std::array<std::string_view, 12> k_months = {
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    const auto fail = [&] {
        return util::make_error(util::quote(text),
                                "not a date like \"Sat, 09 Nov 2024 10:13:41 UTC\"");
    };
    auto parts = split_blanks(text);
    // The weekday is optional in RFC 2822; when present it must be a real one.
    if (!parts.empty() && parts.front().size() == 4 && parts.front().back() == ',') {
        bool known = false;
        for (std::string_view day : k_weekdays)
            known = known || parts.front().substr(0, 3) == day;
        if (!known)
            return fail();
        parts.erase(parts.begin());
    }
    if (parts.size() != 5)
        return fail();
    const auto day = number(parts[0], 1, 2);
    int64_t month = 0;
    for (size_t i = 0; i < k_months.size(); ++i) {
        if (parts[1] == k_months[i])
            month = static_cast<int64_t>(i) + 1;
    }
    const auto year = number(parts[2], 4, 4);
    const std::string_view time = parts[3];
    if (!day || month == 0 || !year || time.size() != 8 || time[2] != ':' || time[5] != ':')
        return fail();
    const auto hour = number(time.substr(0, 2), 2, 2);
    const auto minute = number(time.substr(3, 2), 2, 2);
    const auto second = number(time.substr(6, 2), 2, 2);
    if (!hour || !minute || !second || *hour > 23 || *minute > 59 || *second > 60)
        return fail();
    if (*day < 1 || *day > days_in_month(*year, month))
        return fail();

    int64_t offset = 0;
    const std::string_view zone = parts[4];
    if (zone != "UTC" && zone != "GMT" && zone != "Z") {
        if (zone.size() != 5 || (zone[0] != '+' && zone[0] != '-'))
            return fail();
        const auto hours = number(zone.substr(1, 2), 2, 2);
        const auto minutes = number(zone.substr(3, 2), 2, 2);
        if (!hours || !minutes || *minutes > 59)
            return fail();
        offset = (*hours * 60 + *minutes) * 60 * (zone[0] == '-' ? -1 : 1);
    }
    const int64_t days = days_from_civil(*year, month, *day);
    return days * 86400 + *hour * 3600 + *minute * 60 + *second - offset;
}

std::string snapshot_timestamp(int64_t seconds) {
    int64_t days = seconds / 86400;
    int64_t rest = seconds % 86400;
    if (rest < 0) {
        rest += 86400;
        --days;
    }
    const Civil civil = civil_from_days(days);
    std::string year = std::to_string(civil.year);
    if (year.size() < 4)
        year.insert(0, 4 - year.size(), '0');
    return year + two_digits(civil.month) + two_digits(civil.day) + "T" + two_digits(rest / 3600) +
           two_digits(rest / 60 % 60) + two_digits(rest % 60) + "Z";
}

}  // namespace rootlock::debian
