// Tests for TarTree::open_layers: OCI layers streamed in order into one tree, with whiteouts
// (file, opaque directory, whole directory, re-added), digests, compression and truncation.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "fs/tar_tree.hpp"
#include "support/oci_fixture.hpp"
#include "support/temp_dir.hpp"

using namespace rootlock;
using namespace rootlock::fs;
using rootlock::testing::digest_of;
using rootlock::testing::tar_bytes;
using rootlock::testing::TarMember;
using rootlock::testing::TempDir;

namespace {

struct LayerSpec {
    std::vector<TarMember> members;
    std::string filter = "none";
};

// Each layer as a file of its own, its digest the one it has (or `digests[i]` when given).
std::vector<TarLayer> write_layers(const TempDir& tmp, const std::vector<LayerSpec>& specs) {
    std::vector<TarLayer> out;
    for (size_t i = 0; i < specs.size(); ++i) {
        std::string bytes = tar_bytes(specs[i].members, specs[i].filter);
        TarLayer layer;
        layer.name = "layer " + std::to_string(i + 1);
        layer.range =
            FileRange{tmp.write_file("layer" + std::to_string(i), bytes), 0, bytes.size()};
        layer.compression = specs[i].filter == "gzip"   ? StreamCompression::gzip
                            : specs[i].filter == "zstd" ? StreamCompression::zstd
                                                        : StreamCompression::none;
        layer.sha256 = digest_of(bytes).substr(7);
        out.push_back(layer);
    }
    return out;
}

std::unique_ptr<TarTree> open_ok(const std::vector<TarLayer>& layers) {
    auto tree = TarTree::open_layers("image", layers, TarOptions{});
    REQUIRE_MESSAGE(tree.ok(), (tree.ok() ? "" : tree.error().text()));
    return std::move(tree).value();
}

std::vector<std::string> names(const TarTree& tree, const std::string& dir) {
    std::vector<std::string> out;
    auto listed = tree.list(dir);
    REQUIRE(listed.ok());
    for (const auto& entry : *listed)
        out.push_back(entry.name);
    return out;
}

const std::vector<TarMember> k_base{{"etc/", 'd'},
                                    {"etc/os-release", 'f', "ID=debian\n"},
                                    {"usr/", 'd'},
                                    {"usr/lib/", 'd'},
                                    {"usr/lib/libz.so.1", 'f', "not elf"},
                                    {"usr/lib/libm.so.6", 'f', "not elf either"},
                                    {"usr/lib/cache/", 'd'},
                                    {"usr/lib/cache/a", 'f', "a"}};

}  // namespace

TEST_SUITE("rootlock::fs") {
    TEST_CASE("an OCI layer's whiteout removes a file of the layers below") {
        TempDir tmp;
        auto tree = open_ok(
            write_layers(tmp, {{k_base}, {{{"usr/lib/", 'd'}, {"usr/lib/.wh.libz.so.1", 'f'}}}}));
        CHECK_FALSE(tree->lstat("/usr/lib/libz.so.1").has_value());
        CHECK(tree->lstat("/usr/lib/libm.so.6").has_value());
        CHECK_FALSE(tree->lstat("/usr/lib/.wh.libz.so.1").has_value());
        CHECK(names(*tree, "/usr/lib") == std::vector<std::string>{"cache", "libm.so.6"});
    }

    TEST_CASE("an OCI opaque directory hides its lower entries and keeps its own layer's") {
        TempDir tmp;
        // The new file comes before the marker in the layer: order inside a layer is no matter.
        auto tree = open_ok(write_layers(tmp, {{k_base},
                                               {{{"usr/lib/", 'd'},
                                                 {"usr/lib/libnew.so", 'f', "new"},
                                                 {"usr/lib/.wh..wh..opq", 'f'}}}}));
        CHECK(names(*tree, "/usr/lib") == std::vector<std::string>{"libnew.so"});
        CHECK_FALSE(tree->lstat("/usr/lib/cache/a").has_value());
        CHECK(tree->lstat("/etc/os-release").has_value());
    }

    TEST_CASE("an OCI whiteout of a whole directory removes everything under it") {
        TempDir tmp;
        auto tree = open_ok(write_layers(tmp, {{k_base}, {{{"usr/", 'd'}, {"usr/.wh.lib", 'f'}}}}));
        CHECK_FALSE(tree->lstat("/usr/lib").has_value());
        CHECK_FALSE(tree->lstat("/usr/lib/cache/a").has_value());
        CHECK(names(*tree, "/usr").empty());
    }

    TEST_CASE("an OCI layer re-adds a file a lower layer whited out") {
        TempDir tmp;
        auto tree =
            open_ok(write_layers(tmp, {{k_base},
                                       {{{"etc/.wh.os-release", 'f'}}},
                                       {{{"etc/", 'd'}, {"etc/os-release", 'f', "ID=ubuntu\n"}}}}));
        auto text = tree->read_file("/etc/os-release");
        REQUIRE(text.ok());
        CHECK(*text == "ID=ubuntu\n");
        CHECK(tree->retained_bytes() == std::string("ID=ubuntu\n").size());
    }

    TEST_CASE("an OCI whiteout never hides a file of its own layer") {
        TempDir tmp;
        auto tree = open_ok(write_layers(
            tmp,
            {{k_base},
             {{{"etc/", 'd'}, {"etc/os-release", 'f', "ID=new\n"}, {"etc/.wh.os-release", 'f'}}}}));
        auto text = tree->read_file("/etc/os-release");
        REQUIRE(text.ok());
        CHECK(*text == "ID=new\n");
    }

    TEST_CASE("an OCI layer's file replaces a lower directory whole") {
        TempDir tmp;
        auto tree = open_ok(write_layers(tmp, {{k_base}, {{{"usr/lib/cache", 'l', "/tmp"}}}}));
        CHECK(tree->lstat("/usr/lib/cache")->kind == NodeKind::symlink);
        CHECK_FALSE(tree->lstat("/usr/lib/cache/a").has_value());
        CHECK(tree->issues().empty());
    }

    TEST_CASE("a plain tarball's .wh. names are ordinary files") {
        TempDir tmp;
        std::string bytes = tar_bytes({{"a", 'f', "x"}, {".wh.a", 'f', "y"}});
        auto tree = TarTree::open(tmp.write_file("root.tar", bytes), TarOptions{});
        REQUIRE(tree.ok());
        CHECK((*tree)->lstat("/a").has_value());
        CHECK((*tree)->lstat("/.wh.a").has_value());
    }

    TEST_CASE("OCI layers compressed with gzip and zstd stream into one tree") {
        TempDir tmp;
        auto tree = open_ok(write_layers(
            tmp,
            {{k_base, "gzip"}, {{{"etc/", 'd'}, {"etc/ld.so.conf", 'f', "/opt/lib\n"}}, "zstd"}}));
        CHECK(tree->read_file("/etc/ld.so.conf").ok());
        CHECK(tree->read_file("/etc/os-release").ok());
    }

    TEST_CASE("an OCI layer is read in place from a range inside a larger file") {
        TempDir tmp;
        std::string bytes = tar_bytes(k_base, "gzip");
        std::string padded = std::string(1000, 'x') + bytes + std::string(77, 'y');
        TarLayer layer{"layer 1", FileRange{tmp.write_file("outer", padded), 1000, bytes.size()},
                       StreamCompression::gzip, digest_of(bytes).substr(7)};
        auto tree = open_ok({layer});
        CHECK(tree->lstat("/usr/lib/cache/a").has_value());
    }

    TEST_CASE("an OCI layer whose sha256 differs is one error naming the layer") {
        TempDir tmp;
        auto layers = write_layers(tmp, {{k_base}, {{{"x", 'f', "x"}}}});
        layers[1].sha256 = std::string(64, '0');
        auto tree = TarTree::open_layers("image", layers, TarOptions{});
        REQUIRE_FALSE(tree.ok());
        CHECK(tree.error().text() == "layer 2: its sha256 differs from the descriptor's digest");
    }

    TEST_CASE("a damaged gzip OCI layer is reported by its digest, not by the gzip error") {
        TempDir tmp;
        std::string bytes = tar_bytes(k_base, "gzip");
        std::string digest = digest_of(bytes).substr(7);
        bytes[bytes.size() / 2] = static_cast<char>(bytes[bytes.size() / 2] ^ 0x55);
        TarLayer layer{"layer 1", FileRange{tmp.write_file("l", bytes), 0, bytes.size()},
                       StreamCompression::gzip, digest};
        auto tree = TarTree::open_layers("image", {layer}, TarOptions{});
        REQUIRE_FALSE(tree.ok());
        CHECK(tree.error().text() == "layer 1: its sha256 differs from the descriptor's digest");
    }

    TEST_CASE("a truncated OCI blob is one error") {
        TempDir tmp;
        std::string bytes = tar_bytes(k_base, "zstd");
        std::string path = tmp.write_file("l", bytes.substr(0, bytes.size() / 2));
        // The range says more than the file holds (a blob cut short after it was described).
        TarLayer layer{"layer 1", FileRange{path, 0, bytes.size()}, StreamCompression::zstd, ""};
        auto tree = TarTree::open_layers("image", {layer}, TarOptions{});
        REQUIRE_FALSE(tree.ok());
        CHECK(tree.error().text() == "layer 1: the blob ends early");
    }
}
