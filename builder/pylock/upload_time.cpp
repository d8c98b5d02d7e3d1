// PEP 751's upload-time as seconds since the epoch; see pylock.hpp.
#include <cstdio>
#include <ctime>

#include "pylock/pylock.hpp"

namespace rootlock::pylock {

std::optional<uint64_t> upload_time_seconds(const std::string& text) {
    std::tm parts{};
    int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
    if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d", &year, &month, &day, &hour, &minute,
                    &second) != 6)
        return std::nullopt;
    parts.tm_year = year - 1900;
    parts.tm_mon = month - 1;
    parts.tm_mday = day;
    parts.tm_hour = hour;
    parts.tm_min = minute;
    parts.tm_sec = second;
    const time_t seconds = timegm(&parts);
    if (seconds < 0)
        return std::nullopt;
    return static_cast<uint64_t>(seconds);
}

}  // namespace rootlock::pylock
