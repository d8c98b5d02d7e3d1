// Writing a file so that its final name only ever holds complete content: the bytes go to a
// temporary file beside it, are synced, and the temporary file is renamed over the target.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "util/result.hpp"

namespace rootlock::util {

// Writes `bytes` to `path` atomically (mode 0644, parent directories created). An interrupted
// write leaves at most a ".BASE.tmp-PID-*" file beside the target, never a partial target.
Status write_file_atomically(const std::string& path, std::string_view bytes);

// A file written whole and synced under a temporary name beside its target, put in place only
// by commit(): so several files can be written first (where a full disk fails) and renamed
// together after (where nothing does), as an image and the files beside it are. The destructor
// removes a temporary that was not committed.
class StagedFile {
  public:
    // Errors are ErrorKind::io, "PATH: strerror", with nothing left behind.
    static Result<StagedFile> stage(const std::string& path, std::string_view bytes);
    StagedFile(StagedFile&& other) noexcept;
    StagedFile& operator=(StagedFile&& other) noexcept;
    StagedFile(const StagedFile&) = delete;
    StagedFile& operator=(const StagedFile&) = delete;
    ~StagedFile();

    // Renames the temporary over the target, then syncs the directory; once.
    Status commit();
    const std::string& path() const { return m_path; }

  private:
    StagedFile() = default;
    void abandon();

    std::string m_path;
    std::string m_temporary;  // empty once committed or abandoned
};

// The whole content of a host file; errors read "PATH: strerror".
Result<std::string> read_host_file(const std::string& path);

// At most the first `limit` bytes of a host file (magic numbers, headers).
Result<std::string> read_host_file_prefix(const std::string& path, size_t limit);

// The size of a host file; errors read "PATH: strerror".
Result<uint64_t> read_host_file_size(const std::string& path);

// Creates `path` and its parents (mode 0755); existing directories are fine.
Status make_directories(const std::string& path);

}  // namespace rootlock::util
