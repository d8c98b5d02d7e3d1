// Unit tests for diff_locks: every package kind on its own, target and base fields, the Debian
// base's archives and .debs, the soname delta (providers, GLIBC maxima, CUDA majors), foreign
// locks, and what must not count.
#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "diff/lock_diff.hpp"
#include "pylock/pylock.hpp"

namespace ROOTLOCK_UNIT_ID {

using namespace rootlock;

namespace {

const std::string k_pypi = "https://pypi.org/simple";
const std::string k_sha_a = std::string(64, 'a');
const std::string k_sha_b = std::string(64, 'b');

pylock::LockPackage package(const std::string& name, const std::string& version,
                            const std::string& sha = k_sha_a) {
    pylock::LockPackage p;
    p.name = name;
    p.version = version;
    p.index = k_pypi;
    pylock::LockWheel wheel;
    wheel.name = name + "-" + version + "-py3-none-any.whl";
    wheel.url = "https://files.example/" + wheel.name;
    wheel.hashes["sha256"] = sha;
    p.wheels.push_back(wheel);
    return p;
}

pylock::LockPackage with_sonames(pylock::LockPackage p, std::vector<std::string> provides,
                                 std::vector<std::string> needs = {},
                                 std::vector<std::string> needs_versions = {}) {
    p.rootlock = pylock::PackageRootlockData{std::move(provides),       std::move(needs), false,
                                             std::move(needs_versions), std::nullopt,     {}};
    return p;
}

pylock::Lock lock_of(std::vector<pylock::LockPackage> packages) {
    pylock::Lock lock;
    lock.packages = std::move(packages);
    return lock;
}

pylock::Lock ours(std::vector<pylock::LockPackage> packages = {}) {
    pylock::Lock lock = lock_of(std::move(packages));
    pylock::LockRootlockData data;
    data.recipe = "recipe.toml";
    data.recipe_sha256 = k_sha_b;
    data.target =
        pylock::LockTarget{"3.11", "3.11.2", "2.36", "x86_64", "12.8", "570.133.07", "", {}};
    data.base.kind = "tarball";
    data.base.url = "https://example.org/base.tar.zst";
    data.base.sha256 = k_sha_a;
    lock.rootlock = data;
    return lock;
}

// The single package change of a diff whose only difference is in the "other" group.
diff::PackageChange only_package_change(const diff::LockDiff& diff) {
    REQUIRE(diff.packages.size() == 1);
    CHECK(diff.torch.empty());
    CHECK(diff.nvidia.empty());
    CHECK(diff.target.empty());
    CHECK(diff.base.empty());
    return diff.packages.front();
}

std::vector<diff::PackageChangeKind> kinds_between(const std::string& before,
                                                   const std::string& after) {
    const diff::LockDiff diff =
        diff::diff_locks(lock_of({package("x", before)}), lock_of({package("x", after)}));
    REQUIRE(diff.packages.size() == 1);
    CHECK(diff.packages[0].before == before);
    CHECK(diff.packages[0].after == after);
    return diff.packages[0].kinds;
}

pylock::LockDebArchive archive(const std::string& name, const std::string& url,
                               const std::string& suite) {
    pylock::LockDebArchive a;
    a.name = name;
    a.url = url;
    a.suite = suite;
    a.components = {"main"};
    a.date = "1762077600";
    return a;
}

pylock::LockDeb deb(const std::string& name, const std::string& version,
                    const std::string& archive_name = "debian", const std::string& sha = k_sha_a,
                    const std::string& architecture = "amd64") {
    pylock::LockDeb d;
    d.name = name;
    d.version = version;
    d.architecture = architecture;
    d.archive = archive_name;
    d.component = "main";
    d.filename = "pool/main/" + name.substr(0, 1) + "/" + name + "/" + name + "_" + version + "_" +
                 architecture + ".deb";
    d.size = 1000;
    d.sha256 = sha;
    return d;
}

// One of ours on a Debian bookworm base with the security archive beside the mirror.
pylock::Lock on_debian(std::vector<pylock::LockDeb> debs) {
    pylock::Lock lock = ours();
    pylock::LockBase& base = lock.rootlock->base;
    base = pylock::LockBase{};
    base.kind = "debian";
    base.suite = "bookworm";
    base.mirror = "http://deb.debian.org/debian";
    base.variant = "minbase";
    base.archives = {
        archive("debian", "http://deb.debian.org/debian", "bookworm"),
        archive("security", "http://deb.debian.org/debian-security", "bookworm-security")};
    base.debs = std::move(debs);
    return lock;
}

// The single .deb change of a diff whose only difference is in the debian group.
diff::DebChange only_deb_change(const diff::LockDiff& diff) {
    REQUIRE(diff.debian.size() == 1);
    CHECK(diff.base.empty());
    CHECK(diff.packages.empty());
    CHECK_FALSE(diff.same());
    return diff.debian.front();
}

diff::DebChangeKind deb_kind_between(const std::string& before, const std::string& after) {
    const diff::DebChange change = only_deb_change(
        diff::diff_locks(on_debian({deb("libc6", before)}), on_debian({deb("libc6", after)})));
    CHECK(change.before == before);
    CHECK(change.after == after);
    return change.kind;
}

pylock::Lock read(const std::string& text) {
    auto parsed = pylock::read_pylock(text, "pylock.test.toml");
    if (!parsed.ok())
        FAIL(parsed.error().text());
    return parsed.value();
}

}  // namespace

TEST_SUITE("rootlock::diff") {
    TEST_CASE("a package only in the second lock is added, only in the first removed") {
        const pylock::Lock one = lock_of({package("a", "1.0")});
        const pylock::Lock two = lock_of({package("a", "1.0"), package("b", "2.0")});
        diff::PackageChange added = only_package_change(diff::diff_locks(one, two));
        CHECK(added.name == "b");
        CHECK(added.before == std::nullopt);
        CHECK(added.after == "2.0");
        CHECK(added.kinds == std::vector{diff::PackageChangeKind::added});
        CHECK(added.after_index == k_pypi);

        diff::PackageChange removed = only_package_change(diff::diff_locks(two, one));
        CHECK(removed.name == "b");
        CHECK(removed.before == "2.0");
        CHECK(removed.after == std::nullopt);
        CHECK(removed.kinds == std::vector{diff::PackageChangeKind::removed});
    }

    TEST_CASE("versions are ordered by PEP 440, not as text") {
        using K = diff::PackageChangeKind;
        CHECK(kinds_between("2.9", "2.10") == std::vector{K::upgraded});
        CHECK(kinds_between("2.10", "2.9") == std::vector{K::downgraded});
        CHECK(kinds_between("1.0rc1", "1.0") == std::vector{K::upgraded});
        CHECK(kinds_between("1.0", "1.0rc1") == std::vector{K::downgraded});
        CHECK(kinds_between("2.8.0+cu128", "2.9.1+cu130") == std::vector{K::upgraded});
        CHECK(kinds_between("1.0.post1", "1.0") == std::vector{K::downgraded});
    }

    TEST_CASE("versions that are not PEP 440 fall back to text order") {
        using K = diff::PackageChangeKind;
        CHECK(kinds_between("abc", "abd") == std::vector{K::upgraded});
        CHECK(kinds_between("2.0", "1-weird-") == std::vector{K::downgraded});
    }

    TEST_CASE("versions equal under PEP 440 are the same version") {
        const diff::LockDiff diff =
            diff::diff_locks(lock_of({package("x", "1.0")}), lock_of({package("x", "1.0.0")}));
        // The wheel file name carries the version text, so only the wheel differs.
        const diff::PackageChange change = only_package_change(diff);
        CHECK(change.kinds == std::vector{diff::PackageChangeKind::wheel_changed});
    }

    TEST_CASE("the same version from another index is index-moved") {
        pylock::LockPackage moved = package("numpy", "2.2.6");
        moved.index = "https://mirror.example/simple";
        const diff::PackageChange change = only_package_change(
            diff::diff_locks(lock_of({package("numpy", "2.2.6")}), lock_of({moved})));
        CHECK(change.kinds == std::vector{diff::PackageChangeKind::index_moved});
        CHECK(change.before_index == k_pypi);
        CHECK(change.after_index == "https://mirror.example/simple");
        CHECK(change.rebuilt.empty());
    }

    TEST_CASE("the same wheel file with another digest is rebuilt") {
        const diff::PackageChange change = only_package_change(diff::diff_locks(
            lock_of({package("foo", "1.0", k_sha_a)}), lock_of({package("foo", "1.0", k_sha_b)})));
        CHECK(change.kinds == std::vector{diff::PackageChangeKind::rebuilt});
        CHECK(change.rebuilt == std::vector{diff::RebuiltWheel{"foo-1.0-py3-none-any.whl", "sha256",
                                                               k_sha_a, k_sha_b}});
        CHECK(change.before == "1.0");
        CHECK(change.after == "1.0");
    }

    TEST_CASE("a package moved to another index and rebuilt carries both kinds") {
        pylock::LockPackage after = package("foo", "1.0", k_sha_b);
        after.index = "https://other.example/simple";
        const diff::PackageChange change = only_package_change(
            diff::diff_locks(lock_of({package("foo", "1.0", k_sha_a)}), lock_of({after})));
        CHECK(change.kinds ==
              std::vector{diff::PackageChangeKind::index_moved, diff::PackageChangeKind::rebuilt});
    }

    TEST_CASE("a rebuilt wheel without sha256 is compared on a digest both locks have") {
        pylock::LockPackage before = package("foo", "1.0");
        pylock::LockPackage after = package("foo", "1.0");
        before.wheels[0].hashes = {{"sha512", std::string(128, 'c')}};
        after.wheels[0].hashes = {{"blake2b", "x"}, {"sha512", std::string(128, 'd')}};
        const diff::PackageChange change =
            only_package_change(diff::diff_locks(lock_of({before}), lock_of({after})));
        REQUIRE(change.rebuilt.size() == 1);
        CHECK(change.rebuilt[0].algorithm == "sha512");
        CHECK(change.rebuilt[0].after == std::string(128, 'd'));

        after.wheels[0].hashes = {{"blake2b", "x"}};  // nothing in common: nothing to tell
        CHECK(diff::diff_locks(lock_of({before}), lock_of({after})).same());
    }

    TEST_CASE("the same version with another wheel file name is wheel-changed") {
        pylock::LockPackage before = package("foo", "1.0");
        pylock::LockPackage after = package("foo", "1.0", k_sha_b);
        before.wheels[0].name = "foo-1.0-cp311-cp311-manylinux_2_17_x86_64.whl";
        after.wheels[0].name = "foo-1.0-cp311-cp311-manylinux_2_28_x86_64.whl";
        const diff::PackageChange change =
            only_package_change(diff::diff_locks(lock_of({before}), lock_of({after})));
        CHECK(change.kinds == std::vector{diff::PackageChangeKind::wheel_changed});
        CHECK(change.wheels_removed ==
              std::vector<std::string>{"foo-1.0-cp311-cp311-manylinux_2_17_x86_64.whl"});
        CHECK(change.wheels_added ==
              std::vector<std::string>{"foo-1.0-cp311-cp311-manylinux_2_28_x86_64.whl"});
        CHECK(change.rebuilt.empty());
    }

    TEST_CASE("a wheel URL change alone (a mirror) is not a difference") {
        pylock::LockPackage mirrored = package("foo", "1.0");
        mirrored.wheels[0].url = "https://mirror.example/f/foo-1.0-py3-none-any.whl";
        mirrored.wheels[0].upload_time = "2025-01-01T00:00:00Z";
        mirrored.wheels[0].size = 99;
        CHECK(diff::diff_locks(lock_of({package("foo", "1.0")}), lock_of({mirrored})).same());
    }

    TEST_CASE("a wheel without a name key is named by its percent-decoded URL") {
        pylock::LockPackage named = package("torch", "2.8.0+cu128");
        pylock::LockPackage unnamed = named;
        unnamed.wheels[0].name.clear();
        unnamed.wheels[0].url =
            "https://download.example/whl/torch-2.8.0%2Bcu128-py3-none-any.whl#sha256=x";
        CHECK(diff::diff_locks(lock_of({named}), lock_of({unnamed})).same());
    }

    TEST_CASE("packages go to the torch, nvidia or other group, each sorted by name") {
        const pylock::Lock before = lock_of({});
        const pylock::Lock after =
            lock_of({package("zlib-ng", "1"), package("triton", "3.4.0"),
                     package("nvidia-nccl-cu12", "2.27.3"), package("torchvision", "0.23.0"),
                     package("torch", "2.8.0"), package("nvidia-cublas-cu12", "12.8.4.1"),
                     package("attrs", "25.3.0"), package("nvidia", "1")});
        const diff::LockDiff diff = diff::diff_locks(before, after);
        auto names = [](const std::vector<diff::PackageChange>& list) {
            std::vector<std::string> out;
            for (const auto& change : list)
                out.push_back(change.name);
            return out;
        };
        CHECK(names(diff.torch) == std::vector<std::string>{"torch", "torchvision", "triton"});
        CHECK(names(diff.nvidia) ==
              std::vector<std::string>{"nvidia-cublas-cu12", "nvidia-nccl-cu12"});
        CHECK(names(diff.packages) == std::vector<std::string>{"attrs", "nvidia", "zlib-ng"});
    }

    TEST_CASE("several entries of one name pair equal versions first") {
        // Foreign locks may carry one entry per marker.
        const pylock::Lock before = lock_of({package("x", "1.0"), package("x", "2.0")});
        const pylock::Lock after =
            lock_of({package("x", "2.0"), package("x", "3.0"), package("x", "4.0")});
        const diff::LockDiff diff = diff::diff_locks(before, after);
        REQUIRE(diff.packages.size() == 3);
        CHECK(diff.packages[0].kinds == std::vector{diff::PackageChangeKind::removed});
        CHECK(diff.packages[0].before == "1.0");
        CHECK(diff.packages[1].kinds == std::vector{diff::PackageChangeKind::added});
        CHECK(diff.packages[1].after == "3.0");
        CHECK(diff.packages[2].after == "4.0");

        const diff::LockDiff single =
            diff::diff_locks(before, lock_of({package("x", "2.0"), package("x", "3.0")}));
        REQUIRE(single.packages.size() == 1);
        CHECK(single.packages[0].kinds == std::vector{diff::PackageChangeKind::upgraded});
        CHECK(single.packages[0].before == "1.0");
    }

    TEST_CASE("target fields compare the full Python version when both locks have it") {
        pylock::Lock before = ours();
        pylock::Lock after = ours();
        after.rootlock->target.python_full = "3.11.9";
        CHECK(diff::diff_locks(before, after).target ==
              std::vector<diff::FieldChange>{{"python", "3.11.2", "3.11.9"}});
        after.rootlock->target.python_full.clear();
        CHECK(diff::diff_locks(before, after).same());
        after.rootlock->target.python = "3.12";
        CHECK(diff::diff_locks(before, after).target ==
              std::vector<diff::FieldChange>{{"python", "3.11", "3.12"}});
    }

    TEST_CASE("target fields: glibc, arch, CUDA major, driver and the torch build") {
        pylock::Lock before = ours();
        pylock::Lock after = ours();
        after.rootlock->target.cuda = "12.6";  // the same major
        CHECK(diff::diff_locks(before, after).same());
        after.rootlock->target = pylock::LockTarget{"3.11", "3.11.2",    "2.41",        "aarch64",
                                                    "13.0", "580.65.06", "2.9.1+cu130", {}};
        const std::vector<diff::FieldChange> expected{{"glibc", "2.36", "2.41"},
                                                      {"arch", "x86_64", "aarch64"},
                                                      {"cuda-major", "12", "13"},
                                                      {"driver", "570.133.07", "580.65.06"},
                                                      {"torch", "", "2.9.1+cu130"}};
        CHECK(diff::diff_locks(before, after).target == expected);
    }

    TEST_CASE("base fields differ one change per field") {
        pylock::Lock before = ours();
        pylock::Lock after = ours();
        after.rootlock->base = pylock::LockBase{};
        after.rootlock->base.kind = "debian";
        after.rootlock->base.sha256 = k_sha_b;
        after.rootlock->base.suite = "bookworm";
        after.rootlock->base.mirror = "http://deb.debian.org/debian";
        after.rootlock->base.variant = "minbase";
        after.rootlock->base.include = {"python3", "libgomp1"};
        after.rootlock->base.size = 7;  // follows the sha256, never shown on its own
        const std::vector<diff::FieldChange> expected{
            {"kind", "tarball", "debian"},
            {"url", "https://example.org/base.tar.zst", ""},
            {"sha256", k_sha_a, k_sha_b},
            {"suite", "", "bookworm"},
            {"mirror", "", "http://deb.debian.org/debian"},
            {"variant", "", "minbase"},
            {"architecture", "", "amd64"},
            {"include", "", "python3 libgomp1"}};
        CHECK(diff::diff_locks(before, after).base == expected);
    }

    TEST_CASE("a Debian base's architecture: unnamed is amd64, arm64 is a change") {
        pylock::Lock before = ours();
        before.rootlock->base = pylock::LockBase{};
        before.rootlock->base.kind = "debian";
        before.rootlock->base.suite = "bookworm";
        pylock::Lock after = before;
        after.rootlock->base.architecture = "amd64";
        CHECK(diff::diff_locks(before, after).base.empty());
        after.rootlock->base.architecture = "arm64";
        const std::vector<diff::FieldChange> expected{{"architecture", "amd64", "arm64"}};
        CHECK(diff::diff_locks(before, after).base == expected);
    }

    TEST_CASE("a .deb only in one base is added or removed, with its archive and suite") {
        const pylock::Lock one = on_debian({deb("libc6", "2.36-9+deb12u10")});
        const pylock::Lock two =
            on_debian({deb("libc6", "2.36-9+deb12u10"), deb("libfoo", "1.0-1")});
        const diff::DebChange added = only_deb_change(diff::diff_locks(one, two));
        diff::DebChange expected;
        expected.name = "libfoo";
        expected.architecture = "amd64";
        expected.kind = diff::DebChangeKind::added;
        expected.after = "1.0-1";
        expected.archive_after = "debian";
        expected.suite_after = "bookworm";
        expected.filename_after = "pool/main/l/libfoo/libfoo_1.0-1_amd64.deb";
        expected.sha256_after = k_sha_a;
        CHECK(added == expected);

        const diff::DebChange removed = only_deb_change(diff::diff_locks(two, one));
        CHECK(removed.kind == diff::DebChangeKind::removed);
        CHECK(removed.before == "1.0-1");
        CHECK(removed.after == std::nullopt);
        CHECK(removed.archive_before == "debian");
        CHECK(removed.suite_before == "bookworm");
        CHECK(removed.archive_after.empty());
        CHECK_FALSE(removed.security);
    }

    TEST_CASE(".deb versions are ordered by dpkg, not as text") {
        using K = diff::DebChangeKind;
        // Text order gets each of these wrong: "1.0" < "1.0~rc1" and "...u10" < "...u9".
        CHECK(std::string("1.0") < std::string("1.0~rc1"));
        CHECK(std::string("2.36-9+deb12u10") < std::string("2.36-9+deb12u9"));
        CHECK(deb_kind_between("1.0~rc1", "1.0") == K::upgraded);
        CHECK(deb_kind_between("1.0", "1.0~rc1") == K::downgraded);
        CHECK(deb_kind_between("2.36-9+deb12u9", "2.36-9+deb12u10") == K::upgraded);
        CHECK(deb_kind_between("2.36-9+deb12u10", "2.36-9+deb12u9") == K::downgraded);
        CHECK(deb_kind_between("3.0.17-1~deb12u2", "3.0.17-1") == K::upgraded);
        CHECK(deb_kind_between("9.9-1", "1:0.1-1") == K::upgraded);  // the epoch wins
    }

    TEST_CASE("versions equal by dpkg are the same .deb version") {
        // "0:1.0-1" is "1.0-1": with the same digest and pool file nothing differs.
        pylock::LockDeb same = deb("libc6", "1.0-1");
        same.version = "0:1.0-1";
        CHECK(diff::diff_locks(on_debian({deb("libc6", "1.0-1")}), on_debian({same})).same());
    }

    TEST_CASE("a security update is marked by the suite of the archive it came from") {
        const diff::DebChange security = only_deb_change(
            diff::diff_locks(on_debian({deb("libc6", "2.36-9+deb12u10")}),
                             on_debian({deb("libc6", "2.36-9+deb12u13", "security")})));
        CHECK(security.kind == diff::DebChangeKind::upgraded);
        CHECK(security.archive_before == "debian");
        CHECK(security.suite_before == "bookworm");
        CHECK(security.archive_after == "security");
        CHECK(security.suite_after == "bookworm-security");
        CHECK(security.security);

        // A point release from the mirror is not a security update, whatever its version says.
        const diff::DebChange point =
            only_deb_change(diff::diff_locks(on_debian({deb("libc6", "2.36-9+deb12u10")}),
                                             on_debian({deb("libc6", "2.36-9+deb12u13")})));
        CHECK(point.kind == diff::DebChangeKind::upgraded);
        CHECK(point.suite_after == "bookworm");
        CHECK_FALSE(point.security);

        // Only the after side counts: leaving the security archive is no security update.
        const diff::DebChange back = only_deb_change(
            diff::diff_locks(on_debian({deb("libc6", "2.36-9+deb12u10", "security")}),
                             on_debian({deb("libc6", "2.36-9+deb12u13")})));
        CHECK_FALSE(back.security);

        // The suite is looked up in the lock's own archives; an unlisted archive has none.
        pylock::Lock unlisted = on_debian({deb("libc6", "2.36-9+deb12u13", "elsewhere")});
        const diff::DebChange unknown = only_deb_change(
            diff::diff_locks(on_debian({deb("libc6", "2.36-9+deb12u10")}), unlisted));
        CHECK(unknown.archive_after == "elsewhere");
        CHECK(unknown.suite_after.empty());
        CHECK_FALSE(unknown.security);
    }

    TEST_CASE("the same .deb version with another sha256 is rebuilt") {
        const diff::DebChange change = only_deb_change(
            diff::diff_locks(on_debian({deb("libssl3", "3.0.17-1~deb12u2", "security", k_sha_a)}),
                             on_debian({deb("libssl3", "3.0.17-1~deb12u2", "security", k_sha_b)})));
        CHECK(change.kind == diff::DebChangeKind::rebuilt);
        CHECK(change.before == "3.0.17-1~deb12u2");
        CHECK(change.after == "3.0.17-1~deb12u2");
        CHECK(change.sha256_before == k_sha_a);
        CHECK(change.sha256_after == k_sha_b);
        CHECK(change.security);

        // Rebuilt wins over moved: another digest is the loud news, wherever it comes from now.
        const diff::DebChange both = only_deb_change(
            diff::diff_locks(on_debian({deb("libssl3", "3.0.17-1~deb12u2", "debian", k_sha_a)}),
                             on_debian({deb("libssl3", "3.0.17-1~deb12u2", "security", k_sha_b)})));
        CHECK(both.kind == diff::DebChangeKind::rebuilt);
        CHECK(both.archive_before == "debian");
        CHECK(both.archive_after == "security");
    }

    TEST_CASE("the same .deb from another archive or pool file is moved") {
        const diff::DebChange archive_moved = only_deb_change(
            diff::diff_locks(on_debian({deb("tzdata", "2025b-0+deb12u1", "security")}),
                             on_debian({deb("tzdata", "2025b-0+deb12u1", "debian")})));
        CHECK(archive_moved.kind == diff::DebChangeKind::moved);
        CHECK(archive_moved.suite_before == "bookworm-security");
        CHECK(archive_moved.suite_after == "bookworm");

        pylock::LockDeb refiled = deb("tzdata", "2025b-0+deb12u1");
        refiled.filename = "pool/main/t/tzdata/tzdata_2025b-0+deb12u1_all.deb";
        const diff::DebChange file_moved = only_deb_change(
            diff::diff_locks(on_debian({deb("tzdata", "2025b-0+deb12u1")}), on_debian({refiled})));
        CHECK(file_moved.kind == diff::DebChangeKind::moved);
        CHECK(file_moved.filename_after == "pool/main/t/tzdata/tzdata_2025b-0+deb12u1_all.deb");

        // Size, component and source fields alone follow the digest and are not compared.
        pylock::LockDeb relabelled = deb("tzdata", "2025b-0+deb12u1");
        relabelled.size = 7;
        relabelled.source = "tzdata-src";
        CHECK(
            diff::diff_locks(on_debian({deb("tzdata", "2025b-0+deb12u1")}), on_debian({relabelled}))
                .same());
    }

    TEST_CASE(".debs are keyed by name and architecture, and sorted that way") {
        const pylock::Lock before =
            on_debian({deb("zlib1g", "1:1.2.13.dfsg-1"), deb("libc6", "2.36-9+deb12u10")});
        const pylock::Lock after =
            on_debian({deb("libc6", "2.36-9+deb12u10", "debian", k_sha_a, "i386"),
                       deb("zlib1g", "1:1.2.13.dfsg-1"), deb("libc6", "2.36-9+deb12u10"),
                       deb("base-files", "12.4+deb12u12", "debian", k_sha_a, "all")});
        const diff::LockDiff diff = diff::diff_locks(before, after);
        REQUIRE(diff.debian.size() == 2);
        CHECK(diff.debian[0].name == "base-files");
        CHECK(diff.debian[1].name == "libc6");
        CHECK(diff.debian[1].architecture == "i386");
        CHECK(diff.debian[1].kind == diff::DebChangeKind::added);
    }

    TEST_CASE("only the archives' Release date changing is no difference") {
        const pylock::Lock before = on_debian({deb("libc6", "2.36-9+deb12u10")});
        pylock::Lock after = before;
        after.rootlock->base.archives[0].date = "1765000000";
        after.rootlock->base.archives[1].date = "1765000001";
        const diff::LockDiff diff = diff::diff_locks(before, after);
        CHECK(diff.same());
        CHECK(diff == diff::LockDiff{});
    }

    TEST_CASE("archive changes go to the base group, one field each") {
        const pylock::Lock before = on_debian({});
        pylock::Lock after = before;
        pylock::LockDebArchive& mirror = after.rootlock->base.archives[0];
        mirror.url = "http://mirror.example/debian";
        mirror.components = {"main", "contrib"};
        mirror.snapshot = "https://snapshot.debian.org/archive/debian/20251102T100000Z";
        mirror.keyring = "keys/debian.gpg";
        mirror.keyring_sha256 = k_sha_b;
        mirror.date = "1765000000";  // never shown
        after.rootlock->base.archives.erase(after.rootlock->base.archives.begin() + 1);
        after.rootlock->base.archives.push_back(
            archive("updates", "http://deb.debian.org/debian", "bookworm-updates"));
        const std::vector<diff::FieldChange> expected{
            {"archive debian url", "http://deb.debian.org/debian", "http://mirror.example/debian"},
            {"archive debian components", "main", "main contrib"},
            {"archive debian snapshot", "",
             "https://snapshot.debian.org/archive/debian/20251102T100000Z"},
            {"archive debian keyring", "", "keys/debian.gpg"},
            {"archive debian keyring-sha256", "", k_sha_b},
            {"archive security", "http://deb.debian.org/debian-security bookworm-security main",
             ""},
            {"archive updates", "", "http://deb.debian.org/debian bookworm-updates main"}};
        const diff::LockDiff diff = diff::diff_locks(before, after);
        CHECK(diff.base == expected);
        CHECK(diff.debian.empty());

        after = before;
        after.rootlock->base.archives[1].suite = "trixie-security";
        CHECK(diff::diff_locks(before, after).base ==
              std::vector<diff::FieldChange>{
                  {"archive security suite", "bookworm-security", "trixie-security"}});
    }

    TEST_CASE("a point release of a hundred .debs is one change each") {
        std::vector<pylock::LockDeb> before;
        std::vector<pylock::LockDeb> after;
        for (int i = 0; i < 400; ++i) {
            const std::string name = "lib" + std::to_string(1000 + i);
            before.push_back(deb(name, "1.0-1+deb12u9"));
            // Every fourth moves up; one in twenty of those through the security archive.
            after.push_back(i % 4 == 0
                                ? deb(name, "1.0-1+deb12u10", i % 80 == 0 ? "security" : "debian")
                                : deb(name, "1.0-1+deb12u9"));
        }
        const diff::LockDiff diff = diff::diff_locks(on_debian(before), on_debian(after));
        REQUIRE(diff.debian.size() == 100);
        size_t security = 0;
        for (const auto& change : diff.debian) {
            CHECK(change.kind == diff::DebChangeKind::upgraded);
            security += change.security ? 1 : 0;
        }
        CHECK(security == 5);
        CHECK(diff.debian.front().name == "lib1000");
        CHECK(diff.debian.back().name == "lib1396");
    }

    TEST_CASE("a soname whose provider moved to another distribution is provider-moved") {
        const pylock::Lock before =
            lock_of({with_sonames(package("nvidia-nccl-cu12", "2.27.3"), {"libnccl.so.2"})});
        const pylock::Lock after =
            lock_of({with_sonames(package("nvidia-nccl-cu13", "2.28.3"), {"libnccl.so.2"})});
        const diff::LockDiff diff = diff::diff_locks(before, after);
        CHECK(diff.sonames.changes ==
              std::vector<diff::SonameChange>{{"libnccl.so.2",
                                               diff::SonameChangeKind::provider_moved,
                                               {"nvidia-nccl-cu12"},
                                               {"nvidia-nccl-cu13"}}});
        REQUIRE(diff.nvidia.size() == 2);
        CHECK(diff.nvidia[0].kinds == std::vector{diff::PackageChangeKind::removed});
        CHECK(diff.nvidia[1].kinds == std::vector{diff::PackageChangeKind::added});
    }

    TEST_CASE("sonames provided or needed appear and vanish") {
        const pylock::Lock before = lock_of({with_sonames(
            package("a", "1"), {"liba.so.1", "libold.so"}, {"libc.so.6", "libgone.so.1"})});
        const pylock::Lock after =
            lock_of({with_sonames(package("a", "2"), {"liba.so.1", "libnew.so"}, {"libc.so.6"}),
                     with_sonames(package("b", "1"), {"liba.so.1"}, {"libcuda.so.1"})});
        const std::vector<diff::SonameChange> expected{
            {"liba.so.1", diff::SonameChangeKind::provider_moved, {"a"}, {"a", "b"}},
            {"libcuda.so.1", diff::SonameChangeKind::needed_added, {}, {"b"}},
            {"libgone.so.1", diff::SonameChangeKind::needed_removed, {"a"}, {}},
            {"libnew.so", diff::SonameChangeKind::provided_added, {}, {"a"}},
            {"libold.so", diff::SonameChangeKind::provided_removed, {"a"}, {}}};
        CHECK(diff::diff_locks(before, after).sonames.changes == expected);
    }

    TEST_CASE("the highest GLIBC_ needed is compared by numeric components") {
        const pylock::Lock before = lock_of({with_sonames(
            package("a", "1"), {}, {}, {"GLIBC_2.17", "GLIBC_2.9", "GLIBC_PRIVATE"})});
        const pylock::Lock after =
            lock_of({with_sonames(package("a", "1"), {}, {}, {"GLIBC_2.17", "GLIBC_2.2.5"}),
                     with_sonames(package("b", "1"), {}, {}, {"GLIBC_2.28"})});
        const diff::LockDiff diff = diff::diff_locks(before, after);
        REQUIRE(diff.sonames.glibc.has_value());
        CHECK(*diff.sonames.glibc == diff::FieldChange{"GLIBC", "GLIBC_2.17", "GLIBC_2.28"});
        CHECK_FALSE(diff.sonames.glibcxx.has_value());
        CHECK(diff.sonames.changes.empty());

        // GLIBC_2.9 must not beat GLIBC_2.17 however the list is ordered.
        const pylock::Lock same_max =
            lock_of({with_sonames(package("a", "1"), {}, {}, {"GLIBC_2.17"})});
        CHECK(diff::diff_locks(before, same_max).same());
        const pylock::Lock none = lock_of({with_sonames(package("a", "1"), {}, {}, {})});
        CHECK(*diff::diff_locks(before, none).sonames.glibc ==
              diff::FieldChange{"GLIBC", "GLIBC_2.17", ""});
    }

    TEST_CASE("the highest GLIBCXX_ needed is reported apart from GLIBC_") {
        const pylock::Lock before = lock_of({with_sonames(
            package("a", "1"), {}, {}, {"CXXABI_1.3.9", "GLIBCXX_3.4.19", "GLIBC_2.17"})});
        const pylock::Lock after = lock_of({with_sonames(
            package("a", "1"), {}, {}, {"GLIBCXX_3.4.29", "GLIBCXX_3.4.9", "GLIBC_2.17"})});
        const diff::LockDiff diff = diff::diff_locks(before, after);
        CHECK_FALSE(diff.sonames.glibc.has_value());
        REQUIRE(diff.sonames.glibcxx.has_value());
        CHECK(*diff.sonames.glibcxx ==
              diff::FieldChange{"GLIBCXX", "GLIBCXX_3.4.19", "GLIBCXX_3.4.29"});
    }

    TEST_CASE("a new CUDA major in the closure is reported, and the vanished one") {
        const pylock::Lock before = lock_of(
            {with_sonames(package("nvidia-cuda-runtime-cu12", "12.8.90"), {"libcudart.so.12"})});
        const pylock::Lock after =
            lock_of({with_sonames(package("nvidia-cuda-runtime", "13.0.96"), {"libcudart.so.13"})});
        const diff::LockDiff diff = diff::diff_locks(before, after);
        CHECK(diff.sonames.cuda_majors_added == std::vector<int>{13});
        CHECK(diff.sonames.cuda_majors_removed == std::vector<int>{12});
        // libcufft.so.11 is CUDA 12: nothing new when it joins libcudart.so.12.
        const pylock::Lock more =
            lock_of({with_sonames(package("nvidia-cuda-runtime-cu12", "12.8.90"),
                                  {"libcudart.so.12", "libcufft.so.11"})});
        const diff::LockDiff same_major = diff::diff_locks(before, more);
        CHECK(same_major.sonames.cuda_majors_added.empty());
        CHECK(same_major.sonames.changes.size() == 1);
    }

    TEST_CASE("foreign locks without rootlock data diff by packages alone") {
        const std::string before_text = R"(lock-version = "1.0"
created-by = "uv"
requires-python = ">=3.10"

[[packages]]
name = "attrs"
version = "25.3.0"
index = "https://pypi.org/simple"
wheels = [{ url = "https://files.example/attrs-25.3.0-py3-none-any.whl", hashes = { sha256 = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" } }]

[[packages]]
name = "idna"
version = "3.9"
index = "https://pypi.org/simple"
wheels = [{ url = "https://files.example/idna-3.9-py3-none-any.whl", hashes = { sha256 = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" } }]
)";
        const std::string after_text = R"(lock-version = "1.0"
created-by = "pdm"

[[packages]]
name = "attrs"
version = "25.3.0"
index = "https://pypi.org/simple"
wheels = [{ url = "https://files.example/attrs-25.3.0-py3-none-any.whl", hashes = { sha256 = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb" } }]

[[packages]]
name = "idna"
version = "3.10"
index = "https://pypi.org/simple"
wheels = [{ url = "https://files.example/idna-3.10-py3-none-any.whl", hashes = { sha256 = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" } }]
)";
        const diff::LockDiff diff = diff::diff_locks(read(before_text), read(after_text));
        CHECK(diff.target.empty());
        CHECK(diff.base.empty());
        CHECK(diff.recipe.empty());
        CHECK(diff.sonames.empty());
        REQUIRE(diff.packages.size() == 2);
        CHECK(diff.packages[0].kinds == std::vector{diff::PackageChangeKind::rebuilt});
        CHECK(diff.packages[0].rebuilt[0].wheel == "attrs-25.3.0-py3-none-any.whl");
        CHECK(diff.packages[1].kinds == std::vector{diff::PackageChangeKind::upgraded});

        // A foreign lock against one of ours: our target and base appear from nothing.
        const diff::LockDiff mixed = diff::diff_locks(read(before_text), ours());
        CHECK(mixed.target.size() == 5);
        CHECK(mixed.target[0] == diff::FieldChange{"python", "", "3.11"});
        CHECK(mixed.base.size() == 3);
    }

    TEST_CASE("the recipe's lists differ as sets, library paths in order, files by path") {
        pylock::Lock before = ours();
        pylock::Lock after = ours();
        before.rootlock->requirements = {"torch==2.8.0", "numpy"};
        after.rootlock->requirements = {"numpy", "torch==2.9.1"};
        before.rootlock->environment = {{"LANG", "C.UTF-8"}, {"PATH", "/usr/bin"}};
        after.rootlock->environment = {{"LANG", "C.UTF-8"}, {"PATH", "/opt/venv/bin"}};
        before.rootlock->library_paths = {"/a", "/b", "/c"};
        after.rootlock->library_paths = {"/b", "/a", "/c", "/d"};
        before.rootlock->files = {{"/etc/a", "1"}, {"/etc/b", "2"}};
        after.rootlock->files = {{"/etc/b", "3"}, {"/etc/c", "4"}};
        const std::vector<diff::RecipeChange> expected{
            {"requirements", {"torch==2.9.1"}, {"torch==2.8.0"}, {}},
            {"environment", {"PATH=/opt/venv/bin"}, {"PATH=/usr/bin"}, {}},
            {"library-paths", {"/d"}, {}, {"/b", "/a"}},
            {"files", {"/etc/c"}, {"/etc/a"}, {"/etc/b"}}};
        CHECK(diff::diff_locks(before, after).recipe == expected);

        after = before;
        after.rootlock->requirements = {"numpy", "torch==2.8.0"};  // reordered: no difference
        CHECK(diff::diff_locks(before, after).same());
    }

    TEST_CASE("two locks equal after shuffling packages and dependencies are the same") {
        pylock::LockPackage a =
            with_sonames(package("a", "1"), {"liba.so"}, {"libb.so"}, {"GLIBC_2.17"});
        a.dependencies = {{"b", "2"}, {"c", std::nullopt}};
        pylock::LockPackage b = with_sonames(package("b", "2"), {"libb.so"});
        pylock::LockPackage c = package("c", "3");
        pylock::Lock before = ours({a, b, c});
        std::swap(a.dependencies[0], a.dependencies[1]);
        pylock::Lock after = ours({c, a, b});
        const diff::LockDiff diff = diff::diff_locks(before, after);
        CHECK(diff.same());
        CHECK(diff == diff::LockDiff{});
        after.packages[0].version = "4";
        CHECK_FALSE(diff::diff_locks(before, after).same());
    }

    TEST_CASE("the same lock reformatted reads as the same") {
        const std::string canonical = pylock::write_pylock(
            ours({with_sonames(package("numpy", "2.2.6"), {"libscipy_openblas.so"}, {"libm.so.6"}),
                  package("torch", "2.8.0+cu128")}));
        // Spacing, quotes, comments, key order inside tables and inline tables, package order.
        const std::string reformatted = R"(# edited by hand
created-by="rootlock"
lock-version='1.0'

[[packages]]
version = '2.8.0+cu128'
name    = 'torch'
index   = 'https://pypi.org/simple'   # the default index
wheels  = [ {hashes={sha256='aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'}, url='https://files.example/torch-2.8.0+cu128-py3-none-any.whl', name='torch-2.8.0+cu128-py3-none-any.whl'} ]

[[packages]]
index = "https://pypi.org/simple"
name = "numpy"
version = "2.2.6"
wheels = [
  { name = "numpy-2.2.6-py3-none-any.whl", url = "https://files.example/numpy-2.2.6-py3-none-any.whl", hashes = { sha256 = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" } },
]
[packages.tool.rootlock]
requested = false
needs = ["libm.so.6"]
provides = ["libscipy_openblas.so"]

[tool.rootlock.base]
sha256 = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
url = "https://example.org/base.tar.zst"
kind = "tarball"

[tool.rootlock.target]
torch = ""
driver = "570.133.07"
cuda = "12.8"
arch = "x86_64"
glibc = "2.36"
python-full = "3.11.2"
python = "3.11"

[tool.rootlock]
source-date-epoch = 0
recipe-sha256 = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
recipe = "recipe.toml"
)";
        const pylock::Lock one = read(canonical);
        const pylock::Lock two = read(reformatted);
        REQUIRE(one.packages.size() == 2);
        REQUIRE(two.packages.size() == 2);
        CHECK(diff::diff_locks(one, two).same());
        CHECK(diff::diff_locks(two, one).same());
        // The check can fail: a real edit in the same layout is seen.
        std::string edited = reformatted;
        edited.replace(edited.find("'2.8.0+cu128'"), 13, "'2.8.1+cu128'");
        CHECK(diff::diff_locks(one, read(edited)).torch.size() == 1);
    }

    TEST_CASE("a 300-package pair diffs quickly") {
        std::vector<pylock::LockPackage> before;
        std::vector<pylock::LockPackage> after;
        for (int i = 0; i < 300; ++i) {
            const std::string name = (i % 10 == 0 ? "nvidia-lib-" : "pkg-") + std::to_string(i);
            std::vector<std::string> provides{"lib" + name + ".so." + std::to_string(i % 7)};
            std::vector<std::string> needs{"libc.so.6", "libm.so.6",
                                           "libdep" + std::to_string(i % 13) + ".so"};
            before.push_back(with_sonames(package(name, "1." + std::to_string(i)), provides, needs,
                                          {"GLIBC_2.17", "GLIBCXX_3.4.19"}));
            after.push_back(with_sonames(
                package(name, i % 3 == 0 ? "1." + std::to_string(i + 1) : "1." + std::to_string(i),
                        i % 50 == 0 ? k_sha_b : k_sha_a),
                provides, needs, {"GLIBC_2.28", "GLIBCXX_3.4.29"}));
        }
        const pylock::Lock one = ours(before);
        const pylock::Lock two = ours(after);
        const auto start = std::chrono::steady_clock::now();
        diff::LockDiff diff;
        for (int round = 0; round < 10; ++round)
            diff = diff::diff_locks(one, two);
        const auto elapsed = std::chrono::steady_clock::now() - start;
        const double ms = std::chrono::duration<double, std::milli>(elapsed).count() / 10.0;
        MESSAGE("300-package diff: " << ms << " ms per diff");
        // 100 upgraded (every third), 4 more rebuilt (every fiftieth not already upgraded).
        CHECK(diff.nvidia.size() + diff.packages.size() == 104);
        CHECK(diff.sonames.glibc.has_value());
    }

    TEST_CASE("device code moves: the architectures a package drops and adds, and the GPUs") {
        auto with_architectures = [](pylock::LockPackage p, std::vector<std::string> names) {
            p = with_sonames(std::move(p), {"libtorch_cuda.so"});
            p.rootlock->architectures = std::move(names);
            return p;
        };
        pylock::Lock before =
            ours({with_architectures(package("torch", "2.10.0"),
                                     {"sm_70", "sm_75", "sm_80", "sm_90", "compute_90"}),
                  with_architectures(package("flash-attn", "2.8.0"), {"sm_80", "sm_90"}),
                  with_sonames(package("numpy", "2.2.0"), {})});
        pylock::Lock after =
            ours({with_architectures(package("torch", "2.11.0"),
                                     {"sm_75", "sm_80", "sm_90", "sm_120", "compute_120"}),
                  with_architectures(package("flash-attn", "2.8.0"), {"sm_80", "sm_90"}),
                  with_sonames(package("numpy", "2.2.1"), {})});
        after.rootlock->target.gpus = {"8.0", "12.0"};
        const diff::LockDiff diff = diff::diff_locks(before, after);
        REQUIRE(diff.gpu_architectures.size() == 1);
        const auto& change = diff.gpu_architectures[0];
        CHECK(change.name == "torch");
        CHECK(change.before == "2.10.0");
        CHECK(change.after == "2.11.0");
        CHECK(change.removed == std::vector<std::string>{"sm_70", "compute_90"});
        CHECK(change.added == std::vector<std::string>{"sm_120", "compute_120"});
        REQUIRE(diff.target.size() == 1);
        CHECK(diff.target[0] == diff::FieldChange{"gpus", "", "8.0, 12.0"});
        const std::string text = diff::render_diff_text(diff, false);
        CHECK(text.find("gpu architectures\n  - torch 2.10.0 -> 2.11.0 drops sm_70, compute_90; "
                        "adds sm_120, compute_120\n") != std::string::npos);
        CHECK(diff::render_diff_markdown(diff).find(
                  "| torch | 2.10.0 | 2.11.0 | sm_70, compute_90 | sm_120, compute_120 |") !=
              std::string::npos);

        // A lock written before architectures were recorded has none anywhere: nothing is said.
        pylock::Lock old = before;
        for (auto& p : old.packages)
            p.rootlock->architectures.clear();
        CHECK(diff::diff_locks(old, after).gpu_architectures.empty());
    }
}

}  // namespace ROOTLOCK_UNIT_ID
