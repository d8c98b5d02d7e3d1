// Whether a foreign architecture's base can be made here: native, extract, or qemu through
// binfmt_misc (a registration file per CPU, "enabled" on its first line), against a fake
// binfmt_misc directory so the test does not depend on this machine's registrations.
#include <doctest/doctest.h>

#include "fetch/emulation.hpp"
#include "support/temp_dir.hpp"
#include "util/quote.hpp"

using rootlock::fetch::check_emulation;
using rootlock::fetch::qemu_cpu;
using rootlock::testing::TempDir;

TEST_SUITE("rootlock::fetch") {
    TEST_CASE("qemu's CPU names for Debian's architectures") {
        CHECK(qemu_cpu("arm64") == "aarch64");
        CHECK(qemu_cpu("armhf") == "arm");
        CHECK(qemu_cpu("ppc64el") == "ppc64le");
        CHECK(qemu_cpu("amd64") == "x86_64");
        CHECK(qemu_cpu("s390x") == "s390x");
    }

    TEST_CASE("native, extract and an enabled registration need nothing more") {
        TempDir binfmt;
        CHECK(check_emulation("amd64", "minbase", "x86_64", binfmt.path()).ok());
        CHECK(check_emulation("i386", "minbase", "x86_64", binfmt.path()).ok());
        CHECK(check_emulation("arm64", "extract", "x86_64", binfmt.path()).ok());
        CHECK(check_emulation("arm64", "minbase", "aarch64", binfmt.path()).ok());
        binfmt.write_file("qemu-aarch64", "enabled\ninterpreter /usr/libexec/qemu-binfmt/x\n");
        CHECK(check_emulation("arm64", "minbase", "x86_64", binfmt.path()).ok());
    }

    TEST_CASE("without emulation: one line naming the packages and the commands") {
        TempDir binfmt;
        auto missing = check_emulation("arm64", "minbase", "x86_64", binfmt.path());
        REQUIRE_FALSE(missing.ok());
        const std::string text = missing.error().text();
        CHECK(rootlock::util::is_one_line(text));
        CHECK(text.find("base.debian.arch arm64: mmdebstrap's minbase variant runs arm64 "
                        "maintainer scripts") == 0);
        CHECK(text.find("no qemu-aarch64 is registered") != std::string::npos);
        CHECK(text.find("apt-get install qemu-user-static binfmt-support arch-test") !=
              std::string::npos);
        CHECK(text.find("update-binfmts --enable qemu-aarch64") != std::string::npos);
        CHECK(text.find("variant = \"extract\"") != std::string::npos);
        binfmt.write_file("qemu-aarch64", "disabled\n");
        auto disabled = check_emulation("arm64", "minbase", "x86_64", binfmt.path());
        REQUIRE_FALSE(disabled.ok());
        CHECK(disabled.error().text().find("registered with binfmt_misc but disabled") !=
              std::string::npos);
    }
}
