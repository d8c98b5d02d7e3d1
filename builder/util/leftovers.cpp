// Leftovers of dead runs, found by the PID in their names; see leftovers.hpp.
#include "util/leftovers.hpp"

#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <memory>

namespace rootlock::util {

bool process_gone(long pid) {
    if (pid <= 0)
        return false;
    return ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
}

size_t remove_dead_leftovers(const std::string& dir, std::string_view prefix) {
    std::unique_ptr<DIR, int (*)(DIR*)> handle(::opendir(dir.c_str()), ::closedir);
    if (!handle)
        return 0;
    size_t removed = 0;
    while (const dirent* entry = ::readdir(handle.get())) {
        const std::string_view name(entry->d_name);
        if (!name.starts_with(prefix))
            continue;
        const std::string_view rest = name.substr(prefix.size());
        long pid = 0;
        auto [end, error] = std::from_chars(rest.data(), rest.data() + rest.size(), pid);
        if (error != std::errc() || end == rest.data() ||
            (end != rest.data() + rest.size() && *end != '-' && *end != '.'))
            continue;
        const std::string path = dir + "/" + std::string(name);
        struct stat info {};
        if (::lstat(path.c_str(), &info) != 0 || !S_ISREG(info.st_mode) || !process_gone(pid))
            continue;
        if (::unlink(path.c_str()) == 0)
            ++removed;
    }
    return removed;
}

}  // namespace rootlock::util
