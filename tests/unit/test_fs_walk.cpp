// Tests for walk(): depth-first, bytewise-sorted, directories before their contents, directory
// symlinks reported but never entered, the start resolved first.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "fs/memory_tree.hpp"
#include "fs/walk.hpp"

using namespace rootlock::fs;

namespace {

std::vector<std::string> walked(const FileTree& tree, std::string_view start) {
    std::vector<std::string> paths;
    walk(tree, start, [&](const std::string& path, const NodeStat&) { paths.push_back(path); });
    return paths;
}

}  // namespace

TEST_SUITE("rootlock::fs") {
    TEST_CASE("walk visits every entry depth first in sorted order") {
        MemoryTree tree;
        tree.add_file("/usr/lib/b.so", "");
        tree.add_file("/usr/lib/a/z.so", "");
        tree.add_file("/usr/lib/B.so", "");
        tree.add_file("/usr/bin/python3", "");
        tree.add_symlink("/lib", "usr/lib");
        tree.add_symlink("/usr/lib/loop", "..");
        CHECK(walked(tree, "/") ==
              std::vector<std::string>{"/lib", "/usr", "/usr/bin", "/usr/bin/python3", "/usr/lib",
                                       "/usr/lib/B.so", "/usr/lib/a", "/usr/lib/a/z.so",
                                       "/usr/lib/b.so", "/usr/lib/loop"});
    }

    TEST_CASE("walk resolves the start first") {
        MemoryTree tree;
        tree.add_file("/usr/lib/x.so", "");
        tree.add_symlink("/lib", "usr/lib");
        CHECK(walked(tree, "/lib") == std::vector<std::string>{"/usr/lib/x.so"});
        CHECK(walked(tree, "/lib/x.so") == std::vector<std::string>{"/usr/lib/x.so"});
        CHECK(walked(tree, "/missing").empty());
    }

    TEST_CASE("walk passes each entry's own metadata") {
        MemoryTree tree;
        tree.add_file("/d/f", "abc");
        tree.add_symlink("/d/l", "f");
        std::vector<NodeKind> kinds;
        walk(tree, "/d",
             [&](const std::string&, const NodeStat& stat) { kinds.push_back(stat.kind); });
        CHECK(kinds == std::vector<NodeKind>{NodeKind::regular, NodeKind::symlink});
    }
}
