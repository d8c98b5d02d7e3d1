// What every subcommand shares: exit codes, opening --root as a directory or a tarball, and
// terminal styling (colour only on a TTY and never under NO_COLOR).
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "fs/file_tree.hpp"
#include "util/result.hpp"

namespace rootlock::cli {

inline constexpr int k_exit_ok = 0;
inline constexpr int k_exit_problems = 1;
inline constexpr int k_exit_usage = 2;
inline constexpr int k_exit_io = 3;

// The cache entries found damaged so far (util/cache_damage), one warning line each on stderr:
// before a failure's line (fail_usage, fail_io), or when the command ends (main).
void print_cache_damage();

// A usage or input error: one line on stderr, exit 2.
int fail_usage(const std::string& message);
// An I/O failure: one line on stderr, exit 3.
int fail_io(const std::string& message);

// An error by its kind: bad input exits 2; the network, the disk or bytes that failed their
// digest (util::exits_as_io) exit 3.
int fail_with(const util::Error& error);

// "1.5 GiB", "3.2 MiB", "0.4 KiB": sizes in progress lines and summaries.
std::string human_size(uint64_t bytes);

// Opens `root` (a directory, a rootfs tarball or an OCI image, read without extracting it;
// see image_input.hpp).
util::Result<std::unique_ptr<fs::FileTree>> open_root(const std::string& root);

// The download cache: $ROOTLOCK_CACHE_DIR, else $XDG_CACHE_HOME/rootlock, else
// ~/.cache/rootlock (lock and build share it).
std::string default_cache_dir();

// Where `lock` writes a recipe's lock, and `build RECIPE` looks for it:
// "lockfiles/pylock.<name>.toml".
std::string default_lock_path(std::string_view image_name);

// The lock of one architecture of a recipe that names several: "-ARCH" before a trailing
// ".toml" ("x/pylock.demo.toml" -> "x/pylock.demo-arm64.toml"), else at the end.
std::string lock_path_for_architecture(std::string_view path, std::string_view architecture);

// "x86-64-v3,x86-64-v2" (or colon-separated) as a list, empty items dropped.
std::vector<std::string> split_list(std::string_view text);

class Style {
  public:
    explicit Style(FILE* stream);
    std::string bold(std::string_view text) const;
    std::string red(std::string_view text) const;
    std::string yellow(std::string_view text) const;
    std::string green(std::string_view text) const;
    std::string dim(std::string_view text) const;
    bool colour() const { return m_colour; }

  private:
    std::string wrap(std::string_view code, std::string_view text) const;
    bool m_colour;
};

}  // namespace rootlock::cli
