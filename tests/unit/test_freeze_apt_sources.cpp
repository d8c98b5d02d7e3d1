// The archives a root's apt reads, in apt's order: sources.list, then the parts by name, only
// the names apt reads, symlinks followed, each archive once, flat repositories set aside.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "freeze/apt_sources.hpp"
#include "fs/memory_tree.hpp"

using namespace rootlock;

TEST_SUITE("rootlock::freeze") {
    TEST_CASE("a root's sources are read as apt reads them: sources.list, then the parts by name") {
        fs::MemoryTree tree;
        tree.add_file("/etc/apt/sources.list",
                      "deb http://deb.debian.org/debian bookworm main\n"
                      "deb https://flat.example/repo ./\n");
        tree.add_file("/etc/apt/sources.list.d/b-vendor.sources",
                      "Types: deb\nURIs: https://v.example/apt\nSuites: stable\n"
                      "Components: main\n");
        tree.add_file("/etc/apt/sources.list.d/a-dup.list",
                      "deb http://deb.debian.org/debian/ bookworm main contrib\n"
                      "deb [signed-by=/etc/apt/keyrings/c.gpg] https://c.example/apt c main\n");
        tree.add_file("/etc/apt/sources.list.d/notes.txt", "deb http://ignored.example x main\n");
        tree.add_file("/etc/apt/sources.list.d/bad~name.list",
                      "deb http://ignored.example y main\n");
        tree.add_file("/srv/linked.sources",
                      "Types: deb\nURIs: http://l.example\nSuites: l\nComponents: main\n");
        tree.add_symlink("/etc/apt/sources.list.d/c-linked.sources", "/srv/linked.sources");
        auto sources = freeze::read_apt_sources(tree);
        REQUIRE(sources.ok());
        std::vector<std::string> got;
        for (const auto& source : sources->archives)
            got.push_back(source.url + " " + source.suite + " " + source.from);
        CHECK(got == std::vector<std::string>{
                         "http://deb.debian.org/debian bookworm /etc/apt/sources.list:1",
                         "https://c.example/apt c /etc/apt/sources.list.d/a-dup.list:2",
                         "https://v.example/apt stable /etc/apt/sources.list.d/b-vendor.sources:1",
                         "http://l.example l /etc/apt/sources.list.d/c-linked.sources:1"});
        CHECK(sources->flat ==
              std::vector<std::string>{"/etc/apt/sources.list:2 https://flat.example/repo ./"});
    }

    TEST_CASE("a root with only a .sources file, or none at all") {
        fs::MemoryTree tree;
        tree.add_dir("/etc/apt");
        auto none = freeze::read_apt_sources(tree);
        REQUIRE(none.ok());
        CHECK(none->archives.empty());
        tree.add_file("/etc/apt/sources.list.d/debian.sources",
                      "Types: deb\nURIs: http://deb.debian.org/debian\nSuites: bookworm\n"
                      "Components: main\n\nTypes: deb\nURIs: http://a\n");
        auto bad = freeze::read_apt_sources(tree);
        REQUIRE_FALSE(bad.ok());
        CHECK(bad.error().text() ==
              "/etc/apt/sources.list.d/debian.sources:6: a stanza without Suites");
    }
}
