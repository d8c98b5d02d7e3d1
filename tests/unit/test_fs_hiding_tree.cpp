// Tests for HidingTree: hidden files and whole directories vanish from every query (lstat,
// list, read_file, probe_elf, resolution), and everything else reads through to the base.
#include <doctest/doctest.h>

#include <filesystem>

#include "fs/directory_tree.hpp"
#include "fs/hiding_tree.hpp"
#include "fs/memory_tree.hpp"
#include "fs/path_resolve.hpp"
#include "support/temp_dir.hpp"

using namespace rootlock::fs;

TEST_SUITE("rootlock::fs") {
    TEST_CASE("HidingTree hides files and whole directories") {
        MemoryTree base;
        base.add_file("/venv/lib/torch/lib/libtorch.so", "torch");
        base.add_file("/venv/lib/nvidia/cudnn/lib/libcudnn.so.9", "cudnn");
        base.add_file("/venv/lib/nvidia/nccl/lib/libnccl.so.2", "nccl");
        base.add_file("/venv/lib/nvidia_cudnn.dist-info/RECORD", "rec");
        base.add_symlink("/venv/cudnn", "lib/nvidia/cudnn/lib/libcudnn.so.9");
        HidingTree tree(base, {"/venv/lib/nvidia/cudnn", "/venv/lib/nvidia_cudnn.dist-info/"});

        CHECK_FALSE(tree.lstat("/venv/lib/nvidia/cudnn"));
        CHECK_FALSE(tree.lstat("/venv/lib/nvidia/cudnn/lib/libcudnn.so.9"));
        CHECK_FALSE(tree.lstat("/venv/lib/nvidia_cudnn.dist-info/RECORD"));
        CHECK(tree.lstat("/venv/lib/nvidia/nccl/lib/libnccl.so.2"));
        CHECK(tree.lstat("/venv/lib/nvidia/cudnnx") == std::nullopt);
        CHECK(tree.is_hidden("/venv/lib/nvidia/cudnn/lib"));
        CHECK_FALSE(tree.is_hidden("/venv/lib/nvidia/cudnnx"));
        CHECK_FALSE(tree.is_hidden("/venv/lib/nvidia"));

        auto entries = tree.list("/venv/lib/nvidia");
        REQUIRE(entries.ok());
        REQUIRE(entries->size() == 1);
        CHECK((*entries)[0].name == "nccl");
        CHECK(tree.list("/venv/lib").value().size() == 2);

        CHECK(tree.read_file("/venv/lib/nvidia_cudnn.dist-info/RECORD").error().text() ==
              "/venv/lib/nvidia_cudnn.dist-info/RECORD: no such file or directory");
        CHECK(tree.read_file("/venv/lib/torch/lib/libtorch.so").value() == "torch");
        CHECK(tree.probe_elf("/venv/lib/nvidia/cudnn/lib/libcudnn.so.9").outcome ==
              ElfProbe::Outcome::missing);
        CHECK(tree.probe_elf("/venv/lib/torch/lib/libtorch.so").outcome ==
              ElfProbe::Outcome::too_short);

        // A symlink into a hidden directory dangles; the link itself is still there.
        CHECK_FALSE(resolve(tree, "/venv/cudnn"));
        CHECK(resolve(tree, "/venv/cudnn", false));
        CHECK(resolve(base, "/venv/cudnn"));
        CHECK(tree.describe() == "memory");
    }

    TEST_CASE("HidingTree with nothing hidden is the base tree") {
        MemoryTree base;
        base.add_file("/a/b", "b");
        HidingTree tree(base, {"/"});
        CHECK(tree.lstat("/"));
        CHECK(tree.list("/a").value().size() == 1);
        CHECK(tree.read_file("/a/b").value() == "b");
    }

    TEST_CASE("HidingTree's stat listing and regular-file probe hide, then read the base's") {
        rootlock::testing::TempDir root;
        std::filesystem::create_directories(root / "lib/hidden");
        std::filesystem::copy_file("/lib/x86_64-linux-gnu/libz.so.1", root / "lib/libz.so.1");
        std::filesystem::copy_file("/lib/x86_64-linux-gnu/libz.so.1", root / "lib/libgone.so");
        auto base = DirectoryTree::create(root.path());
        REQUIRE(base.ok());
        HidingTree tree(**base, {"/lib/hidden", "/lib/libgone.so"});

        auto entries = tree.list_stats("/lib");
        REQUIRE(entries.ok());
        REQUIRE(entries->size() == 1);
        CHECK((*entries)[0].name == "libz.so.1");
        CHECK((*entries)[0].stat.identity == (*base)->lstat("/lib/libz.so.1")->identity);
        CHECK_FALSE(tree.list_stats("/lib/hidden").ok());

        CHECK(tree.probe_regular_elf("/lib/libgone.so").outcome == ElfProbe::Outcome::missing);
        auto probe = tree.probe_regular_elf("/lib/libz.so.1", true);
        REQUIRE(probe.outcome == ElfProbe::Outcome::elf);
        CHECK((*base)->probe_elf("/lib/libz.so.1", true).info == probe.info);  // the base's cache
    }
}
