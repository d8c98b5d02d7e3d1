// walk(): every entry of a tree under a starting path, depth first in sorted order, for checks
// that must see all ELF objects (and for listings that must be byte-stable between runs).
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "fs/file_tree.hpp"

namespace rootlock::fs {

using WalkVisitor = std::function<void(const std::string& path, const NodeStat& stat)>;

// Resolves `start` first (walking "/lib" on a merged-/usr root walks "/usr/lib"), then visits
// every entry below it with its canonical path, a directory before its contents, names in
// bytewise order. Directory symlinks are reported but never entered, nor are /proc, /sys and
// /dev (a live root's kernel filesystems) unless they are `start` itself. A `start` that is not
// a directory is visited alone; one that does not resolve visits nothing. Unreadable
// directories are skipped.
void walk(const FileTree& tree, std::string_view start, const WalkVisitor& visit);

}  // namespace rootlock::fs
