// TempDir: mkdtemp on creation, std::filesystem::remove_all on destruction (symlinks are removed,
// never followed), so tests leave nothing behind even when an assertion fails.
#include "support/temp_dir.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <vector>

namespace rootlock::testing {

namespace {

void create_parents(const std::filesystem::path& path) {
    std::filesystem::create_directories(path.parent_path());
}

}  // namespace

TempDir::TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = (base != nullptr && *base != '\0') ? base : "/tmp";
    pattern += "/rootlock-test-XXXXXX";
    std::vector<char> buffer(pattern.begin(), pattern.end());
    buffer.push_back('\0');
    if (::mkdtemp(buffer.data()) == nullptr) {
        throw std::runtime_error("TempDir: cannot create " + pattern);
    }
    m_path = buffer.data();
}

TempDir::~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(m_path, ignored);
}

std::string TempDir::operator/(std::string_view relative) const {
    std::string out = m_path;
    if (!relative.empty() && relative.front() != '/')
        out += '/';
    out += relative;
    return out;
}

std::string TempDir::write_file(std::string_view relative, std::string_view content) const {
    std::string host = *this / relative;
    create_parents(host);
    std::ofstream out(host, std::ios::binary | std::ios::trunc);
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    if (!out)
        throw std::runtime_error("TempDir: cannot write " + host);
    return host;
}

std::string TempDir::make_dirs(std::string_view relative) const {
    std::string host = *this / relative;
    std::filesystem::create_directories(host);
    return host;
}

std::string TempDir::make_symlink(std::string_view relative, std::string_view target) const {
    std::string host = *this / relative;
    create_parents(host);
    std::filesystem::create_symlink(std::string(target), host);
    return host;
}

}  // namespace rootlock::testing
