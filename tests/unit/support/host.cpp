// Host helpers for unit tests; see host.hpp.
#include "support/host.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <system_error>

namespace rootlock::testing {

std::string read_host_text(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::pair<std::string, int> run_shell(const std::string& command) {
    std::string output;
    FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
    if (pipe == nullptr)
        return {"popen failed", -1};
    char buffer[4096];
    size_t count = 0;
    while ((count = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0)
        output.append(buffer, count);
    return {output, ::pclose(pipe)};
}

bool have_tool(const std::string& tool) {
    return run_shell("command -v " + tool).second == 0;
}

size_t files_under(const std::string& folder) {
    size_t count = 0;
    std::error_code error;
    for (const auto& item : std::filesystem::recursive_directory_iterator(folder, error))
        if (item.is_regular_file())
            ++count;
    return count;
}

std::string pseudo_text(size_t size, uint32_t seed) {
    std::string text(size, ' ');
    uint32_t state = seed;
    for (char& c : text) {
        state = state * 1103515245U + 12345U;
        c = "abcdefgh \n"[(state >> 16) % 10];
    }
    return text;
}

}  // namespace rootlock::testing
