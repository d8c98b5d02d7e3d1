// Unit tests for Packages indexes: paragraphs as Debian 12's archive writes them (binNMUs,
// Essential, Multi-Arch), and an exact error for every missing or malformed field.
#include <doctest/doctest.h>

#include <string>

#include "debian/packages_index.hpp"

namespace ROOTLOCK_UNIT_ID {

using rootlock::debian::BinaryPackage;
using rootlock::debian::parse_packages;

namespace {

const std::string k_name = "main/binary-amd64/Packages";
const std::string k_sha = "b1c4d0a7f5f1bd4c4cf0c5e3bd4d8b65a8b1e4f8e5c0e1d2c3b4a59687766554";

const std::string k_index =
    "Package: libc6\n"
    "Source: glibc\n"
    "Version: 2.36-9+deb12u10\n"
    "Installed-Size: 12986\n"
    "Maintainer: GNU Libc Maintainers <debian-glibc@lists.debian.org>\n"
    "Architecture: amd64\n"
    "Multi-Arch: same\n"
    "Replaces: libc6-amd64\n"
    "Depends: libgcc-s1\n"
    "Recommends: libidn2-0 (>= 2.0.5~)\n"
    "Breaks: aide (<< 0.17.3-4+b3), busybox (<< 1.30.1-6)\n"
    "Description: GNU C Library: Shared libraries\n"
    "Homepage: https://www.gnu.org/software/libc/libc.html\n"
    "Description-md5: fc3001b0b90a1c8e6690b283a619d57f\n"
    "Tag: role::shared-lib\n"
    "Section: libs\n"
    "Priority: optional\n"
    "Filename: pool/main/g/glibc/libc6_2.36-9+deb12u10_amd64.deb\n"
    "Size: 2757936\n"
    "MD5sum: 6b1d0e1a0e8f8c0d9a1b2c3d4e5f6071\n"
    "SHA256: B1C4D0A7F5F1BD4C4CF0C5E3BD4D8B65A8B1E4F8E5C0E1D2C3B4A59687766554\n"
    "\n"
    "Package: python3\n"
    "Source: python3-defaults (3.11.2-1)\n"
    "Version: 3.11.2-1+b1\n"
    "Installed-Size: 90\n"
    "Architecture: amd64\n"
    "Multi-Arch: allowed\n"
    "Pre-Depends: python3-minimal (= 3.11.2-1+b1)\n"
    "Depends: python3.11 (>= 3.11.2-1~), libpython3-stdlib (= 3.11.2-1+b1)\n"
    "Provides: python3-profiler\n"
    "Priority: optional\n"
    "Section: python\n"
    "Filename: pool/main/p/python3-defaults/python3_3.11.2-1+b1_amd64.deb\n"
    "Size: 26316\n"
    "SHA256: " +
    k_sha +
    "\n"
    "\n"
    "Package: base-files\n"
    "Version: 12.4+deb12u11\n"
    "Essential: yes\n"
    "Architecture: amd64\n"
    "Priority: required\n"
    "Section: admin\n"
    "Filename: pool/main/b/base-files/base-files_12.4+deb12u11_amd64.deb\n"
    "Size: 70824\n"
    "SHA256: " +
    k_sha + "\n";

// A valid paragraph with `field` replaced (or dropped when `value` is empty).
std::string with(const std::string& field, const std::string& value) {
    const std::string fields[][2] = {
        {"Package", "hello"},      {"Version", "2.10-3"},
        {"Architecture", "amd64"}, {"Filename", "pool/main/h/hello/hello_2.10-3_amd64.deb"},
        {"Size", "53000"},         {"SHA256", k_sha}};
    std::string text;
    bool replaced = false;
    for (const auto& f : fields) {
        if (f[0] == field) {
            replaced = true;
            if (!value.empty())
                text += field + ": " + value + "\n";
        } else {
            text += f[0] + ": " + f[1] + "\n";
        }
    }
    if (!replaced)
        text += field + ": " + value + "\n";
    return text;
}

}  // namespace

TEST_SUITE("rootlock::debian") {
    TEST_CASE("a Packages index gives one entry per paragraph with pool path and digest") {
        auto parsed = parse_packages(k_index, k_name);
        REQUIRE(parsed.ok());
        REQUIRE(parsed->size() == 3);
        const BinaryPackage& libc = (*parsed)[0];
        CHECK(libc.name == "libc6");
        CHECK(libc.version == "2.36-9+deb12u10");
        CHECK(libc.architecture == "amd64");
        CHECK(libc.filename == "pool/main/g/glibc/libc6_2.36-9+deb12u10_amd64.deb");
        CHECK(libc.size == 2757936U);
        CHECK(libc.sha256 == k_sha);  // lowercased
        CHECK(libc.source == "glibc");
        CHECK(libc.source_version == "2.36-9+deb12u10");
        CHECK(libc.multi_arch == "same");
        CHECK(libc.priority == "optional");
        CHECK(libc.section == "libs");
        CHECK(libc.depends == "libgcc-s1");
        CHECK_FALSE(libc.essential);

        const BinaryPackage& python = (*parsed)[1];
        CHECK(python.source == "python3-defaults");  // a binNMU names its source's version
        CHECK(python.source_version == "3.11.2-1");
        CHECK(python.version == "3.11.2-1+b1");
        CHECK(python.pre_depends == "python3-minimal (= 3.11.2-1+b1)");
        CHECK(python.provides == "python3-profiler");
        CHECK(python.multi_arch == "allowed");

        const BinaryPackage& base = (*parsed)[2];
        CHECK(base.essential);
        CHECK(base.source == "base-files");
        CHECK(base.source_version == "12.4+deb12u11");
        CHECK(base.priority == "required");
        CHECK(base.multi_arch.empty());
    }

    TEST_CASE("an empty index has no packages") {
        CHECK(parse_packages("", k_name)->empty());
    }

    TEST_CASE("malformed Packages paragraphs are rejected naming the package") {
        struct Case {
            std::string text;
            std::string error;
        };
        const std::string e = k_name + ":";
        const std::string p = ": package \"hello\": ";
        const Case cases[] = {
            {"Version: 1\n", e + "1: a paragraph without Package"},
            {with("Package", "") + "Package:\n", e + "1: a paragraph without Package"},
            {with("Package", "Hello/../x"),
             e + "1: package \"Hello/../x\": not a valid package name"},
            {with("Package", "-x"), e + "1: package \"-x\": not a valid package name"},
            {with("Version", ""), k_name + ":1" + p + "no Version"},
            {with("Architecture", ""), k_name + ":1" + p + "no Architecture"},
            {with("Filename", ""), k_name + ":1" + p + "no Filename"},
            {with("Size", ""), k_name + ":1" + p + "no Size"},
            {with("SHA256", ""), k_name + ":1" + p + "no SHA256"},
            {with("Version", "1:"), k_name + ":2" + p + "Version \"1:\": nothing after the epoch"},
            {with("Version", "a1"),
             k_name + ":2" + p +
                 "Version \"a1\": the upstream version does not start with a digit"},
            {with("Architecture", "amd64/x"),
             k_name + ":3" + p + "Architecture \"amd64/x\" is not a valid architecture"},
            {with("Filename", "/pool/x.deb"),
             k_name + ":4" + p + "Filename \"/pool/x.deb\" is absolute"},
            {with("Filename", "pool/../../etc/x.deb"),
             k_name + ":4" + p + "Filename \"pool/../../etc/x.deb\" has \"..\""},
            {with("Filename", ".."), k_name + ":4" + p + "Filename \"..\" has \"..\""},
            {with("Size", "12a"), k_name + ":5" + p + "Size \"12a\" is not a number"},
            {with("Size", "-1"), k_name + ":5" + p + "Size \"-1\" is not a number"},
            {with("Size", "99999999999999999999"),
             k_name + ":5" + p + "Size \"99999999999999999999\" is not a number"},
            {with("SHA256", "abc"), k_name + ":6" + p + "SHA256 \"abc\" is not 64 hex digits"},
            {with("SHA256", k_sha + "0"),
             k_name + ":6" + p + "SHA256 \"" + k_sha + "0\" is not 64 hex digits"},
            {with("SHA256", std::string(63, 'a') + "z"),
             k_name + ":6" + p + "SHA256 \"" + std::string(63, 'a') + "z\" is not 64 hex digits"},
            {with("Source", "hello (2.10"),
             k_name + ":7" + p + "Source \"hello (2.10\" is not NAME or NAME (VERSION)"},
            {with("Source", "hel/lo"),
             k_name + ":7" + p + "Source \"hel/lo\" is not NAME or NAME (VERSION)"},
            {with("Source", "hello ()"),
             k_name + ":7" + p + "Source \"hello ()\" is not NAME or NAME (VERSION)"},
            {with("Source", "hello (1:)"),
             k_name + ":7" + p + "Source version \"1:\": nothing after the epoch"},
            {with("Essential", "maybe"),
             k_name + ":7" + p + "Essential \"maybe\" is neither yes nor no"},
            {with("Multi-Arch", "sometimes"),
             k_name + ":7" + p + "Multi-Arch \"sometimes\" is not no, same, foreign or allowed"},
            {with("Size", "1") + "\n" + with("Size", "x"),
             k_name + ":12: package \"hello\": Size \"x\" is not a number"},
            {"Package: a\nPackage: b\n", e + "2: \"Package\" appears twice in one paragraph"},
        };
        for (const Case& c : cases) {
            CAPTURE(c.text);
            auto parsed = parse_packages(c.text, k_name);
            REQUIRE_FALSE(parsed.ok());
            CHECK(parsed.error().text() == c.error);
        }
    }
}

}  // namespace ROOTLOCK_UNIT_ID
