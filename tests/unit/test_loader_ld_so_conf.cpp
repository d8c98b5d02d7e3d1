// Tests for ld.so.conf reading and include globbing over in-memory trees, and against the real
// ldconfig's own account (`ldconfig -v -N -X`) of the directories it takes from a conf.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "fs/directory_tree.hpp"
#include "fs/memory_tree.hpp"
#include "loader/ld_so_conf.hpp"
#include "support/temp_dir.hpp"

using namespace rootlock;
using namespace rootlock::loader;
using rootlock::fs::MemoryTree;
using rootlock::testing::TempDir;

namespace {

ConfResult read_ok(const fs::FileTree& tree, std::string_view path = "/etc/ld.so.conf") {
    auto result = read_ld_so_conf(tree, path);
    if (!result.ok())
        FAIL(result.error().text());
    return std::move(result).value();
}

std::string read_error(const fs::FileTree& tree) {
    auto result = read_ld_so_conf(tree);
    REQUIRE_FALSE(result.ok());
    return result.error().text();
}

using Strings = std::vector<std::string>;

}  // namespace

TEST_SUITE("rootlock::loader") {
    TEST_CASE("read_ld_so_conf gives an empty result when the root has no conf") {
        MemoryTree tree;
        tree.add_dir("/etc");
        ConfResult result = read_ok(tree);
        CHECK(result.directories.empty());
        CHECK(result.files_read.empty());
        CHECK(result.warnings.empty());
    }

    TEST_CASE("read_ld_so_conf takes one directory per line, as ldconfig 2.36 does") {
        MemoryTree tree;
        tree.add_file("/etc/ld.so.conf",
                      "# a comment\n"
                      "/usr/local/lib\n"
                      "  /opt/a/   # trailing slash and comment\n"
                      "/opt/b=libc6\n"
                      "/opt/a\n"
                      "/opt/c = libc6\n"
                      "/opt/d /opt/e\n"
                      "/opt/f,/opt/g:/opt/h\n"
                      "/opt/crlf\r\n"
                      "relative/dir\n"
                      "/\n"
                      "\n"
                      "hwcap 0 foo\n"
                      "HWCAP\t1 bar\n"
                      "include\n"
                      "/opt/last");
        ConfResult result = read_ok(tree);
        CHECK(result.directories == Strings{"/usr/local/lib", "/opt/a", "/opt/b", "/opt/c",
                                            "/opt/d /opt/e", "/opt/f,/opt/g:/opt/h", "/opt/crlf",
                                            "/opt/last"});
        REQUIRE(result.sources.size() == result.directories.size());
        CHECK(result.sources[1].from == "/etc/ld.so.conf:3");
        CHECK(result.sources[7].from == "/etc/ld.so.conf:16");
        CHECK(result.files_read == Strings{"/etc/ld.so.conf"});
        CHECK(result.warnings ==
              Strings{"/etc/ld.so.conf:6:  libc6 is not a known library type",
                      "/etc/ld.so.conf:10: relative directory \"relative/dir\" ignored (ld.so "
                      "would take it from its working directory)",
                      "/etc/ld.so.conf:13: hwcap directive ignored",
                      "/etc/ld.so.conf:14: hwcap directive ignored",
                      "/etc/ld.so.conf:15: relative directory \"include\" ignored (ld.so would "
                      "take it from its working directory)"});
    }

    TEST_CASE("read_ld_so_conf expands includes from the including file's directory, sorted") {
        MemoryTree tree;
        tree.add_file("/etc/ld.so.conf",
                      "include conf.d/*.conf\n"
                      "include\t/etc/other/*.conf   /etc/single.conf /etc/none/*.conf\n"
                      "/last\n");
        tree.add_file("/etc/conf.d/b.conf", "/b\n");
        tree.add_file("/etc/conf.d/a.conf", "/a\n/b\n");
        tree.add_file("/etc/conf.d/.hidden.conf", "/hidden\n");
        tree.add_file("/etc/conf.d/z.txt", "/txt\n");
        tree.add_dir("/etc/conf.d/c.conf");
        tree.add_file("/etc/other/x.conf", "include ../nested/*.conf\n");
        tree.add_file("/etc/nested/n.conf", "/n\n");
        tree.add_file("/etc/single.conf", "/s\n");
        ConfResult result = read_ok(tree);
        CHECK(result.directories == Strings{"/a", "/b", "/n", "/s", "/last"});
        CHECK(result.files_read == Strings{"/etc/ld.so.conf", "/etc/conf.d/a.conf",
                                           "/etc/conf.d/b.conf", "/etc/other/x.conf",
                                           "/etc/other/../nested/n.conf", "/etc/single.conf"});
        CHECK(result.warnings == Strings{"/etc/conf.d/c.conf: not a regular file, ignored"});
    }

    TEST_CASE("read_ld_so_conf follows symlinks inside the root and skips missing files") {
        MemoryTree tree;
        tree.add_file("/usr/share/conf/real.conf", "include /etc/ld.so.conf.d/*\n");
        tree.add_symlink("/etc/ld.so.conf", "../usr/share/conf/real.conf");
        tree.add_file("/etc/ld.so.conf.d/1.conf", "/one\n");
        tree.add_symlink("/etc/ld.so.conf.d/2.conf", "/nowhere.conf");
        tree.add_symlink("/etc/ld.so.conf.d/3.conf", "1.conf");
        ConfResult result = read_ok(tree);
        CHECK(result.directories == Strings{"/one"});
        CHECK(result.files_read ==
              Strings{"/etc/ld.so.conf", "/etc/ld.so.conf.d/1.conf", "/etc/ld.so.conf.d/3.conf"});

        MemoryTree dangling;
        dangling.add_symlink("/etc/ld.so.conf", "/missing");
        CHECK(read_ok(dangling).files_read.empty());
    }

    TEST_CASE("read_ld_so_conf reports malformed includes with their file and line") {
        SUBCASE("an include without a pattern") {
            MemoryTree tree;
            tree.add_file("/etc/ld.so.conf", "/a\ninclude \t \n");
            CHECK(read_error(tree) == "/etc/ld.so.conf:2: include without a pattern");
        }
        SUBCASE("an include cycle") {
            MemoryTree tree;
            tree.add_file("/etc/ld.so.conf", "include /etc/ld.so.conf.d/*.conf\n");
            tree.add_file("/etc/ld.so.conf.d/a.conf", "/a\ninclude a.conf\n");
            CHECK(read_error(tree) ==
                  "/etc/ld.so.conf.d/a.conf:2: include cycle: /etc/ld.so.conf -> "
                  "/etc/ld.so.conf.d/a.conf -> /etc/ld.so.conf.d/a.conf");
        }
        SUBCASE("includes nested too deep") {
            MemoryTree tree;
            tree.add_file("/etc/ld.so.conf", "include /c/1.conf\n");
            for (int i = 1; i <= 20; ++i) {
                tree.add_file("/c/" + std::to_string(i) + ".conf",
                              "include " + std::to_string(i + 1) + ".conf\n");
            }
            CHECK(read_error(tree) == "/c/15.conf:1: includes nested deeper than 16 levels");
        }
    }

    TEST_CASE("glob_match follows fnmatch with FNM_PERIOD") {
        struct Row {
            const char* pattern;
            const char* name;
            bool match;
        };
        const Row rows[] = {
            {"*.conf", "a.conf", true},   {"*.conf", ".a.conf", false},
            {".*", ".a", true},           {"\\.*", ".a", true},
            {"a?c", "abc", true},         {"a?c", "ac", false},
            {"[a-c]x", "bx", true},       {"[!a-c]x", "bx", false},
            {"[^a]x", "bx", true},        {"[]]", "]", true},
            {"[[:digit:]]*", "1a", true}, {"[[:alpha:]]", "1", false},
            {"\\*", "*", true},           {"\\*", "a", false},
            {"[ab", "[ab", true},         {"*a*b", "xxaxxb", true},
            {"*a*b", "xxaxxbc", false},   {"x86_64-*.conf", "x86_64-linux-gnu.conf", true},
        };
        for (const auto& row : rows) {
            CAPTURE(row.pattern);
            CAPTURE(row.name);
            CHECK(glob_match(row.pattern, row.name) == row.match);
        }
    }

    TEST_CASE("expand_glob matches directory parts and sorts the whole result") {
        MemoryTree tree;
        tree.add_file("/etc/b/x.conf", "");
        tree.add_file("/etc/a/x.conf", "");
        tree.add_file("/etc/c", "");
        tree.add_symlink("/etc/link", "a");
        CHECK(expand_glob(tree, "/etc/*/x.conf") ==
              Strings{"/etc/a/x.conf", "/etc/b/x.conf", "/etc/link/x.conf"});
        CHECK(expand_glob(tree, "/etc/a/x.conf") == Strings{"/etc/a/x.conf"});
        CHECK(expand_glob(tree, "/etc/a/missing.conf").empty());
        CHECK(expand_glob(tree, "/nowhere/*").empty());
    }

    TEST_CASE("read_ld_so_conf names the directories the real ldconfig takes from a conf") {
        if (::access("/sbin/ldconfig", X_OK) != 0 || ::geteuid() != 0) {
            MESSAGE("needs root and /sbin/ldconfig: the ldconfig referee check is skipped");
            return;
        }
        // Debian's layout (loader.md section 6) plus a relative include and an odd line or two.
        TempDir root;
        root.write_file("etc/ld.so.conf", "include /etc/ld.so.conf.d/*.conf\n/opt/top/\n");
        root.write_file("etc/ld.so.conf.d/libc.conf",
                        "# libc default configuration\n"
                        "/usr/local/lib\n");
        root.write_file("etc/ld.so.conf.d/x86_64-linux-gnu.conf",
                        "# Multiarch support\n/usr/local/lib/x86_64-linux-gnu\n"
                        "/lib/x86_64-linux-gnu\n/usr/lib/x86_64-linux-gnu\n");
        root.write_file("etc/ld.so.conf.d/fakeroot-x86_64-linux-gnu.conf",
                        "/usr/lib/x86_64-linux-gnu/libfakeroot\n");
        root.write_file("etc/ld.so.conf.d/zz-extra.conf", "include more/*.conf\n/opt/z=libc6\n");
        root.write_file("etc/ld.so.conf.d/more/m.conf", "/opt/m\n");
        for (const char* dir : {"usr/local/lib/x86_64-linux-gnu", "lib/x86_64-linux-gnu",
                                "usr/lib/x86_64-linux-gnu/libfakeroot", "opt/top", "opt/z", "opt/m",
                                "lib", "usr/lib"}) {
            root.make_dirs(dir);
        }
        std::string command = "/sbin/ldconfig -r '" + root.path() + "' -v -N -X 2>/dev/null";
        FILE* pipe = ::popen(command.c_str(), "r");
        REQUIRE(pipe != nullptr);
        std::string output;
        char buffer[4096];
        for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;)
            output.append(buffer, n);
        ::pclose(pipe);

        // "DIR: (from FILE:LINE)" for each directory ldconfig scans, built-in ones last.
        Strings real_directories;
        Strings real_sources;
        std::istringstream lines(output);
        for (std::string line; std::getline(lines, line);) {
            size_t colon = line.find(": ");
            size_t from = line.rfind("(from ");
            if (!line.starts_with("/") || colon == std::string::npos || from == std::string::npos ||
                !line.ends_with(")")) {
                continue;
            }
            std::string source = line.substr(from + 6, line.size() - from - 7);
            if (source == "<builtin>:0")
                continue;
            real_directories.push_back(line.substr(0, colon));
            real_sources.push_back(source);
        }
        auto tree = fs::DirectoryTree::create(root.path());
        REQUIRE(tree.ok());
        ConfResult result = read_ok(**tree);
        CHECK(result.directories == real_directories);
        Strings sources;
        for (const auto& source : result.sources)
            sources.push_back(source.from);
        CHECK(sources == real_sources);
    }
}
