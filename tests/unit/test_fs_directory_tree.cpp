// Tests for DirectoryTree over a temporary host directory: chroot-style resolution even for links
// that point outside on the host, identities from (dev, inode), sorted listing, exact errors.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "elf/elf_reader.hpp"
#include "fs/directory_tree.hpp"
#include "fs/path_resolve.hpp"
#include "support/probe_entries.hpp"
#include "support/temp_dir.hpp"

namespace ROOTLOCK_UNIT_ID {

using namespace rootlock;
using namespace rootlock::fs;
using rootlock::testing::TempDir;

namespace {

constexpr const char* k_host_libz = "/lib/x86_64-linux-gnu/libz.so.1";

std::unique_ptr<DirectoryTree> open_tree(const TempDir& dir) {
    auto tree = DirectoryTree::create(dir.path());
    REQUIRE(tree.ok());
    return std::move(tree).value();
}

}  // namespace

TEST_SUITE("rootlock::fs") {
    TEST_CASE("DirectoryTree resolves an absolute symlink inside the root, not on the host") {
        TempDir root;
        root.write_file("usr/lib64/ld-linux-x86-64.so.2", "loader");
        // On the host this link points at the host's /usr/lib64; inside the tree it must not.
        root.make_symlink("lib64", "/usr/lib64");
        auto tree = open_tree(root);
        auto resolved = resolve(*tree, "/lib64/ld-linux-x86-64.so.2");
        REQUIRE(resolved);
        CHECK(resolved->path == "/usr/lib64/ld-linux-x86-64.so.2");
        CHECK(resolved->stat.kind == NodeKind::regular);
        CHECK(resolved->stat.size == 6);
        CHECK(tree->read_file(resolved->path).value() == "loader");
        CHECK(tree->lstat("/lib64")->kind == NodeKind::symlink);
        CHECK(tree->readlink("/lib64").value() == "/usr/lib64");
    }

    TEST_CASE("DirectoryTree refuses to follow an escaping relative symlink") {
        TempDir root;
        root.write_file("a/secret", "inside");
        root.make_symlink("a/evil", "../../etc/passwd");
        auto tree = open_tree(root);
        CHECK_FALSE(resolve(*tree, "/a/evil"));
        CHECK(resolve(*tree, "/a/evil", false)->stat.kind == NodeKind::symlink);
    }

    TEST_CASE("DirectoryTree gives hard links one identity") {
        TempDir root;
        std::string first = root.write_file("a", "x");
        root.write_file("c", "x");
        REQUIRE(::link(first.c_str(), (root / "b").c_str()) == 0);
        auto tree = open_tree(root);
        CHECK(tree->lstat("/a")->identity == tree->lstat("/b")->identity);
        CHECK(tree->lstat("/a")->identity != tree->lstat("/c")->identity);
        CHECK(tree->lstat("/a")->identity != 0);
    }

    TEST_CASE("DirectoryTree lists entries sorted bytewise with their kinds") {
        TempDir root;
        root.write_file("d/b", "");
        root.write_file("d/B", "");
        root.make_dirs("d/a");
        root.make_symlink("d/l", "b");
        auto tree = open_tree(root);
        auto entries = tree->list("/d");
        REQUIRE(entries.ok());
        REQUIRE(entries->size() == 4);
        CHECK((*entries)[0].name == "B");
        CHECK((*entries)[0].kind == NodeKind::regular);
        CHECK((*entries)[1].name == "a");
        CHECK((*entries)[1].kind == NodeKind::directory);
        CHECK((*entries)[2].name == "b");
        CHECK((*entries)[3].name == "l");
        CHECK((*entries)[3].kind == NodeKind::symlink);
        auto top = tree->list("/");
        REQUIRE(top.ok());
        CHECK(top->size() == 1);
    }

    TEST_CASE("DirectoryTree errors name the path inside the root") {
        TempDir root;
        root.write_file("f", "12345");
        root.make_dirs("d");
        root.make_symlink("l", "f");
        auto tree = open_tree(root);
        CHECK(tree->read_file("/missing").error().text() == "/missing: no such file or directory");
        CHECK(tree->read_file("/d").error().text() == "/d: not a regular file");
        CHECK(tree->read_file("/l").error().text() == "/l: not a regular file");
        CHECK(tree->read_file("/f", 4).error().text() ==
              "/f: file is 5 bytes, over the 4-byte limit");
        CHECK(tree->readlink("/f").error().text() == "/f: not a symbolic link");
        CHECK(tree->list("/f").error().text() == "/f: not a directory");
        CHECK(tree->list("/l").error().text() == "/l: not a directory");
        CHECK_FALSE(tree->lstat("/missing"));
        CHECK_FALSE(tree->lstat(std::string_view("/f\0x", 4)));
    }

    TEST_CASE("DirectoryTree keeps .. inside the root even for non-canonical paths") {
        TempDir root;
        root.write_file("etc/passwd", "inside");
        auto tree = open_tree(root);
        CHECK(tree->read_file("/../../../etc/passwd").value() == "inside");
    }

    TEST_CASE("DirectoryTree::create rejects a missing root and a file") {
        TempDir dir;
        std::string file = dir.write_file("file", "");
        CHECK(DirectoryTree::create(dir / "missing").error().text() ==
              dir / "missing" + ": no such file or directory");
        CHECK(DirectoryTree::create(file).error().text() == file + ": not a directory");
        auto slashed = DirectoryTree::create(dir.path() + "/");
        REQUIRE(slashed.ok());
        CHECK((*slashed)->describe() == dir.path());
    }

    TEST_CASE("DirectoryTree probes a real shared library and caches the result") {
        TempDir root;
        std::filesystem::copy_file(k_host_libz, root / "libz.so.1");
        root.write_file("short.so", "short");
        root.make_symlink("link.so", "libz.so.1");
        auto tree = open_tree(root);
        auto probe = tree->probe_elf("/libz.so.1");
        REQUIRE(probe.outcome == ElfProbe::Outcome::elf);
        CHECK(probe.info->soname == "libz.so.1");
        auto again = tree->probe_elf("/libz.so.1");
        CHECK(again.info == probe.info);
        auto with_symbols = tree->probe_elf("/libz.so.1", true);
        REQUIRE(with_symbols.outcome == ElfProbe::Outcome::elf);
        CHECK(with_symbols.info->symbols_read);
        CHECK_FALSE(with_symbols.info->symbols.empty());
        CHECK(tree->probe_elf("/libz.so.1").info == with_symbols.info);
        CHECK(tree->probe_elf("/short.so").outcome == ElfProbe::Outcome::too_short);
        // A path given to probe_elf is canonical: the symlink itself is not a regular file.
        CHECK(tree->probe_elf("/link.so").outcome == ElfProbe::Outcome::not_regular);
        CHECK(tree->probe_elf("/nope.so").outcome == ElfProbe::Outcome::missing);
    }

    TEST_CASE("DirectoryTree::list_stats gives each entry lstat's kind and identity, sorted") {
        TempDir root;
        std::string first = root.write_file("d/f", "12345");
        REQUIRE(::link(first.c_str(), (root / "d/hard").c_str()) == 0);
        root.make_dirs("d/sub");
        root.make_symlink("d/link", "/etc/passwd");
        REQUIRE(::mkfifo((root / "d/fifo").c_str(), 0644) == 0);
        auto tree = open_tree(root);
        auto entries = tree->list_stats("/d");
        REQUIRE(entries.ok());
        std::vector<std::string> names;
        for (const auto& entry : *entries) {
            names.push_back(entry.name);
            auto stat = tree->lstat("/d/" + entry.name);
            REQUIRE(stat);
            CHECK(entry.stat.kind == stat->kind);
            CHECK(entry.stat.identity == stat->identity);
            // ext4 and tmpfs fill d_type: nothing else was asked of the entry.
            CHECK(entry.stat.size == NodeStat::k_unknown_size);
            CHECK(entry.stat.mode == 0);
        }
        CHECK(names == std::vector<std::string>{"f", "fifo", "hard", "link", "sub"});
        CHECK((*entries)[0].stat.identity == (*entries)[2].stat.identity);
        CHECK((*entries)[1].stat.kind == NodeKind::other);
        CHECK((*entries)[3].stat.kind == NodeKind::symlink);  // not followed to the host's file
        CHECK_FALSE(tree->list_stats("/d/f").ok());
        CHECK_FALSE(tree->list_stats("/d/link").ok());
    }

    TEST_CASE("DirectoryTree::probe_regular_elf answers as probe_elf, whatever the path became") {
        TempDir root;
        write_probe_entries(root);
        root.write_file("short", std::string(63, 'x'));
        auto tree = open_tree(root);
        auto probe = tree->probe_regular_elf("/libz.so.1", true);
        REQUIRE(probe.outcome == ElfProbe::Outcome::elf);
        CHECK(probe.info->symbols_read);
        CHECK(tree->probe_elf("/libz.so.1", true).info == probe.info);  // one cache for both
        // Settled by the header alone, as probe_elf settles them.
        for (const char* path : {"/text", "/short", "/empty", "/torn.so"}) {
            CAPTURE(path);
            const auto fast = tree->probe_regular_elf(path);
            const auto slow = tree->probe_elf(path);
            CHECK(fast.outcome == slow.outcome);
            CHECK(fast.error == slow.error);
        }
        CHECK(tree->probe_regular_elf("/text").outcome == ElfProbe::Outcome::not_elf);
        CHECK(tree->probe_regular_elf("/text").error == "invalid ELF header");
        CHECK(tree->probe_regular_elf("/short").outcome == ElfProbe::Outcome::too_short);
        CHECK(tree->probe_regular_elf("/empty").error == "file too short");
        CHECK(tree->probe_regular_elf("/torn.so").outcome == ElfProbe::Outcome::malformed);
        CHECK(tree->probe_regular_elf("/link.so").outcome == ElfProbe::Outcome::not_regular);
        CHECK(tree->probe_regular_elf("/dir.so").outcome == ElfProbe::Outcome::not_regular);
        CHECK(tree->probe_regular_elf("/fifo.so").outcome == ElfProbe::Outcome::not_regular);
        CHECK(tree->probe_regular_elf("/gone.so").outcome == ElfProbe::Outcome::missing);
    }
}

}  // namespace ROOTLOCK_UNIT_ID
