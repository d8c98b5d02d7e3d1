// The target read from a base: architecture from /bin/sh, glibc from the libc the base's Python
// binds to, the Python full version from dpkg's database; and the refusals when the base does
// not have the recipe's Python.
#include <doctest/doctest.h>

#include "fetch/base_facts.hpp"
#include "support/fake_root.hpp"

using namespace rootlock;

TEST_SUITE("rootlock::fetch") {
    TEST_CASE("highest_glibc picks the largest GLIBC_2.N and ignores other names") {
        CHECK(fetch::highest_glibc({"libc.so.6", "GLIBC_2.2.5", "GLIBC_2.34", "GLIBC_2.4",
                                    "GLIBC_PRIVATE"}) == std::pair{2, 34});
        CHECK(fetch::highest_glibc({"GLIBC_2.36", "GLIBC_2.17"}) == std::pair{2, 36});
        CHECK(fetch::highest_glibc({"GLIBC_PRIVATE", "GLIBC_x.y"}) == std::pair{0, 0});
    }

    TEST_CASE("dpkg_upstream_version reads an installed package's upstream version") {
        const std::string status =
            "Package: python3.11-minimal\nStatus: install ok installed\nVersion: "
            "3.11.2-6+deb12u6\n\n"
            "Package: python3.11\nStatus: deinstall ok config-files\nVersion: 3.11.1-1\n\n"
            "Package: python3.12\nStatus: install ok installed\nVersion: 1:3.12.7~rc1-2\n";
        CHECK(fetch::dpkg_upstream_version(status, "python3.11-minimal") == "3.11.2");
        CHECK(fetch::dpkg_upstream_version(status, "python3.11") == "");
        CHECK(fetch::dpkg_upstream_version(status, "python3.12") == "3.12.7");
        CHECK(fetch::dpkg_upstream_version(status, "python3.13") == "");
        CHECK(fetch::dpkg_upstream_version("", "python3.11") == "");
    }

    TEST_CASE("read_base_facts reads arch, glibc and Python from the base itself") {
        auto root = testing::make_fake_root();
        testing::add_elf(*root, "/usr/bin/python3.11", testing::program_spec({"libc.so.6"}));
        root->add_file("/var/lib/dpkg/status",
                       "Package: python3.11\nStatus: install ok installed\nVersion: 3.11.2-6\n");
        auto facts = fetch::read_base_facts(*root, "3.11", "base.tar");
        REQUIRE(facts.ok());
        CHECK(facts->arch == "x86_64");
        CHECK(facts->glibc() == "2.34");
        CHECK(facts->python_interpreter == "/usr/bin/python3.11");
        CHECK(facts->python_full == "3.11.2");
    }

    TEST_CASE("read_base_facts refuses a base without the recipe's Python") {
        auto root = testing::make_fake_root();
        testing::add_elf(*root, "/usr/bin/python3.11", testing::program_spec({"libc.so.6"}));
        auto facts = fetch::read_base_facts(*root, "3.12", "base.tar");
        REQUIRE_FALSE(facts.ok());
        CHECK(facts.error().text() ==
              "base.tar: no Python 3.12 interpreter at /usr/bin/python3.12 (the recipe's [python] "
              "version must be the base's)");
    }
}
