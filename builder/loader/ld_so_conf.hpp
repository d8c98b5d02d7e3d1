// ld.so.conf as glibc 2.36's ldconfig reads it: one directory per line, sorted `include` globs
// relative to the including file, all inside a FileTree, to predict the cache ldconfig builds.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "fs/file_tree.hpp"
#include "util/result.hpp"

namespace rootlock::loader {

// ldconfig recurses without a limit (a cycle overflows its stack); rootlock stops here.
inline constexpr int k_max_include_depth = 16;

struct ConfDirectory {
    std::string path;  // as written, trailing whitespace and slashes removed
    std::string from;  // "FILE:LINE" of the line that named it
};

struct ConfResult {
    // In order, a directory named twice kept where it first appeared. ldconfig itself removes
    // duplicates by inode when it scans (simulate_ldconfig does that).
    std::vector<std::string> directories;
    std::vector<ConfDirectory> sources;   // parallel to `directories`
    std::vector<std::string> files_read;  // every file parsed, in reading order
    std::vector<std::string> warnings;    // "FILE:LINE: problem", lines ldconfig ignores
};

// Reads `conf_path` and every file it includes. A missing conf gives an empty result. A line is
// one directory, "DIR=TYPE" included (the type is dropped; ldconfig 2.36 does not split a line on
// blanks, commas or colons); "include PATTERN..." reads the matches of each pattern in sorted
// order; "hwcap ..." lines and relative directories are ignored with a warning. Errors:
// "FILE:LINE: problem" for an include with no pattern, an include cycle or nesting deeper than
// k_max_include_depth.
util::Result<ConfResult> read_ld_so_conf(const fs::FileTree& tree,
                                         std::string_view conf_path = "/etc/ld.so.conf");

// fnmatch(pattern, name, FNM_PERIOD) for one path component: *, ?, [...] with ranges, "!" or "^"
// negation and [:class:] names, backslash escapes; a leading dot must be matched literally.
bool glob_match(std::string_view pattern, std::string_view name);

// glob(pattern, 0, ...) inside `tree`: the paths (spelled from the pattern, symlinks in directory
// parts followed inside the root) that match, sorted bytewise. A pattern without wildcards is
// returned as it is when something exists there.
std::vector<std::string> expand_glob(const fs::FileTree& tree, std::string_view pattern);

}  // namespace rootlock::loader
