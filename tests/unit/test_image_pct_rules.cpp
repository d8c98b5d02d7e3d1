// Unit tests for pct's rules over a rootfs: OS detection and release checks as Setup.pm does
// them, /bin/sh and machine-id, and what happens to /dev, owners, special files and xattrs.
#include <doctest/doctest.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "image/pct_rules.hpp"

using namespace rootlock::image;

namespace {

using Files = std::map<std::string, std::string>;

const std::string k_os = "/etc/os-release";

// A root's small files by path, the way the builder answers read_small_file.
PctInput input_with(Files files, std::vector<RootfsEntryFacts> entries = {},
                    std::string sh_machine = "x86_64") {
    PctInput input;
    input.entries = std::move(entries);
    input.sh_machine = std::move(sh_machine);
    input.read_small_file = [files = std::move(files)](std::string_view path) {
        auto found = files.find(std::string(path));
        return found == files.end() ? std::nullopt : std::optional<std::string>(found->second);
    };
    return input;
}

RootfsEntryFacts entry(std::string path, char kind, uint32_t uid = 0, uint32_t gid = 0,
                       std::vector<std::string> xattrs = {}) {
    return RootfsEntryFacts{std::move(path), kind, uid, gid, 0644, std::move(xattrs)};
}

Files debian12() {
    return {{k_os, "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nID=debian\n"},
            {"/etc/debian_version", "12.5\n"},
            {"/etc/machine-id", ""}};
}

Files with(Files files, const std::string& path, std::optional<std::string> content) {
    if (content)
        files[path] = *content;
    else
        files.erase(path);
    return files;
}

std::string describe(const std::vector<PctFinding>& findings) {
    std::string out;
    for (const auto& f : findings)
        out += (f.fatal ? "FATAL " : "note ") + f.path + ": " + f.problem + "\n";
    return out;
}

}  // namespace

TEST_SUITE("rootlock::image") {
    TEST_CASE("a Debian 12 root as mmdebstrap makes it only loses its /dev contents") {
        std::vector<RootfsEntryFacts> entries = {
            entry("/", 'd'),
            entry("/bin", 'l'),
            entry("/dev", 'd'),
            entry("/dev/null", 'c'),
            entry("/dev/pts", 'd'),
            entry("/dev/stdin", 'l'),
            entry("/etc/os-release", 'l'),
            entry("/usr/bin/ping", 'f', 0, 0, {"security.capability"}),
            entry("/var/mail", 'd', 0, 8),
        };
        auto findings = check_pct_rules(input_with(debian12(), entries));
        const std::vector<PctFinding> expected = {
            {"/dev/null", "left out: pct extracts nothing below /dev", false},
            {"/dev/pts", "left out: pct extracts nothing below /dev", false},
            {"/dev/stdin", "left out: pct extracts nothing below /dev", false},
        };
        CHECK_MESSAGE(findings == expected, describe(findings));
    }

    TEST_CASE("root-level rules give these exact findings") {
        struct Case {
            const char* name;
            Files files;
            std::string sh_machine;
            std::vector<RootfsEntryFacts> entries;
            std::vector<PctFinding> expected;
        };
        const Files base = debian12();
        const Files foo = with(with(base, k_os, "ID=foo\n"), "/etc/debian_version", std::nullopt);
        const Files ubuntu =
            with(with(base, k_os, "ID=ubuntu\n"), "/etc/debian_version", std::nullopt);
        auto lsb = [&](const std::string& text) { return with(ubuntu, "/etc/lsb-release", text); };
        auto debian_version = [&](const std::string& text) {
            return with(base, "/etc/debian_version", text);
        };
        const Case cases[] = {
            {"unknown ID",
             foo,
             "x86_64",
             {},
             {{k_os, "ID=foo is not a distribution pct knows", true}}},
            {"unknown ID in /usr/lib/os-release",
             with(with(foo, k_os, std::nullopt), "/usr/lib/os-release", "ID=foo\n"),
             "x86_64",
             {},
             {{"/usr/lib/os-release", "ID=foo is not a distribution pct knows", true}}},
            {"unknown ID, Debian by its release file",
             with(foo, "/etc/debian_version", "12.1\n"),
             "x86_64",
             {},
             {{k_os,
               "ID=foo is not a distribution pct knows; pct detects debian from "
               "/etc/debian_version",
               false}}},
            {"unknown ID, Ubuntu by lsb-release",
             with(foo, "/etc/lsb-release", "DISTRIB_ID=Ubuntu\nDISTRIB_RELEASE=22.04\n"),
             "x86_64",
             {},
             {{k_os,
               "ID=foo is not a distribution pct knows; pct detects ubuntu from "
               "/etc/lsb-release",
               false}}},
            {"unknown ID, NixOS by /nix/store",
             foo,
             "x86_64",
             {entry("/nix/store", 'd')},
             {{k_os, "ID=foo is not a distribution pct knows; pct detects nixos from /nix/store",
               false}}},
            {"no ID and nothing to fall back on",
             with(foo, k_os, "NAME=x\n"),
             "x86_64",
             {},
             {{k_os, "no ID, and none of the release files pct's fallback detection looks for",
               true}}},
            {"ID=0 is false to Perl",
             with(foo, k_os, "ID=0\n"),
             "x86_64",
             {},
             {{k_os, "no ID, and none of the release files pct's fallback detection looks for",
               true}}},
            {"no os-release",
             with(base, k_os, std::nullopt),
             "x86_64",
             {},
             {{k_os,
               "missing (and no /usr/lib/os-release): pct will treat the container as "
               "unmanaged",
               false}}},
            {"Debian without debian_version",
             with(base, "/etc/debian_version", std::nullopt),
             "x86_64",
             {},
             {{"/etc/debian_version", "missing: pct's Debian setup reads the release from it",
               true}}},
            {"empty debian_version",
             debian_version(""),
             "x86_64",
             {},
             {{"/etc/debian_version", "empty: pct's Debian setup reads the release from it",
               true}}},
            {"debian_version not a number",
             debian_version("unstable\n"),
             "x86_64",
             {},
             {{"/etc/debian_version",
               "release \"unstable\" is not a number pct's Debian setup can read", true}}},
            {"Debian too old",
             debian_version("3.1\n"),
             "x86_64",
             {},
             {{"/etc/debian_version", "Debian 3 is older than pct's minimum (4)", true}}},
            {"Debian newer than tested",
             debian_version("16.0\n"),
             "x86_64",
             {},
             {{"/etc/debian_version",
               "Debian 16 is newer than pct's tested maximum (14); pct warns", false}}},
            {"leading zeros do not count",
             debian_version("0003\n"),
             "x86_64",
             {},
             {{"/etc/debian_version", "Debian 3 is older than pct's minimum (4)", true}}},
            {"a huge major is newer than tested",
             debian_version("00000000123456789012\n"),
             "x86_64",
             {},
             {{"/etc/debian_version",
               "Debian 1234567 is newer than pct's tested maximum (14); pct warns", false}}},
            {"a sid codename is mapped",
             debian_version("duke/sid\n"),
             "x86_64",
             {},
             {{"/etc/debian_version",
               "Debian 15 is newer than pct's tested maximum (14); pct warns", false}}},
            {"Ubuntu without lsb-release",
             ubuntu,
             "x86_64",
             {},
             {{"/etc/lsb-release", "missing: pct's Ubuntu setup reads the release from it", true}}},
            {"lsb-release of another distribution",
             lsb("DISTRIB_ID=Mint\nDISTRIB_RELEASE=21.3\n"),
             "x86_64",
             {},
             {{"/etc/lsb-release",
               "no DISTRIB_ID=Ubuntu line: pct's Ubuntu setup refuses the container", true}}},
            {"lsb-release without a release",
             lsb("DISTRIB_ID=Ubuntu\nDISTRIB_RELEASE=\"22.04\"\n"),
             "x86_64",
             {},
             {{"/etc/lsb-release",
               "no DISTRIB_RELEASE=NN.NN line: pct's Ubuntu setup cannot read the release", true}}},
            {"unknown old Ubuntu",
             lsb("DISTRIB_ID=Ubuntu\nDISTRIB_RELEASE=16.12\n"),
             "x86_64",
             {},
             {{"/etc/lsb-release",
               "Ubuntu 16.12 is not in pct's list and older than 17.04: pct refuses it", true}}},
            {"unknown new Ubuntu",
             lsb("distrib_id=ubuntu\nDISTRIB_RELEASE=27.04\n"),
             "x86_64",
             {},
             {{"/etc/lsb-release", "Ubuntu 27.04 is not in pct's list of known releases; pct warns",
               false}}},
            {"/bin/sh not ELF",
             base,
             "",
             {},
             {{"/bin/sh",
               "missing or not ELF: pct reads the container's architecture from its ELF header",
               true}}},
            {"machine-id not empty",
             with(base, "/etc/machine-id", "0123456789abcdef\n"),
             "x86_64",
             {},
             {{"/etc/machine-id", "not empty: pct deletes it at create; ship it empty", false}}},
            {"control bytes in an ID are escaped",
             with(foo, k_os, "ID=\"a\\nb\"\n"),
             "x86_64",
             {},
             {{k_os, "ID=a\\x0ab is not a distribution pct knows", true}}},
        };
        for (const auto& c : cases) {
            CAPTURE(c.name);
            auto findings = check_pct_rules(input_with(c.files, c.entries, c.sh_machine));
            CHECK_MESSAGE(findings == c.expected, describe(findings));
        }
    }

    TEST_CASE("distributions pct knows pass without findings") {
        const char* const passing[][2] = {
            {"ID=ubuntu\n", "DISTRIB_ID=Ubuntu\nDISTRIB_RELEASE=24.04\n"},
            {"ID=rocky\n", ""},
            {"ID=\"almalinux\"\n", ""},
            {"ID=\"opensuse-leap\"\n", ""},
            {"ID=opensuse-tumbleweed\n", ""},  // unquoted: Setup.pm reads "opensuse"
            {"ID=openEuler\n", ""},
            {"ID=alpine\n", ""},
            {"ID=unmanaged\n", ""},
        };
        for (const auto& [os_release, lsb_release] : passing) {
            CAPTURE(os_release);
            Files files = {{k_os, os_release}};
            if (*lsb_release != '\0')
                files["/etc/lsb-release"] = lsb_release;
            auto findings = check_pct_rules(input_with(files));
            CHECK_MESSAGE(findings.empty(), describe(findings));
        }
        // Debian's own /sid values and point releases.
        for (const char* version : {"trixie/sid\n", "bookworm/sid", "4.0", "14.2\n"}) {
            CAPTURE(version);
            auto findings =
                check_pct_rules(input_with(with(debian12(), "/etc/debian_version", version)));
            CHECK_MESSAGE(findings.empty(), describe(findings));
        }
    }

    TEST_CASE("per-entry rules give these exact findings") {
        struct Case {
            RootfsEntryFacts entry;
            std::vector<PctFinding> expected;
        };
        const std::string left_out = "left out: pct extracts nothing below /dev";
        const Case cases[] = {
            {entry("/opt/app", 'f', 70000, 0),
             {{"/opt/app", "owner 70000 cannot be mapped in an unprivileged container", true}}},
            {entry("/opt/app", 'l', 0, 65536),
             {{"/opt/app", "group 65536 cannot be mapped in an unprivileged container", true}}},
            {entry("/opt/app", 'd', 65535, 65535), {}},
            {entry("/dev/console", 'c'), {{"/dev/console", left_out, false}}},
            {entry("./dev/null", 'c', 70000, 0), {{"./dev/null", left_out, false}}},
            {entry("dev/shm/", 'd'), {{"dev/shm/", left_out, false}}},
            {entry("/dev", 'd'), {}},
            {entry("/devices/tty", 'c'),
             {{"/devices/tty",
               "character device outside /dev: mknod fails in an unprivileged container", true}}},
            {entry("/srv/disk", 'b'),
             {{"/srv/disk", "block device outside /dev: mknod fails in an unprivileged container",
               true}}},
            {entry("/run/fifo", 'p'), {}},
            {entry("/run/sock", 's'),
             {{"/run/sock", "socket: a tar archive cannot hold one", true}}},
            {entry("/opt/x", 'x'), {{"/opt/x", "unknown entry kind 'x'", true}}},
            {entry("/usr/bin/ping", 'f', 0, 0, {"security.capability", "user.mime_type"}), {}},
            {entry("/opt/y", 'f', 0, 0, {"security.selinux", "user.a", "trusted.overlay.opaque"}),
             {{"/opt/y",
               "xattr security.selinux dropped: pct extracts only user.* and security.capability",
               false},
              {"/opt/y",
               "xattr trusted.overlay.opaque dropped: pct extracts only user.* and "
               "security.capability",
               false}}},
        };
        for (const auto& c : cases) {
            CAPTURE(c.entry.path);
            auto findings = check_pct_rules(input_with(debian12(), {c.entry}));
            CHECK_MESSAGE(findings == c.expected, describe(findings));
        }
    }

    TEST_CASE("root findings come first, then entries in input order") {
        auto findings =
            check_pct_rules(input_with(with(debian12(), "/etc/machine-id", "x"),
                                       {entry("/b", 'f', 70000), entry("/a", 's')}, ""));
        REQUIRE(findings.size() == 4);
        CHECK(findings[0].path == "/bin/sh");
        CHECK(findings[1].path == "/etc/machine-id");
        CHECK(findings[2].path == "/b");
        CHECK(findings[3].path == "/a");
    }

    TEST_CASE("a missing file reader is a root with no small files") {
        PctInput input;
        input.sh_machine = "aarch64";
        auto findings = check_pct_rules(input);
        REQUIRE(findings.size() == 1);
        CHECK(findings[0].path == k_os);
        CHECK_FALSE(findings[0].fatal);
    }

    TEST_CASE("os-release values are read the way Setup.pm reads them") {
        struct Case {
            std::string text;
            std::optional<std::string> id;
        };
        const Case cases[] = {
            {"ID=debian\n", "debian"},
            {"ID=\"opensuse-leap\"\n", "opensuse-leap"},
            {"ID=opensuse-leap\n", "opensuse"},
            {"ID='a b'\n", "a b"},
            {"  \tID=x\n", "x"},
            {"ID=a\nID=b\n", "b"},
            {"ID=\"q\\\"d\\$o\\\\l\\tt\\ze\"", "q\"d$o\\l\tt\\ze"},
            {"ID=\"unterminated\n", ""},
            {"ID='unterminated\n", ""},
            {"ID=debian\r\n", "debian"},
            {"ID=\n", ""},
            {"#ID=x\n", std::nullopt},
            {"IDX=x\nVERSION_ID=12\n", std::nullopt},
            {"ID\n", std::nullopt},
            {"", std::nullopt},
        };
        for (const auto& c : cases) {
            CAPTURE(c.text);
            CHECK(os_release_value(c.text, "ID") == c.id);
        }
    }

    TEST_CASE("IDs map to pct's plugins through its aliases") {
        CHECK(pct_distribution_for_id("debian") == "debian");
        CHECK(pct_distribution_for_id("rocky") == "centos");
        CHECK(pct_distribution_for_id("sles") == "opensuse");
        CHECK(pct_distribution_for_id("opensuse-slowroll") == "opensuse");
        CHECK(pct_distribution_for_id("arch") == "archlinux");
        CHECK(pct_distribution_for_id("openEuler") == "openeuler");
        CHECK(pct_distribution_for_id("Debian") == std::nullopt);
        CHECK(pct_distribution_for_id("") == std::nullopt);
    }

    TEST_CASE("the builder drops /dev contents and xattrs pct does not extract") {
        CHECK(pct_drops_entry("/dev/null"));
        CHECK(pct_drops_entry("./dev/pts/"));
        CHECK_FALSE(pct_drops_entry("/dev"));
        CHECK_FALSE(pct_drops_entry("./dev/"));
        CHECK_FALSE(pct_drops_entry("/device"));
        CHECK(pct_keeps_xattr("security.capability"));
        CHECK(pct_keeps_xattr("user.x"));
        CHECK_FALSE(pct_keeps_xattr("user"));
        CHECK_FALSE(pct_keeps_xattr("security.selinux"));
        CHECK_FALSE(pct_keeps_xattr("system.posix_acl_access"));
    }
}
