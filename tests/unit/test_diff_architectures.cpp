// Unit tests for diff_locks between the locks of two architectures of one recipe (amd64 and
// arm64): the architecture changes, .debs paired by name across them, packages and sonames.
#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

#include "diff/lock_diff.hpp"
#include "pylock/pylock.hpp"

using namespace rootlock;

namespace {

const std::string k_sha_a = std::string(64, 'a');
const std::string k_sha_b = std::string(64, 'b');

pylock::LockDeb deb(const std::string& name, const std::string& version,
                    const std::string& architecture, const std::string& sha) {
    pylock::LockDeb d;
    d.name = name;
    d.version = version;
    d.architecture = architecture;
    d.archive = "debian";
    d.component = "main";
    d.filename = "pool/main/" + name.substr(0, 1) + "/" + name + "/" + name + "_" + version + "_" +
                 architecture + ".deb";
    d.size = 1000;
    d.sha256 = sha;
    return d;
}

pylock::LockPackage package(const std::string& name, const std::string& version,
                            const std::string& platform, std::vector<std::string> provides,
                            std::vector<std::string> needs) {
    pylock::LockPackage p;
    p.name = name;
    p.version = version;
    p.index = "https://pypi.org/simple";
    pylock::LockWheel wheel;
    wheel.name = name + "-" + version + "-cp311-cp311-" + platform + ".whl";
    wheel.hashes["sha256"] = k_sha_a;
    p.wheels.push_back(wheel);
    p.rootlock = pylock::PackageRootlockData{
        std::move(provides), std::move(needs), false, {}, std::nullopt, {}};
    return p;
}

// One of ours on a Debian bookworm base of `architecture` ("" as the lock writes amd64).
pylock::Lock on_debian(const std::string& architecture, const std::string& machine,
                       std::vector<pylock::LockDeb> debs,
                       std::vector<pylock::LockPackage> packages) {
    pylock::Lock lock;
    lock.packages = std::move(packages);
    pylock::LockRootlockData data;
    data.recipe = "../recipes/demo.toml";
    data.recipe_sha256 = k_sha_b;
    data.target = pylock::LockTarget{"3.11", "3.11.2", "2.36", machine, "", "", "", {}};
    data.base.kind = "debian";
    data.base.suite = "bookworm";
    data.base.variant = "minbase";
    data.base.architecture = architecture;
    data.base.debs = std::move(debs);
    lock.rootlock = data;
    return lock;
}

}  // namespace

TEST_SUITE("rootlock::diff") {
    TEST_CASE("an amd64 and an arm64 lock: architectures, .debs by name, packages, sonames") {
        const pylock::Lock amd64 =
            on_debian("", "x86_64",
                      {deb("libc6", "2.36-9+deb12u10", "amd64", k_sha_a),
                       deb("tzdata", "2025b-0+deb12u1", "all", k_sha_a),
                       deb("libgcc-s1", "12.2.0-14", "amd64", k_sha_a),
                       deb("only-amd64", "1.0", "amd64", k_sha_a)},
                      {package("numpy", "2.2.6", "manylinux_2_17_x86_64",
                               {"libscipy_openblas64_.so"}, {"libc.so.6", "ld-linux-x86-64.so.2"}),
                       package("intel-only", "1.0", "manylinux_2_17_x86_64", {}, {"libc.so.6"}),
                       package("pyyaml", "6.0.2", "manylinux_2_17_x86_64", {}, {"libc.so.6"})});
        const pylock::Lock arm64 =
            on_debian("arm64", "aarch64",
                      {deb("libc6", "2.36-9+deb12u10", "arm64", k_sha_b),
                       deb("tzdata", "2025b-0+deb12u1", "all", k_sha_a),
                       deb("libgcc-s1", "12.2.0-15", "arm64", k_sha_b)},
                      {package("numpy", "2.2.5", "manylinux_2_17_aarch64",
                               {"libscipy_openblas64_.so"}, {"libc.so.6", "ld-linux-aarch64.so.1"}),
                       package("pyyaml", "6.0.2", "manylinux_2_17_aarch64", {}, {"libc.so.6"})});
        const diff::LockDiff diff = diff::diff_locks(amd64, arm64);

        CHECK(diff.target == std::vector<diff::FieldChange>{{"arch", "x86_64", "aarch64"}});
        CHECK(diff.base == std::vector<diff::FieldChange>{{"architecture", "amd64", "arm64"}});

        // The same libc6 version built for each is no change; neither rebuilt nor moved.
        REQUIRE(diff.debian.size() == 2);
        CHECK(diff.debian[0].name == "libgcc-s1");
        CHECK(diff.debian[0].kind == diff::DebChangeKind::upgraded);
        CHECK(diff.debian[0].architecture == "arm64");
        CHECK(diff.debian[0].before == "12.2.0-14");
        CHECK(diff.debian[0].after == "12.2.0-15");
        CHECK(diff.debian[1].name == "only-amd64");
        CHECK(diff.debian[1].kind == diff::DebChangeKind::removed);
        CHECK(diff.debian[1].architecture == "amd64");

        REQUIRE(diff.packages.size() == 3);
        CHECK(diff.packages[0].name == "intel-only");
        CHECK(diff.packages[0].kinds == std::vector{diff::PackageChangeKind::removed});
        CHECK(diff.packages[1].name == "numpy");
        CHECK(diff.packages[1].kinds == std::vector{diff::PackageChangeKind::downgraded});
        // The same version's wheel for the other platform.
        CHECK(diff.packages[2].name == "pyyaml");
        CHECK(diff.packages[2].kinds == std::vector{diff::PackageChangeKind::wheel_changed});

        const std::vector<diff::SonameChange> sonames{
            {"ld-linux-aarch64.so.1", diff::SonameChangeKind::needed_added, {}, {"numpy"}},
            {"ld-linux-x86-64.so.2", diff::SonameChangeKind::needed_removed, {"numpy"}, {}}};
        CHECK(diff.sonames.changes == sonames);

        const std::string text = diff::render_diff_text(diff, false);
        CAPTURE(text);
        CHECK(text.find("~ arch x86_64 -> aarch64\n") != std::string::npos);
        CHECK(text.find("~ architecture amd64 -> arm64\n") != std::string::npos);
        CHECK(text.find("~ libgcc-s1 12.2.0-14 -> 12.2.0-15 (arm64) from debian\n") !=
              std::string::npos);
        CHECK(text.find("libc6") == std::string::npos);
    }

    TEST_CASE(
        "between two architectures, a .deb of the same version with another digest is no "
        "change, but an arch-all one is still rebuilt") {
        const pylock::Lock amd64 = on_debian("", "x86_64",
                                             {deb("libc6", "2.36-9", "amd64", k_sha_a),
                                              deb("tzdata", "2025b-0+deb12u1", "all", k_sha_a)},
                                             {});
        const pylock::Lock arm64 = on_debian("arm64", "aarch64",
                                             {deb("libc6", "2.36-9", "arm64", k_sha_b),
                                              deb("tzdata", "2025b-0+deb12u1", "all", k_sha_b)},
                                             {});
        const diff::LockDiff diff = diff::diff_locks(amd64, arm64);
        REQUIRE(diff.debian.size() == 1);
        CHECK(diff.debian[0].name == "tzdata");
        CHECK(diff.debian[0].kind == diff::DebChangeKind::rebuilt);
        // Within one architecture the rule is the old one: same version, other digest, rebuilt.
        const pylock::Lock arm64_rebuilt =
            on_debian("arm64", "aarch64",
                      {deb("libc6", "2.36-9", "arm64", k_sha_a),
                       deb("tzdata", "2025b-0+deb12u1", "all", k_sha_b)},
                      {});
        const diff::LockDiff same_arch = diff::diff_locks(arm64, arm64_rebuilt);
        REQUIRE(same_arch.debian.size() == 1);
        CHECK(same_arch.debian[0].name == "libc6");
        CHECK(same_arch.debian[0].kind == diff::DebChangeKind::rebuilt);
    }
}
