// Unit tests for freezing a root's dpkg database: installed packages, files verified against
// their .md5sums as debsums does (missing, modified, intact), and one-line apt sources.
#include <doctest/doctest.h>

#include "debian/apt_sources.hpp"
#include "freeze/dpkg_freeze.hpp"
#include "fs/memory_tree.hpp"

using namespace rootlock;

namespace {

// md5("hello\n") and md5("") as md5sum prints them.
constexpr const char* k_md5_hello = "b1946ac92492d2347c6235b4d2611184";
constexpr const char* k_md5_empty = "d41d8cd98f00b204e9800998ecf8427e";

void fill_dpkg_root(fs::MemoryTree& tree) {
    tree.add_file("/var/lib/dpkg/status",
                  "Package: hello\nStatus: install ok installed\nArchitecture: amd64\n"
                  "Version: 2.10-3\n\n"
                  "Package: gone\nStatus: deinstall ok config-files\nArchitecture: amd64\n"
                  "Version: 1.0\n\n"
                  "Package: libz\nStatus: install ok installed\nArchitecture: amd64\n"
                  "Multi-Arch: same\nVersion: 1:1.2.13.dfsg-1\n");
    tree.add_file("/var/lib/dpkg/info/hello.md5sums",
                  std::string(k_md5_hello) + "  usr/bin/hello\n" + k_md5_empty +
                      "  usr/share/doc/hello/empty\n" + k_md5_hello + "  usr/bin/hello-gone\n");
    tree.add_file("/usr/bin/hello", "hello\n");
    tree.add_file("/usr/share/doc/hello/empty", "changed");
}

}  // namespace

TEST_SUITE("rootlock::freeze") {
    TEST_CASE("installed packages are frozen and each shipped file is checked against .md5sums") {
        fs::MemoryTree tree;
        fill_dpkg_root(tree);
        auto frozen = freeze::freeze_dpkg(tree, 2);
        REQUIRE(frozen.ok());
        REQUIRE(frozen->installed.size() == 2);
        CHECK(frozen->installed[0].name == "hello");
        CHECK(frozen->installed[1].name == "libz");
        CHECK(frozen->files_checked == 3);
        REQUIRE(frozen->problems.size() == 3);
        CHECK(frozen->problems[0] ==
              freeze::RecordProblem{"deb:hello", "/usr/bin/hello-gone", "missing"});
        CHECK(frozen->problems[1] == freeze::RecordProblem{"deb:hello",
                                                           "/usr/share/doc/hello/empty",
                                                           "modified (md5 differs from .md5sums)"});
        // Multi-Arch: same packages keep their info files under NAME:ARCH.
        CHECK(frozen->problems[2] ==
              freeze::RecordProblem{"deb:libz", "/var/lib/dpkg/info/libz:amd64.md5sums",
                                    "no .md5sums: its files cannot be verified"});
    }

    TEST_CASE("a root without a dpkg database is one clear error") {
        fs::MemoryTree tree;
        tree.add_file("/etc/os-release", "ID=debian\n");
        auto frozen = freeze::freeze_dpkg(tree, 1);
        REQUIRE_FALSE(frozen.ok());
        CHECK(frozen.error().message == "no /var/lib/dpkg/status");
    }

    TEST_CASE("one-line apt sources give archives; deb-src, comments and options are handled") {
        const auto sources = debian::parse_sources_list(
            "# Written by rootlock\n"
            "deb http://deb.debian.org/debian/ bookworm main contrib\n"
            "deb-src http://deb.debian.org/debian bookworm main\n"
            "deb [arch=amd64 signed-by=/etc/apt/keyrings/vendor.gpg] https://v.example/apt "
            "stable main # vendor\n"
            "deb http://broken.example\n"
            "deb http://flat-with-components.example htttp:// y z\n"
            "deb http://no-components.example bookworm\n"
            "deb / bookworm main\n");
        REQUIRE(sources.size() == 2);
        CHECK(sources[0].url == "http://deb.debian.org/debian");
        CHECK(sources[0].suite == "bookworm");
        CHECK(sources[0].components == std::vector<std::string>{"main", "contrib"});
        CHECK(sources[0].signed_by.empty());
        CHECK(sources[1].url == "https://v.example/apt");
        CHECK(sources[1].suite == "stable");
        CHECK(sources[1].components == std::vector<std::string>{"main"});
        CHECK(sources[1].signed_by == "/etc/apt/keyrings/vendor.gpg");
    }
}
