// Tests for path_resolve: lexical helpers and chroot-style resolution over a MemoryTree
// (relative, absolute and chained links, ".." clamping, the 40-hop limit, escapes refused).
#include <doctest/doctest.h>

#include <atomic>
#include <string>

#include "fs/memory_tree.hpp"
#include "fs/path_resolve.hpp"

using namespace rootlock::fs;

namespace {

std::string resolved_path(const FileTree& tree, std::string_view path, bool follow_last = true) {
    auto resolved = resolve(tree, path, follow_last);
    return resolved ? resolved->path : "<none>";
}

// A Debian 12 style merged-/usr root with the loader and libc.
void add_merged_usr(MemoryTree& tree) {
    tree.add_dir("/usr/lib/x86_64-linux-gnu");
    tree.add_dir("/usr/lib64");
    tree.add_symlink("/lib", "usr/lib");
    tree.add_symlink("/lib64", "usr/lib64");
    tree.add_file("/usr/lib/x86_64-linux-gnu/libc.so.6", "libc");
    tree.add_symlink("/usr/lib64/ld-linux-x86-64.so.2",
                     "/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2");
    tree.add_file("/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", "ld.so");
}

// A tree that counts the lookups made through it (what a memo is there to spare).
class CountingTree final : public FileTree {
  public:
    explicit CountingTree(const FileTree& base) : m_base(base) {}
    std::string describe() const override { return m_base.describe(); }
    std::optional<NodeStat> lstat(std::string_view path) const override {
        ++lookups;
        return m_base.lstat(path);
    }
    rootlock::util::Result<std::string> readlink(std::string_view path) const override {
        ++lookups;
        return m_base.readlink(path);
    }
    rootlock::util::Result<std::vector<DirEntry>> list(std::string_view path) const override {
        return m_base.list(path);
    }
    rootlock::util::Result<std::string> read_file(std::string_view path,
                                                  uint64_t max_size) const override {
        return m_base.read_file(path, max_size);
    }
    mutable std::atomic<int> lookups{0};

  protected:
    // Resolution never opens a file.
    rootlock::util::Result<std::unique_ptr<rootlock::util::ByteSource>> open(
        std::string_view path) const override {
        return rootlock::util::make_error(std::string(path), "not opened in this test");
    }

  private:
    const FileTree& m_base;
};

}  // namespace

TEST_SUITE("rootlock::fs") {
    TEST_CASE("normalize collapses slashes and dots and clamps .. at the root") {
        CHECK(normalize("") == "/");
        CHECK(normalize("/") == "/");
        CHECK(normalize("//usr///lib/") == "/usr/lib");
        CHECK(normalize("/usr/./lib/.") == "/usr/lib");
        CHECK(normalize("/usr/lib/../bin") == "/usr/bin");
        CHECK(normalize("/../../etc/passwd") == "/etc/passwd");
        CHECK(normalize("a/b/../c") == "/a/c");
        CHECK(normalize("./x") == "/x");
    }

    TEST_CASE("dirname basename and join work on root-absolute paths") {
        CHECK(dirname("/usr/lib/libc.so.6") == "/usr/lib");
        CHECK(dirname("/usr") == "/");
        CHECK(dirname("/") == "/");
        // Qualified: wherever <string.h> is in (fmt brings it), glibc's basename(const char*)
        // is the better match for a literal than ours, and answers "" for "/usr/lib/".
        CHECK(rootlock::fs::basename("/usr/lib/libc.so.6") == "libc.so.6");
        CHECK(rootlock::fs::basename("/usr/lib/") == "lib");
        CHECK(rootlock::fs::basename("/") == "");
        CHECK(join("/usr/lib", "libc.so.6") == "/usr/lib/libc.so.6");
        CHECK(join("/", "etc") == "/etc");
        CHECK(join("/usr/lib", "../bin") == "/usr/bin");
        CHECK(join("/usr/lib", "/etc/ld.so.cache") == "/etc/ld.so.cache");
    }

    TEST_CASE("symlink_escapes flags relative targets that climb above the root") {
        CHECK(symlink_escapes("/a/l", "../../etc"));
        CHECK(symlink_escapes("/l", "../x"));
        CHECK(symlink_escapes("/a/b/l", "x/../../../../y"));
        CHECK_FALSE(symlink_escapes("/a/l", "../etc"));
        CHECK_FALSE(symlink_escapes("/a/b/l", "../../etc"));
        CHECK_FALSE(symlink_escapes("/a/l", "/../../etc"));
        CHECK_FALSE(symlink_escapes("/usr/lib/x86_64-linux-gnu/libz.so", "libz.so.1.2.13"));
        CHECK_FALSE(symlink_escapes("/a/l", "./b/../c"));
    }

    TEST_CASE("resolve follows relative and absolute symlinks inside the root") {
        MemoryTree tree;
        add_merged_usr(tree);
        CHECK(resolved_path(tree, "/lib/x86_64-linux-gnu/libc.so.6") ==
              "/usr/lib/x86_64-linux-gnu/libc.so.6");
        // /lib64 -> usr/lib64, then an absolute target restarting at the tree's root.
        auto loader = resolve(tree, "/lib64/ld-linux-x86-64.so.2");
        REQUIRE(loader);
        CHECK(loader->path == "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2");
        CHECK(loader->stat.kind == NodeKind::regular);
        CHECK(loader->stat.size == 5);
    }

    TEST_CASE("resolve leaves the last symlink alone when follow_last is off") {
        MemoryTree tree;
        add_merged_usr(tree);
        auto link = resolve(tree, "/lib64/ld-linux-x86-64.so.2", false);
        REQUIRE(link);
        CHECK(link->path == "/usr/lib64/ld-linux-x86-64.so.2");
        CHECK(link->stat.kind == NodeKind::symlink);
        CHECK(resolved_path(tree, "/lib", false) == "/lib");
        CHECK(resolved_path(tree, "/lib/", false) == "/usr/lib");
    }

    TEST_CASE("resolve follows chained symlinks") {
        MemoryTree tree;
        tree.add_file("/usr/lib/libz.so.1.2.13", "z");
        tree.add_symlink("/usr/lib/libz.so.1", "libz.so.1.2.13");
        tree.add_symlink("/usr/lib/libz.so", "libz.so.1");
        tree.add_symlink("/opt/z", "/usr/lib/libz.so");
        CHECK(resolved_path(tree, "/opt/z") == "/usr/lib/libz.so.1.2.13");
    }

    TEST_CASE("resolve clamps .. at the root as a chroot does") {
        MemoryTree tree;
        tree.add_file("/etc/passwd", "root");
        CHECK(resolved_path(tree, "/../../../etc/passwd") == "/etc/passwd");
        CHECK(resolved_path(tree, "/..") == "/");
        CHECK(resolved_path(tree, "/") == "/");
        CHECK(resolve(tree, "/")->stat.kind == NodeKind::directory);
        // An absolute link target climbing with .. stays inside too.
        tree.add_symlink("/a/l", "/../../etc");
        CHECK(resolved_path(tree, "/a/l/passwd") == "/etc/passwd");
    }

    TEST_CASE("resolve takes .. after a directory symlink from the link's target") {
        MemoryTree tree;
        tree.add_dir("/x/y");
        tree.add_file("/x/f", "f");
        tree.add_symlink("/a/l", "/x/y");
        CHECK(resolved_path(tree, "/a/l/../f") == "/x/f");
    }

    TEST_CASE("resolve gives nothing for missing components and files used as directories") {
        MemoryTree tree;
        tree.add_file("/etc/passwd", "root");
        CHECK_FALSE(resolve(tree, "/etc/shadow"));
        CHECK_FALSE(resolve(tree, "/nope/passwd"));
        CHECK_FALSE(resolve(tree, "/etc/passwd/x"));
        CHECK_FALSE(resolve(tree, "/etc/passwd/"));
        CHECK_FALSE(resolve(tree, "/etc/passwd/.."));
        tree.add_symlink("/dangling", "/nowhere");
        CHECK_FALSE(resolve(tree, "/dangling"));
        CHECK(resolved_path(tree, "/dangling", false) == "/dangling");
    }

    TEST_CASE("resolve stops symlink loops") {
        MemoryTree tree;
        tree.add_symlink("/a", "b");
        tree.add_symlink("/b", "a");
        tree.add_symlink("/self", "self");
        CHECK_FALSE(resolve(tree, "/a"));
        CHECK_FALSE(resolve(tree, "/self/x"));
    }

    TEST_CASE("resolve follows at most 40 symlinks") {
        MemoryTree tree;
        tree.add_file("/target", "t");
        // /l0 -> /l1 -> ... -> /l39 -> /target is 40 hops; /lx -> /l0 makes 41.
        for (int i = 0; i < 40; ++i) {
            std::string next = i == 39 ? "target" : "l" + std::to_string(i + 1);
            tree.add_symlink("/l" + std::to_string(i), next);
        }
        tree.add_symlink("/lx", "l0");
        CHECK(resolved_path(tree, "/l0") == "/target");
        CHECK_FALSE(resolve(tree, "/lx"));
        Resolver resolver(tree);
        CHECK(resolver.resolve("/l0")->path == "/target");
        CHECK_FALSE(resolver.resolve("/lx"));
    }

    TEST_CASE("resolve refuses symlinks whose relative target escapes the root") {
        MemoryTree tree;
        tree.add_file("/etc/passwd", "root");
        tree.add_symlink("/a/evil", "../../etc/passwd");
        tree.add_symlink("/a/fine", "../etc/passwd");
        CHECK_FALSE(resolve(tree, "/a/evil"));
        CHECK(resolved_path(tree, "/a/evil", false) == "/a/evil");
        CHECK(resolved_path(tree, "/a/fine") == "/etc/passwd");
    }

    TEST_CASE("Resolver answers like resolve and reuses resolved directories") {
        MemoryTree tree;
        add_merged_usr(tree);
        Resolver resolver(tree);
        for (const char* path : {"/lib/x86_64-linux-gnu/libc.so.6", "/lib/x86_64-linux-gnu/nope",
                                 "/lib64/ld-linux-x86-64.so.2", "/lib/../etc", "/lib/", "/",
                                 "lib/x86_64-linux-gnu/./libc.so.6", "/lib/x86_64-linux-gnu/.."}) {
            CAPTURE(path);
            auto expected = resolve(tree, path);
            auto got = resolver.resolve(path);
            REQUIRE(expected.has_value() == got.has_value());
            if (expected)
                CHECK(expected->path == got->path);
        }
        // The memo is keyed by spelling: removing the directory afterwards is not seen, which is
        // fine because trees are read-only while a Resolver lives.
        CHECK(resolver.resolve("/lib/x86_64-linux-gnu/libc.so.6")->path ==
              "/usr/lib/x86_64-linux-gnu/libc.so.6");
    }

    TEST_CASE("Resolver resolves a path once and a new directory from its parent's answer") {
        MemoryTree base;
        add_merged_usr(base);
        base.add_dir("/usr/lib/x86_64-linux-gnu/perl/5.36/auto/POSIX");
        base.add_file("/usr/lib/x86_64-linux-gnu/perl/5.36/auto/POSIX/POSIX.so", "xs");
        const CountingTree tree(base);
        Resolver resolver(tree);
        // The interpreter every program names: /lib64 and the loader's link are followed once.
        const auto loader = resolver.resolve("/lib64/ld-linux-x86-64.so.2");
        REQUIRE(loader);
        CHECK(loader->path == "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2");
        const int first = tree.lookups;
        CHECK(first > 4);
        for (int i = 0; i < 3; ++i)
            CHECK(resolver.resolve("/lib64/ld-linux-x86-64.so.2")->path == loader->path);
        CHECK(tree.lookups == first);
        // A missing path is remembered as missing too.
        CHECK_FALSE(resolver.resolve("/lib/x86_64-linux-gnu/libnope.so.1"));
        const int after_miss = tree.lookups;
        CHECK_FALSE(resolver.resolve("/lib/x86_64-linux-gnu/libnope.so.1"));
        CHECK(tree.lookups == after_miss);
        // Four directories below one already resolved: one lookup each, then the file.
        const std::string deep = "/lib/x86_64-linux-gnu/perl/5.36/auto/POSIX/POSIX.so";
        const int before = tree.lookups;
        CHECK(resolver.resolve(deep)->path ==
              "/usr/lib/x86_64-linux-gnu/perl/5.36/auto/POSIX/POSIX.so");
        CHECK(tree.lookups - before == 5);
        // follow_last is part of the question.
        CHECK(resolver.resolve("/lib64/ld-linux-x86-64.so.2", false)->path ==
              "/usr/lib64/ld-linux-x86-64.so.2");
        CHECK(resolver.resolve("/lib64/ld-linux-x86-64.so.2", true)->path == loader->path);
    }
}
