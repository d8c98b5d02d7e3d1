// TempDir: a fresh directory for one test, removed with everything in it when the test ends, plus
// small helpers to populate it (files, directories, symlinks) without repeating error handling.
#pragma once

#include <string>
#include <string_view>

namespace rootlock::testing {

class TempDir {
  public:
    // Creates $TMPDIR/rootlock-test-XXXXXX (or under /tmp); throws std::runtime_error on failure.
    TempDir();
    ~TempDir();
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;

    // The directory's host path, without a trailing slash.
    const std::string& path() const { return m_path; }
    // path() + "/" + relative.
    std::string operator/(std::string_view relative) const;

    // Writes `content` at `relative`, creating parent directories; returns the host path.
    std::string write_file(std::string_view relative, std::string_view content) const;
    // Creates the directory `relative` and its parents; returns the host path.
    std::string make_dirs(std::string_view relative) const;
    // Creates a symlink at `relative` (parents created) whose text is `target`, verbatim.
    std::string make_symlink(std::string_view relative, std::string_view target) const;

  private:
    std::string m_path;
};

}  // namespace rootlock::testing
