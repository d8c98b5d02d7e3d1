// A mutex and a vector: damage is rare, and a run finds a handful at most.
#include "util/cache_damage.hpp"

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

}  // namespace rootlock::util
