// A test-only zip writer: stored (uncompressed) members with Unix modes, plus hooks that make the
// archive lie (a declared size smaller than the data), for the wheel scanner's malformed table.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rootlock::testing {

inline constexpr uint32_t k_zip_file_mode = 0100644;
inline constexpr uint32_t k_zip_executable_mode = 0100755;
inline constexpr uint32_t k_zip_dir_mode = 040755;
inline constexpr uint32_t k_zip_symlink_mode = 0120777;

struct ZipMember {
    std::string name;                      // as stored; a directory ends with "/"
    std::string content;                   // a symlink's target text for k_zip_symlink_mode
    uint32_t unix_mode = k_zip_file_mode;  // st_mode with the type bits, "made by" Unix
    // The uncompressed size the headers declare, when it should differ from content.size().
    std::optional<uint32_t> declared_size;
};

// The bytes of a zip archive holding `members` in order (no zip64, no data descriptors).
std::string build_zip(const std::vector<ZipMember>& members);

// build_zip written to `host_path`; throws std::runtime_error when the file cannot be written.
void write_zip(const std::string& host_path, const std::vector<ZipMember>& members);

// `members` deflated by libarchive's zip writer, as real wheels are (declared_size is ignored);
// throws std::runtime_error with libarchive's message on failure.
void write_deflated_zip(const std::string& host_path, const std::vector<ZipMember>& members);

}  // namespace rootlock::testing
