// Unit tests for `apt-get --simulate` output: Inst lines as apt 2.6 prints them (upgrades,
// several origins, qualified names), other lines ignored, and an exact error for odd Inst lines.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "debian/apt_simulation.hpp"

using rootlock::debian::parse_apt_simulation;
using rootlock::debian::SimulatedInstall;

TEST_SUITE("rootlock::debian") {
    TEST_CASE("Inst lines as apt prints them give the sorted package set") {
        const std::string output =
            "Reading package lists...\n"
            "Building dependency tree...\n"
            "The following NEW packages will be installed:\n"
            "  gcc-12-base libc6 python3\n"
            "0 upgraded, 3 newly installed, 0 to remove and 0 not upgraded.\n"
            "Inst libc6 (2.36-9+deb12u14 Debian:12.15/oldstable [amd64]) []\n"
            "Inst gcc-12-base (12.2.0-14+deb12u1 Debian:12.15/oldstable [amd64])\n"
            "Inst python3 [3.11.2-1] (3.11.2-1+b1 Debian:12 [amd64])\n"
            "Inst tzdata (2025b-0+deb12u2 Debian:12.15/oldstable, Debian-Security:12/"
            "oldstable-security [all])\n"
            "Inst libgcc-s1:i386 (12.2.0-14+deb12u1 Debian:12.15/oldstable [i386]) [libc6:i386 ]\n"
            "Conf gcc-12-base (12.2.0-14+deb12u1 Debian:12.15/oldstable [amd64])\n"
            "Conf libc6 (2.36-9+deb12u14 Debian:12.15/oldstable [amd64])\n"
            "Remv nano [7.2-1]\n"
            "Install: not an Inst line\n";
        auto parsed = parse_apt_simulation(output);
        REQUIRE(parsed.ok());
        const std::vector<SimulatedInstall> expected = {
            {"gcc-12-base", "12.2.0-14+deb12u1", "amd64"},
            {"libc6", "2.36-9+deb12u14", "amd64"},
            {"libgcc-s1", "12.2.0-14+deb12u1", "i386"},
            {"python3", "3.11.2-1+b1", "amd64"},  // an upgrade takes the new version
            {"tzdata", "2025b-0+deb12u2", "all"},
        };
        CHECK(parsed.value() == expected);
    }

    TEST_CASE("the same package at two architectures sorts by architecture") {
        auto parsed = parse_apt_simulation(
            "Inst libc6 (2.36-9 Debian:12 [i386])\nInst libc6 (2.36-9 Debian:12 [amd64])\n");
        REQUIRE(parsed.ok());
        REQUIRE(parsed->size() == 2);
        CHECK((*parsed)[0].architecture == "amd64");
        CHECK((*parsed)[1].architecture == "i386");
    }

    TEST_CASE("a repeated Inst line counts once and output without Inst lines is empty") {
        auto parsed = parse_apt_simulation(
            "Inst a (1.0 Debian:12 [all])\r\nInst a (1.0 Debian:12 [all])\nInst b (2 [all])");
        REQUIRE(parsed.ok());
        REQUIRE(parsed->size() == 2);
        CHECK((*parsed)[0] == SimulatedInstall{"a", "1.0", "all"});
        CHECK((*parsed)[1] == SimulatedInstall{"b", "2", "all"});
        CHECK(parse_apt_simulation("")->empty());
        CHECK(parse_apt_simulation("E: Unable to locate package x\nConf a (1 [all])\n")->empty());
    }

    TEST_CASE("Inst lines of another shape are rejected with the line quoted") {
        struct Case {
            std::string text;
            std::string error;
        };
        const Case cases[] = {
            {"Inst libc6\n", "apt: unexpected line \"Inst libc6\""},
            {"Inst libc6 \n", "apt: unexpected line \"Inst libc6 \""},
            {"Inst libc6 2.36-9\n", "apt: unexpected line \"Inst libc6 2.36-9\""},
            {"Inst libc6 (2.36-9 Debian:12 amd64)\n",
             "apt: unexpected line \"Inst libc6 (2.36-9 Debian:12 amd64)\""},
            {"Inst libc6 (2.36-9 Debian:12 [amd64]\n",
             "apt: unexpected line \"Inst libc6 (2.36-9 Debian:12 [amd64]\""},
            {"Inst libc6 ([amd64])\n", "apt: unexpected line \"Inst libc6 ([amd64])\""},
            {"Inst libc6 ()\n", "apt: unexpected line \"Inst libc6 ()\""},
            {"Inst libc6 (2.36-9 [])\n", "apt: unexpected line \"Inst libc6 (2.36-9 [])\""},
            {"Inst libc6 (2.36-9 [am/d64])\n",
             "apt: unexpected line \"Inst libc6 (2.36-9 [am/d64])\""},
            {"Inst libc6 (x1 Debian:12 [amd64])\n",
             "apt: unexpected line \"Inst libc6 (x1 Debian:12 [amd64])\""},
            {"Inst ../libc6 (1 Debian:12 [amd64])\n",
             "apt: unexpected line \"Inst ../libc6 (1 Debian:12 [amd64])\""},
            {"Inst python3 [3.11.2-1 (3.11.2-1+b1 Debian:12 [amd64])\n",
             "apt: unexpected line \"Inst python3 [3.11.2-1 (3.11.2-1+b1 Debian:12 [amd64])\""},
            {"Inst python3 [3.11.2-1]\n", "apt: unexpected line \"Inst python3 [3.11.2-1]\""},
            {"Inst a\t(1 [all])\n", "apt: unexpected line \"Inst a\\x09(1 [all])\""},
            {"Inst a (1 [all])\nInst a (2 [all])\n",
             "apt: \"a\" (all) is installed at both \"1\" and \"2\""},
        };
        for (const Case& c : cases) {
            CAPTURE(c.text);
            auto parsed = parse_apt_simulation(c.text);
            REQUIRE_FALSE(parsed.ok());
            CHECK(parsed.error().text() == c.error);
        }
    }
}
