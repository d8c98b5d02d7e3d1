// Tests for add_recipe_extras over an in-memory root: the files, the conf file, a cache that
// finds a library on the new path (read back by the loader model), and a base whose ld.so.conf
// would never read the conf.
#include <doctest/doctest.h>

#include <memory>
#include <string>

#include "assemble/recipe_extras.hpp"
#include "fs/overlay_tree.hpp"
#include "loader/ld_so_cache.hpp"
#include "support/fake_root.hpp"

using namespace rootlock;
using rootlock::testing::add_elf;
using rootlock::testing::library_spec;
using rootlock::testing::make_fake_root;

namespace {

std::shared_ptr<fs::MemoryTree> root_with_conf(const std::string& conf) {
    std::shared_ptr<fs::MemoryTree> root = make_fake_root();
    root->add_file("/etc/ld.so.conf", conf);
    root->add_dir("/etc/ld.so.conf.d");
    return root;
}

loader::LdSoCache cache_of(const fs::FileTree& tree) {
    auto bytes = tree.read_file("/etc/ld.so.cache");
    REQUIRE(bytes.ok());
    auto parsed = loader::parse_ld_so_cache(
        std::span(reinterpret_cast<const std::byte*>(bytes->data()), bytes->size()), "cache");
    REQUIRE(parsed.ok());
    return *parsed;
}

}  // namespace

TEST_SUITE("rootlock::assemble") {
    TEST_CASE("library paths give the conf file and a cache that finds their libraries") {
        auto base = root_with_conf("include /etc/ld.so.conf.d/*.conf\n");
        fs::OverlayTree tree(base);
        add_elf(*base, "/opt/extra/lib/libextra.so.3", library_spec("libextra.so.3"));
        auto status = assemble::add_recipe_extras(tree, {"/opt/extra/lib"},
                                                  {{"/etc/motd", "hi\n"}, {"/srv/a/b.txt", "x"}});
        REQUIRE_MESSAGE(status.ok(), (status.ok() ? "" : status.error().text()));
        CHECK(*tree.read_file("/etc/ld.so.conf.d/rootlock.conf") ==
              "# Written by rootlock from the recipe's [loader] library-paths.\n/opt/extra/lib\n");
        CHECK(*tree.read_file("/etc/motd") == "hi\n");
        CHECK(*tree.read_file("/srv/a/b.txt") == "x");  // parents made as needed
        const loader::LdSoCache cache = cache_of(tree);
        bool found = false;
        for (const auto& entry : cache.entries)
            found = found || (entry.soname == "libextra.so.3" &&
                              entry.path == "/opt/extra/lib/libextra.so.3");
        CHECK(found);
        CHECK(cache.generator == "ldconfig");  // the base had no cache to take it from
    }

    TEST_CASE("without library paths no conf and no cache are written") {
        auto base = root_with_conf("include /etc/ld.so.conf.d/*.conf\n");
        fs::OverlayTree tree(base);
        REQUIRE(assemble::add_recipe_extras(tree, {}, {{"/etc/motd", "hi\n"}}).ok());
        CHECK_FALSE(tree.lstat("/etc/ld.so.conf.d/rootlock.conf").has_value());
        CHECK_FALSE(tree.lstat("/etc/ld.so.cache").has_value());
    }

    TEST_CASE("a base whose ld.so.conf never reads the conf directory is refused") {
        auto base = root_with_conf("/usr/local/lib\n");
        fs::OverlayTree tree(base);
        auto status = assemble::add_recipe_extras(tree, {"/opt/extra/lib"}, {});
        REQUIRE_FALSE(status.ok());
        CHECK(status.error().text() ==
              "/etc/ld.so.conf: does not include /etc/ld.so.conf.d/rootlock.conf, so [loader] "
              "library-paths would be ignored");
    }

    TEST_CASE("a file over a base file's parent that is a file is the overlay's error") {
        auto base = root_with_conf("include /etc/ld.so.conf.d/*.conf\n");
        fs::OverlayTree tree(base);
        auto status = assemble::add_recipe_extras(tree, {}, {{"/etc/ld.so.conf/x", "y"}});
        REQUIRE_FALSE(status.ok());
        CHECK(status.error().text().find("is not a directory") != std::string::npos);
    }

    TEST_CASE("a file over a directory of the base is refused, not hidden under it") {
        auto base = root_with_conf("include /etc/ld.so.conf.d/*.conf\n");
        fs::OverlayTree tree(base);
        auto status = assemble::add_recipe_extras(tree, {}, {{"/etc/ld.so.conf.d", ""}});
        REQUIRE_FALSE(status.ok());
        CHECK(status.error().text() ==
              "/etc/ld.so.conf.d: is a directory in the base; [files] writes files");
    }
}
