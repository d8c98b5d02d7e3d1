// run_packaging_referee(): the one place tests look for a python with packaging; see the header.
#include "support/packaging_referee.hpp"

#include <glob.h>
#include <string.h>  // strverscmp (GNU)
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace rootlock::testing {

namespace {
std::vector<std::string> python_candidates() {
    std::vector<std::string> out;
    glob_t found{};
    if (::glob("/root/.pyenv/versions/*/bin/python3", 0, nullptr, &found) == 0) {
        for (size_t i = 0; i < found.gl_pathc; ++i)
            out.emplace_back(found.gl_pathv[i]);
    }
    ::globfree(&found);
    std::sort(out.begin(), out.end(), [](const std::string& a, const std::string& b) {
        return ::strverscmp(a.c_str(), b.c_str()) > 0;
    });
    for (const char* fixed : {"/usr/bin/python3", "/usr/local/bin/python3"})
        out.emplace_back(fixed);
    return out;
}
}  // namespace

int packaging_major(const std::string& output) {
    return output.rfind("P ", 0) == 0 ? std::atoi(output.c_str() + 2) : 0;
}

std::string run_packaging_referee(const std::string& script, const std::string& corpus) {
    std::string fallback;
    for (const std::string& python : python_candidates()) {
        if (::access(python.c_str(), X_OK) != 0)
            continue;
        const std::string command = python + " " + script + " " + corpus + " 2>/dev/null";
        FILE* pipe = ::popen(command.c_str(), "r");
        if (pipe == nullptr)
            continue;
        std::string output;
        char buffer[4096];
        size_t n = 0;
        while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0)
            output.append(buffer, n);
        if (::pclose(pipe) != 0 || packaging_major(output) == 0)
            continue;
        if (packaging_major(output) >= 22)
            return output;
        if (fallback.empty())
            fallback = std::move(output);
    }
    return fallback;
}

}  // namespace rootlock::testing
