// Tests for MemoryTree: implicit parents, hard links sharing identity, removal of whole
// subtrees, bytewise listing order and the exact error texts every tree shares.
#include <doctest/doctest.h>

#include <stdexcept>

#include "fs/memory_tree.hpp"

using namespace rootlock::fs;

TEST_SUITE("rootlock::fs") {
    TEST_CASE("MemoryTree creates parent directories implicitly") {
        MemoryTree tree;
        tree.add_file("/usr/lib/libz.so.1", "zzz", 0755);
        auto dir = tree.lstat("/usr/lib");
        REQUIRE(dir);
        CHECK(dir->kind == NodeKind::directory);
        auto file = tree.lstat("/usr/lib/libz.so.1");
        REQUIRE(file);
        CHECK(file->kind == NodeKind::regular);
        CHECK(file->size == 3);
        CHECK(file->mode == 0755);
        CHECK(tree.read_file("/usr/lib/libz.so.1").value() == "zzz");
        CHECK(tree.lstat("/")->kind == NodeKind::directory);
    }

    TEST_CASE("MemoryTree places new entries through symlinked parents") {
        MemoryTree tree;
        tree.add_symlink("/lib", "usr/lib");
        tree.add_file("/lib/libc.so.6", "c");
        CHECK(tree.lstat("/usr/lib/libc.so.6"));
        CHECK(tree.lstat("/lib")->kind == NodeKind::symlink);
        CHECK_THROWS_AS(tree.add_file("/usr/lib/libc.so.6/x", "x"), std::invalid_argument);
    }

    TEST_CASE("MemoryTree hard links share identity and content") {
        MemoryTree tree;
        tree.add_file("/a", "same");
        tree.add_hardlink("/b", "/a");
        tree.add_file("/c", "same");
        CHECK(tree.lstat("/a")->identity == tree.lstat("/b")->identity);
        CHECK(tree.lstat("/a")->identity != tree.lstat("/c")->identity);
        CHECK(tree.read_file("/b").value() == "same");
        CHECK_THROWS_AS(tree.add_hardlink("/d", "/missing"), std::invalid_argument);
    }

    TEST_CASE("MemoryTree lists children sorted bytewise") {
        MemoryTree tree;
        tree.add_file("/d/b", "");
        tree.add_file("/d/B", "");
        tree.add_file("/d/\xc3\xa9", "");
        tree.add_dir("/d/a");
        tree.add_symlink("/d/l", "b");
        auto entries = tree.list("/d");
        REQUIRE(entries.ok());
        REQUIRE(entries->size() == 5);
        CHECK((*entries)[0].name == "B");
        CHECK((*entries)[1].name == "a");
        CHECK((*entries)[1].kind == NodeKind::directory);
        CHECK((*entries)[2].name == "b");
        CHECK((*entries)[3].name == "l");
        CHECK((*entries)[3].kind == NodeKind::symlink);
        CHECK((*entries)[4].name == "\xc3\xa9");
    }

    TEST_CASE("MemoryTree remove drops a directory with everything below it") {
        MemoryTree tree;
        tree.add_file("/a/b/c", "");
        tree.add_file("/a/bb", "");
        tree.add_file("/a0", "");
        CHECK(tree.remove("/a/b"));
        CHECK_FALSE(tree.lstat("/a/b"));
        CHECK_FALSE(tree.lstat("/a/b/c"));
        CHECK(tree.lstat("/a/bb"));
        CHECK(tree.lstat("/a0"));
        CHECK(tree.list("/a").value().size() == 1);
        CHECK_FALSE(tree.remove("/a/b"));
        CHECK_FALSE(tree.remove("/"));
    }

    TEST_CASE("MemoryTree replaces an existing entry") {
        MemoryTree tree;
        tree.add_file("/x", "old");
        tree.add_symlink("/x", "y");
        CHECK(tree.lstat("/x")->kind == NodeKind::symlink);
        CHECK(tree.readlink("/x").value() == "y");
        CHECK(tree.list("/").value().size() == 1);
    }

    TEST_CASE("MemoryTree errors name the path") {
        MemoryTree tree;
        tree.add_file("/f", "12345");
        tree.add_dir("/d");
        CHECK(tree.read_file("/missing").error().text() == "/missing: no such file or directory");
        CHECK(tree.read_file("/d").error().text() == "/d: not a regular file");
        CHECK(tree.read_file("/f", 4).error().text() ==
              "/f: file is 5 bytes, over the 4-byte limit");
        CHECK(tree.readlink("/f").error().text() == "/f: not a symbolic link");
        CHECK(tree.list("/f").error().text() == "/f: not a directory");
    }

    TEST_CASE("MemoryTree probes files the way ld.so's open_verify classifies them") {
        MemoryTree tree;
        tree.add_file("/lib/short.so", "INPUT(-lc)");
        tree.add_file("/lib/script.so",
                      "/* GNU ld script */\nGROUP ( /lib/libc.so.6 /usr/lib/libc_nonshared.a )\n");
        tree.add_dir("/lib/dir.so");
        CHECK(tree.probe_elf("/lib/missing.so").outcome == ElfProbe::Outcome::missing);
        CHECK(tree.probe_elf("/lib/dir.so").outcome == ElfProbe::Outcome::not_regular);
        auto short_probe = tree.probe_elf("/lib/short.so");
        CHECK(short_probe.outcome == ElfProbe::Outcome::too_short);
        CHECK(short_probe.error == "file too short");
        auto script_probe = tree.probe_elf("/lib/script.so");
        CHECK(script_probe.outcome == ElfProbe::Outcome::not_elf);
        CHECK(script_probe.error == "invalid ELF header");
        std::string fake_elf =
            "\x7f"
            "ELF";
        fake_elf.resize(64, '\0');
        tree.add_file("/lib/broken.so", fake_elf);
        auto broken = tree.probe_elf("/lib/broken.so");
        CHECK(broken.outcome == ElfProbe::Outcome::malformed);
        CHECK_FALSE(broken.error.empty());
    }
}
