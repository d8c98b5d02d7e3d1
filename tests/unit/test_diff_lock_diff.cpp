// Unit tests for diff_locks: every package kind on its own, target and base fields, the soname
// delta (providers, GLIBC maxima, CUDA majors), foreign locks, and what must not count.
#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "diff/lock_diff.hpp"
#include "pylock/pylock.hpp"

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
    p.rootlock = pylock::PackageRootlockData{std::move(provides), std::move(needs), false,
                                             std::move(needs_versions)};
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
    data.target = pylock::LockTarget{"3.11", "3.11.2", "2.36", "x86_64", "12.8", "570.133.07", ""};
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
        after.rootlock->target = pylock::LockTarget{"3.11", "3.11.2",    "2.41",       "aarch64",
                                                    "13.0", "580.65.06", "2.9.1+cu130"};
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
            {"include", "", "python3 libgomp1"}};
        CHECK(diff::diff_locks(before, after).base == expected);
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
}
