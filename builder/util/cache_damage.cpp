// A mutex and a vector: damage is rare, and a run finds a handful at most.
#include "util/cache_damage.hpp"

#include <unistd.h>

#include <mutex>

namespace rootlock::util {

namespace {

std::mutex g_mutex;
std::vector<std::string> g_lines;

}  // namespace

void report_cache_damage(std::string line) {
    std::lock_guard lock(g_mutex);
    g_lines.push_back(std::move(line));
}

std::vector<std::string> take_cache_damage() {
    std::lock_guard lock(g_mutex);
    std::vector<std::string> lines;
    lines.swap(g_lines);
    return lines;
}

std::optional<Error> discard_damaged(const std::string& path, const std::string& what, bool offline,
                                     const std::string& again,
                                     const std::vector<std::string>& also) {
    if (offline)
        return make_integrity_error(
            path, what + " (--offline: remove it, or run without --offline to " + again + ")");
    ::unlink(path.c_str());
    for (const auto& companion : also)
        ::unlink(companion.c_str());
    report_cache_damage(path + ": " + what + "; removed, to " + again);
    return std::nullopt;
}

}  // namespace rootlock::util
