// Unit tests for dpkg's database: status paragraphs as dpkg writes them (Conffiles, multi-line
// Description, Multi-Arch), .md5sums lists, every malformed form, and this machine's own status.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "debian/dpkg_status.hpp"

namespace ROOTLOCK_UNIT_ID {

using rootlock::debian::info_stem;
using rootlock::debian::InstalledPackage;
using rootlock::debian::Md5sumEntry;
using rootlock::debian::parse_dpkg_status;
using rootlock::debian::parse_md5sums;
using namespace std::string_literals;

namespace {

const std::string k_name = "status";
const std::string k_md5 = "cc3493ecd2d09837ffdcc3e25fdfff18";

const std::string k_status =
    "Package: libc6\n"
    "Status: install ok installed\n"
    "Priority: optional\n"
    "Section: libs\n"
    "Installed-Size: 12986\n"
    "Maintainer: GNU Libc Maintainers <debian-glibc@lists.debian.org>\n"
    "Architecture: i386\n"
    "Multi-Arch: same\n"
    "Source: glibc\n"
    "Version: 2.36-9+deb12u10\n"
    "Depends: libgcc-s1\n"
    "Conffiles:\n"
    " /etc/ld.so.conf.d/i386-linux-gnu.conf 1f0a5d4e0bb2c5bc1d0d5b3a4c1e2f30\n"
    "Description: GNU C Library: Shared libraries\n"
    " Contains the standard libraries that are used by nearly all programs on\n"
    " the system.\n"
    "\n"
    "Package: adduser\n"
    "Status: install ok installed\n"
    "Priority: important\n"
    "Section: admin\n"
    "Installed-Size: 849\n"
    "Maintainer: Debian Adduser Developers <adduser@packages.debian.org>\n"
    "Architecture: all\n"
    "Multi-Arch: foreign\n"
    "Version: 3.134\n"
    "Depends: passwd\n"
    "Suggests: liblocale-gettext-perl, perl, cron, quota\n"
    "Conffiles:\n"
    " /etc/adduser.conf cc3493ecd2d09837ffdcc3e25fdfff18\n"
    " /etc/deluser.conf 11a06baf8245fd8d690b99024d228c1f\n"
    " /etc/old name.conf 11a06baf8245fd8d690b99024d228c1f obsolete\n"
    " /etc/gone.conf 11a06baf8245fd8d690b99024d228c1f remove-on-upgrade\n"
    " /etc/new.conf newconffile\n"
    "Description: add and remove users and groups\n"
    " This package includes the 'adduser' and 'deluser' commands for creating\n"
    " and removing users.\n"
    " .\n"
    "  - 'adduser' creates new users and groups and adds existing users to\n"
    "    existing groups;\n"
    "Homepage: https://salsa.debian.org/debian/adduser\n"
    "\n"
    "Package: libc6\n"
    "Status: install ok installed\n"
    "Architecture: amd64\n"
    "Multi-Arch: same\n"
    "Source: glibc (2.36-9+deb12u10)\n"
    "Version: 2.36-9+deb12u10+b1\n"
    "\n"
    "Package: nano\n"
    "Status: deinstall ok config-files\n"
    "Architecture: amd64\n"
    "Version: 7.2-1+deb12u1\n"
    "\n"
    "Package: vim-tiny\n"
    "Status: purge ok not-installed\n"
    "\n"
    "Package: bash\n"
    "Essential: yes\n"
    "Status: install reinstreq half-installed\n"
    "Architecture: amd64\n"
    "Version: 5.2.15-2+b7\n"
    "Source: bash (5.2.15-2)\n";

std::string read_file(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
}

}  // namespace

TEST_SUITE("rootlock::debian") {
    TEST_CASE("a status file gives every package sorted by name and architecture") {
        auto parsed = parse_dpkg_status(k_status, k_name);
        REQUIRE(parsed.ok());
        const auto& packages = parsed.value();
        REQUIRE(packages.size() == 6);
        CHECK(packages[0].name == "adduser");
        CHECK(packages[1].name == "bash");
        CHECK(packages[2].name == "libc6");
        CHECK(packages[2].architecture == "amd64");
        CHECK(packages[3].name == "libc6");
        CHECK(packages[3].architecture == "i386");
        CHECK(packages[4].name == "nano");
        CHECK(packages[5].name == "vim-tiny");

        const InstalledPackage& adduser = packages[0];
        CHECK(adduser.installed());
        CHECK(adduser.version == "3.134");
        CHECK(adduser.architecture == "all");
        CHECK(adduser.status == "install ok installed");
        CHECK(adduser.source == "adduser");
        CHECK(adduser.source_version == "3.134");
        CHECK(adduser.multi_arch == "foreign");
        const std::vector<std::string> conffiles = {"/etc/adduser.conf", "/etc/deluser.conf",
                                                    "/etc/old name.conf", "/etc/gone.conf",
                                                    "/etc/new.conf"};
        CHECK(adduser.conffiles == conffiles);
        CHECK(info_stem(adduser) == "adduser");

        CHECK(packages[2].source == "glibc");
        CHECK(packages[2].source_version == "2.36-9+deb12u10");
        CHECK(packages[2].version == "2.36-9+deb12u10+b1");
        CHECK(info_stem(packages[2]) == "libc6:amd64");
        CHECK(packages[3].source_version == "2.36-9+deb12u10");
        CHECK(packages[3].conffiles ==
              std::vector<std::string>{"/etc/ld.so.conf.d/i386-linux-gnu.conf"});
        CHECK(info_stem(packages[3]) == "libc6:i386");
    }

    TEST_CASE("only a status ending in installed counts as installed") {
        auto parsed = parse_dpkg_status(k_status, k_name);
        REQUIRE(parsed.ok());
        CHECK_FALSE((*parsed)[1].installed());  // half-installed
        CHECK_FALSE((*parsed)[4].installed());  // config-files
        CHECK_FALSE((*parsed)[5].installed());  // not-installed
        CHECK((*parsed)[5].version.empty());    // a purged entry may have no Version
        CHECK((*parsed)[5].architecture.empty());
        CHECK_FALSE(InstalledPackage{}.installed());
    }

    TEST_CASE("paragraphs without a Package are passed over") {
        auto parsed = parse_dpkg_status(
            "Foo: bar\n\nPackage: a\nStatus: install ok installed\n"
            "Version: 1\nArchitecture: all\n",
            k_name);
        REQUIRE(parsed.ok());
        REQUIRE(parsed->size() == 1);
        CHECK((*parsed)[0].name == "a");
    }

    TEST_CASE("malformed status paragraphs are rejected naming the package") {
        struct Case {
            std::string text;
            std::string error;
        };
        const std::string ok = "Status: install ok installed\n";
        const std::string va = "Version: 1.0\nArchitecture: amd64\n";
        const std::string e = k_name + ":";
        const std::string p = ": package \"x\": ";
        const Case cases[] = {
            {"Package: x\n" + va, e + "1" + p + "no Status"},
            {"Package: x\nStatus: installed\n" + va,
             e + "2" + p + "Status \"installed\" is not WANT FLAG STATE"},
            {"Package: x\n" + ok + "Architecture: amd64\n", e + "1" + p + "no Version"},
            {"Package: x\n" + ok + "Version: 1.0\n", e + "1" + p + "no Architecture"},
            {"Package: x\n" + ok + "Version: 1.0-\nArchitecture: amd64\n",
             e + "3" + p + "Version \"1.0-\": the revision is empty"},
            {"Package: x\nStatus: deinstall ok config-files\nVersion: x1\n",
             e + "3" + p + "Version \"x1\": the upstream version does not start with a digit"},
            {"Package: x\n" + ok + "Version: 1.0\nArchitecture: ../amd64\n",
             e + "4" + p + "Architecture \"../amd64\" is not a valid architecture"},
            {"Package: ../x\n" + ok + va, e + "1: package \"../x\": not a valid package name"},
            {"Package: x\n" + ok + va + "Source: y (1.0\n",
             e + "5" + p + "Source \"y (1.0\" is not NAME or NAME (VERSION)"},
            {"Package: x\n" + ok + va + "Source: y (:1)\n",
             e + "5" + p + "Source version \":1\": the epoch is empty"},
            {"Package: x\n" + ok + va + "Multi-Arch: SAME\n",
             e + "5" + p + "Multi-Arch \"SAME\" is not no, same, foreign or allowed"},
            {"Package: x\n" + ok + va + "Conffiles:\n etc/x.conf " + k_md5 + "\n",
             e + "6" + p + "Conffiles line \"etc/x.conf " + k_md5 + "\" is not \"/PATH HASH\""},
            {"Package: x\n" + ok + va + "Conffiles:\n /etc/a " + k_md5 + "\n /etc/x.conf\n",
             e + "7" + p + "Conffiles line \"/etc/x.conf\" is not \"/PATH HASH\""},
            {"Package: x\n" + ok + va + "Conffiles:\n /etc/x.conf 1234\n",
             e + "6" + p + "Conffiles line \"/etc/x.conf 1234\" is not \"/PATH HASH\""},
            {"Package: x\n" + ok + va + "Conffiles:\n " + k_md5 + "\n",
             e + "6" + p + "Conffiles line \"" + k_md5 + "\" is not \"/PATH HASH\""},
            {"Package: x\n" + ok + va + "Conffiles:\n /etc/x obsolete\n",
             e + "6" + p + "Conffiles line \"/etc/x obsolete\" is not \"/PATH HASH\""},
            {"Package: x\n" + ok + va + "\nPackage: x\n" + ok + va,
             e + "6: package \"x\" appears twice for architecture \"amd64\""},
            {"Package: x\nPackage: y\n", e + "2: \"Package\" appears twice in one paragraph"},
        };
        for (const Case& c : cases) {
            CAPTURE(c.text);
            auto parsed = parse_dpkg_status(c.text, k_name);
            REQUIRE_FALSE(parsed.ok());
            CHECK(parsed.error().text() == c.error);
        }
    }

    TEST_CASE("md5sums lists give absolute paths in every spelling md5sum accepts") {
        const std::string text = k_md5 + "  usr/bin/dpkg\n" +           // as dpkg writes it
                                 k_md5 + " usr/bin/one space\n" +       // one space
                                 k_md5 + " *usr/share/binary-mode\n" +  // md5sum -b
                                 "CC3493ECD2D09837FFDCC3E25FDFFF18  usr/upper\n" + "\\" + k_md5 +
                                 "  usr/back\\\\slash\\nnewline\n" + k_md5 +
                                 "  /usr/already-absolute";
        auto parsed = parse_md5sums(text, "dpkg.md5sums");
        REQUIRE(parsed.ok());
        REQUIRE(parsed->size() == 6);
        CHECK((*parsed)[0].md5 == k_md5);
        CHECK((*parsed)[0].path == "/usr/bin/dpkg");
        CHECK((*parsed)[1].path == "/usr/bin/one space");
        CHECK((*parsed)[2].path == "/usr/share/binary-mode");
        CHECK((*parsed)[3].md5 == k_md5);
        CHECK((*parsed)[4].path == "/usr/back\\slash\nnewline");
        CHECK((*parsed)[5].path == "/usr/already-absolute");
        CHECK(parse_md5sums("", "empty.md5sums")->empty());
    }

    TEST_CASE("malformed md5sums lines are rejected with the file and line") {
        struct Case {
            std::string text;
            std::string error;
        };
        const std::string f = "x.md5sums";
        const std::string good = k_md5 + "  usr/a\n";
        const Case cases[] = {
            {"abc  usr/a\n", f + ":1: digest \"abc\" is not 32 hex digits"},
            {good + k_md5.substr(1) + "g  usr/b\n",
             f + ":2: digest \"" + k_md5.substr(1) + "g\" is not 32 hex digits"},
            {good + "\n" + good, f + ":2: digest \"\" is not 32 hex digits"},
            {"usr/a\n", f + ":1: digest \"usr/a\" is not 32 hex digits"},
            {k_md5 + "\n", f + ":1: no path after the digest"},
            {k_md5 + "  \n", f + ":1: no path after the digest"},
            {k_md5 + " *\n", f + ":1: no path after the digest"},
            {k_md5 + "  /\n", f + ":1: no path after the digest"},
            {good + k_md5 + "  usr/../../etc/shadow\n",
             f + ":2: path \"usr/../../etc/shadow\" has \"..\""},
            {k_md5 + "  ..\n", f + ":1: path \"..\" has \"..\""},
            {k_md5 + "  usr/a\0b\n"s, f + ":1: a NUL byte"},
        };
        for (const Case& c : cases) {
            CAPTURE(c.text);
            auto parsed = parse_md5sums(c.text, f);
            REQUIRE_FALSE(parsed.ok());
            CHECK(parsed.error().text() == c.error);
        }
    }

    TEST_CASE("this machine's dpkg database parses and holds dpkg installed") {
        const std::filesystem::path status_path = "/var/lib/dpkg/status";
        if (!std::filesystem::exists(status_path)) {
            MESSAGE("no /var/lib/dpkg/status here; skipped");
            return;
        }
        const std::string text = read_file(status_path);
        auto parsed = parse_dpkg_status(text, status_path.string());
        REQUIRE_MESSAGE(parsed.ok(), (parsed.ok() ? "" : parsed.error().text()));
        size_t paragraphs = 0;
        for (size_t at = text.find("Package: "); at != std::string::npos;
             at = text.find("Package: ", at + 1)) {
            if (at == 0 || text[at - 1] == '\n')
                ++paragraphs;
        }
        CHECK(parsed->size() == paragraphs);
        const InstalledPackage* dpkg = nullptr;
        for (const InstalledPackage& package : parsed.value()) {
            if (package.name == "dpkg")
                dpkg = &package;
        }
        REQUIRE(dpkg != nullptr);
        CHECK(dpkg->installed());
        CHECK_FALSE(dpkg->version.empty());

        const std::filesystem::path info = "/var/lib/dpkg/info";
        size_t lists = 0;
        for (const InstalledPackage& package : parsed.value()) {
            const auto path = info / (info_stem(package) + ".md5sums");
            if (!package.installed() || !std::filesystem::exists(path))
                continue;
            auto entries = parse_md5sums(read_file(path), path.string());
            CHECK_MESSAGE(entries.ok(), (entries.ok() ? "" : entries.error().text()));
            ++lists;
            if (package.name == "dpkg" && entries.ok()) {
                bool found = false;
                for (const Md5sumEntry& entry : entries.value())
                    found = found || entry.path == "/usr/bin/dpkg";
                CHECK(found);
            }
        }
        MESSAGE(parsed->size() << " packages and " << lists << " md5sums lists parsed");
        CHECK(lists > 0);
    }
}

}  // namespace ROOTLOCK_UNIT_ID
