// Tests for diff_locks over PEP 751's other sources: every field of vcs, directory, archive and
// sdist changed on its own gives its kind and field, a digest changed under the same version is
// rebuilt, a swapped kind of source is source-changed, and the three renderings show them.
#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

#include "diff/lock_diff.hpp"
#include "pylock/pylock.hpp"

namespace ROOTLOCK_UNIT_ID {

using namespace rootlock;
using Kind = diff::PackageChangeKind;

namespace {

const std::string k_sha_a = std::string(64, 'a');
const std::string k_sha_b = std::string(64, 'b');
const std::string k_commit_a = "1111111111111111111111111111111111111111";
const std::string k_commit_b = "2222222222222222222222222222222222222222";

pylock::LockPackage named(const std::string& name, const std::string& version = "1.0") {
    pylock::LockPackage p;
    p.name = name;
    p.version = version;
    return p;
}

pylock::LockPackage with_wheel(pylock::LockPackage p) {
    pylock::LockWheel wheel;
    wheel.name = p.name + "-" + p.version + "-py3-none-any.whl";
    wheel.url = "https://files.example/" + wheel.name;
    wheel.hashes["sha256"] = k_sha_a;
    p.wheels.push_back(wheel);
    return p;
}

pylock::LockPackage vcs_package(const std::string& name = "httpx") {
    pylock::LockPackage p = named(name);
    p.vcs = pylock::LockVcs{
        "git", "https://github.com/encode/httpx", "", "0.28.1", k_commit_a, std::nullopt};
    return p;
}

pylock::LockPackage directory_package() {
    pylock::LockPackage p = named("mylib");
    p.directory = pylock::LockDirectory{"packages/mylib", true, std::nullopt};
    return p;
}

pylock::LockArchive archive_of(const std::string& url, const std::string& sha) {
    pylock::LockArchive a;
    a.url = url;
    a.size = 1000;
    a.hashes["sha256"] = sha;
    return a;
}

pylock::LockPackage archive_package() {
    pylock::LockPackage p = named("six", "1.17.0");
    p.archive = archive_of("https://example.org/six-1.17.0.tar.gz", k_sha_a);
    return p;
}

pylock::LockPackage sdist_package() {
    pylock::LockPackage p = with_wheel(named("attrs", "25.3.0"));
    p.sdist = archive_of("https://files.example/attrs-25.3.0.tar.gz", k_sha_a);
    return p;
}

pylock::Lock lock_of(std::vector<pylock::LockPackage> packages) {
    pylock::Lock lock;
    lock.packages = std::move(packages);
    return lock;
}

diff::PackageChange only_change(const pylock::LockPackage& before,
                                const pylock::LockPackage& after) {
    const diff::LockDiff diff = diff::diff_locks(lock_of({before}), lock_of({after}));
    REQUIRE(diff.packages.size() == 1);
    CHECK(diff.torch.empty());
    CHECK(diff.nvidia.empty());
    CHECK_FALSE(diff.same());
    return diff.packages.front();
}

using Fields = std::vector<diff::SourceFieldChange>;

}  // namespace

TEST_SUITE("rootlock::diff") {
    TEST_CASE("each vcs field changed alone is vcs-changed, naming that field") {
        struct Case {
            const char* field;
            void (*change)(pylock::LockVcs&);
            std::string before, after;
        };
        const Case cases[] = {
            {"type", [](pylock::LockVcs& v) { v.type = "hg"; }, "git", "hg"},
            {"url", [](pylock::LockVcs& v) { v.url = "https://github.com/fork/httpx"; },
             "https://github.com/encode/httpx", "https://github.com/fork/httpx"},
            {"path", [](pylock::LockVcs& v) { v.path = "../httpx"; }, "", "../httpx"},
            {"requested-revision", [](pylock::LockVcs& v) { v.requested_revision = "main"; },
             "0.28.1", "main"},
            {"commit-id", [](pylock::LockVcs& v) { v.commit_id = k_commit_b; }, k_commit_a,
             k_commit_b},
            {"subdirectory", [](pylock::LockVcs& v) { v.subdirectory = "python"; }, "", "python"},
        };
        for (const Case& c : cases) {
            CAPTURE(c.field);
            pylock::LockPackage after = vcs_package();
            c.change(*after.vcs);
            const diff::PackageChange change = only_change(vcs_package(), after);
            CHECK(change.kinds == std::vector{Kind::vcs_changed});
            CHECK(change.source_fields == Fields{{"vcs", c.field, c.before, c.after}});
            CHECK(change.source_before == "vcs");
            CHECK(change.source_after == "vcs");
        }
    }

    TEST_CASE("each directory field changed alone is directory-changed") {
        pylock::LockPackage moved = directory_package();
        moved.directory->path = "libs/mylib";
        CHECK(only_change(directory_package(), moved).source_fields ==
              Fields{{"directory", "path", "packages/mylib", "libs/mylib"}});
        pylock::LockPackage frozen = directory_package();
        frozen.directory->editable = false;
        const diff::PackageChange change = only_change(directory_package(), frozen);
        CHECK(change.kinds == std::vector{Kind::directory_changed});
        CHECK(change.source_fields == Fields{{"directory", "editable", "true", "false"}});
        pylock::LockPackage unset = directory_package();
        unset.directory->editable.reset();
        unset.directory->subdirectory = "src";
        CHECK(only_change(directory_package(), unset).source_fields ==
              Fields{{"directory", "editable", "true", ""},
                     {"directory", "subdirectory", "", "src"}});
    }

    TEST_CASE("an archive's url, path, size and subdirectory are archive-changed") {
        pylock::LockPackage moved = archive_package();
        moved.archive->url.clear();
        moved.archive->path = "vendor/six-1.17.0.tar.gz";
        moved.archive->subdirectory = "src";
        diff::PackageChange change = only_change(archive_package(), moved);
        CHECK(change.kinds == std::vector{Kind::archive_changed});
        CHECK(change.source_fields ==
              Fields{{"archive", "url", "https://example.org/six-1.17.0.tar.gz", ""},
                     {"archive", "path", "", "vendor/six-1.17.0.tar.gz"},
                     {"archive", "subdirectory", "", "src"}});
        CHECK(change.rebuilt.empty());

        pylock::LockPackage resized = archive_package();
        resized.archive->size = 2000;
        change = only_change(archive_package(), resized);
        CHECK(change.source_fields == Fields{{"archive", "size", "1000", "2000"}});
    }

    TEST_CASE("an archive with another digest under the same version is rebuilt, loudly") {
        pylock::LockPackage rebuilt = archive_package();
        rebuilt.archive->hashes["sha256"] = k_sha_b;
        rebuilt.archive->size = 1001;  // follows the digest: not shown again
        const diff::PackageChange change = only_change(archive_package(), rebuilt);
        CHECK(change.kinds == std::vector{Kind::rebuilt});
        CHECK(change.rebuilt == std::vector{diff::RebuiltWheel{"six-1.17.0.tar.gz", "sha256",
                                                               k_sha_a, k_sha_b, "archive"}});
        CHECK(change.source_fields.empty());
    }

    TEST_CASE("digests that share no algorithm cannot be compared: the algorithms are shown") {
        pylock::LockPackage other = archive_package();
        other.archive->hashes = {{"sha512", std::string(128, 'c')}};
        const diff::PackageChange change = only_change(archive_package(), other);
        CHECK(change.kinds == std::vector{Kind::archive_changed});
        CHECK(change.source_fields == Fields{{"archive", "hashes", "sha256", "sha512"}});
        // uv's hashes = {} read leniently on one side, the same way.
        other.archive->hashes.clear();
        CHECK(only_change(archive_package(), other).source_fields ==
              Fields{{"archive", "hashes", "sha256", ""}});
    }

    TEST_CASE("an sdist with the same file name and another digest is rebuilt") {
        pylock::LockPackage rebuilt = sdist_package();
        rebuilt.sdist->hashes["sha256"] = k_sha_b;
        const diff::PackageChange change = only_change(sdist_package(), rebuilt);
        CHECK(change.kinds == std::vector{Kind::rebuilt});
        CHECK(change.rebuilt == std::vector{diff::RebuiltWheel{"attrs-25.3.0.tar.gz", "sha256",
                                                               k_sha_a, k_sha_b, "sdist"}});
    }

    TEST_CASE("an sdist's name, url and size are sdist-changed, a new file name no rebuild") {
        pylock::LockPackage zipped = sdist_package();
        zipped.sdist->url = "https://files.example/attrs-25.3.0.zip";
        zipped.sdist->hashes["sha256"] = k_sha_b;
        diff::PackageChange change = only_change(sdist_package(), zipped);
        CHECK(change.kinds == std::vector{Kind::sdist_changed});
        CHECK(change.rebuilt.empty());
        CHECK(change.source_fields ==
              Fields{{"sdist", "name", "attrs-25.3.0.tar.gz", "attrs-25.3.0.zip"},
                     {"sdist", "url", "https://files.example/attrs-25.3.0.tar.gz",
                      "https://files.example/attrs-25.3.0.zip"}});

        pylock::LockPackage mirrored = sdist_package();
        mirrored.sdist->url = "https://mirror.example/attrs-25.3.0.tar.gz";
        mirrored.sdist->size = 999;
        change = only_change(sdist_package(), mirrored);
        CHECK(change.source_fields ==
              Fields{{"sdist", "url", "https://files.example/attrs-25.3.0.tar.gz",
                      "https://mirror.example/attrs-25.3.0.tar.gz"},
                     {"sdist", "size", "1000", "999"}});
    }

    TEST_CASE("another kind of source is source-changed, with or without a new version") {
        diff::PackageChange change = only_change(with_wheel(named("httpx")), vcs_package());
        CHECK(change.kinds == std::vector{Kind::source_changed});
        CHECK(change.source_before == "wheels");
        CHECK(change.source_after == "vcs");
        CHECK(change.wheels_removed.empty());  // said once, as the source, not per wheel

        pylock::LockPackage newer = vcs_package();
        newer.version = "1.1";
        change = only_change(with_wheel(named("httpx")), newer);
        CHECK(change.kinds == std::vector{Kind::upgraded, Kind::source_changed});

        change = only_change(with_wheel(named("attrs", "25.3.0")), sdist_package());
        CHECK(change.kinds == std::vector{Kind::source_changed});
        CHECK(change.source_after == "sdist, wheels");

        change = only_change(archive_package(), [] {
            pylock::LockPackage p = named("six", "1.17.0");
            p.directory = pylock::LockDirectory{"six", std::nullopt, std::nullopt};
            return p;
        }());
        CHECK(change.kinds == std::vector{Kind::source_changed});
        CHECK(change.source_before == "archive");
        CHECK(change.source_after == "directory");
    }

    TEST_CASE("an entry without any source (freeze's) is compared as before, not as a swap") {
        const diff::PackageChange change = only_change(named("six"), with_wheel(named("six")));
        CHECK(change.kinds == std::vector{Kind::wheel_changed});
        CHECK(change.source_before.empty());
        CHECK(change.source_after == "wheels");
    }

    TEST_CASE("equal sources, in any group, make no difference") {
        const pylock::Lock lock =
            lock_of({vcs_package(), directory_package(), archive_package(), sdist_package(),
                     vcs_package("torch"), vcs_package("nvidia-nccl-cu12")});
        CHECK(diff::diff_locks(lock, lock).same());
    }

    TEST_CASE("source changes land in the package's own group") {
        pylock::LockPackage torch_after = vcs_package("torch");
        torch_after.vcs->commit_id = k_commit_b;
        pylock::LockPackage nccl_after = vcs_package("nvidia-nccl-cu12");
        nccl_after.vcs->url = "https://github.com/NVIDIA/nccl";
        const diff::LockDiff diff =
            diff::diff_locks(lock_of({vcs_package("torch"), vcs_package("nvidia-nccl-cu12")}),
                             lock_of({torch_after, nccl_after}));
        REQUIRE(diff.torch.size() == 1);
        CHECK(diff.torch[0].kinds == std::vector{Kind::vcs_changed});
        REQUIRE(diff.nvidia.size() == 1);
        CHECK(diff.nvidia[0].source_fields.at(0).field == "url");
        CHECK(diff.packages.empty());
    }

    TEST_CASE("the renderings show every source change, rebuilt ones loudly") {
        pylock::LockPackage httpx = vcs_package();
        httpx.vcs->commit_id = k_commit_b;
        pylock::LockPackage mylib = directory_package();
        mylib.directory->editable = false;
        pylock::LockPackage six = archive_package();
        six.archive->hashes["sha256"] = k_sha_b;
        pylock::LockPackage attrs = sdist_package();
        attrs.sdist->url = "https://mirror.example/attrs-25.3.0.tar.gz";
        const pylock::Lock before = lock_of({sdist_package(), vcs_package(), directory_package(),
                                             archive_package(), with_wheel(named("idna", "3.10"))});
        pylock::LockPackage idna = named("idna", "3.10");
        idna.vcs = pylock::LockVcs{
            "git", "https://github.com/kjd/idna", "", std::nullopt, k_commit_a, std::nullopt};
        const pylock::Lock after = lock_of({attrs, httpx, idna, mylib, six});
        const diff::LockDiff diff = diff::diff_locks(before, after);

        CHECK(diff::render_diff_text(diff, false) ==
              "packages\n"
              "  ~ attrs 25.3.0: sdist url https://files.example/attrs-25.3.0.tar.gz -> "
              "https://mirror.example/attrs-25.3.0.tar.gz (sdist-changed)\n"
              "  ~ httpx 1.0: vcs commit-id 111111111111... -> 222222222222... (vcs-changed)\n"
              "  ~ idna 3.10: source wheels -> vcs (source-changed)\n"
              "  ~ mylib 1.0: directory editable true -> false (directory-changed)\n"
              "  ! six 1.17.0: rebuilt archive six-1.17.0.tar.gz: sha256 aaaaaaaa... -> "
              "bbbbbbbb... (same version, different artifact)\n");

        const std::string markdown = diff::render_diff_markdown(diff);
        CHECK(markdown.find("> **Warning:** six 1.17.0 was rebuilt under the same version: "
                            "archive six-1.17.0.tar.gz sha256 aaaaaaaa... -> bbbbbbbb...\n") !=
              std::string::npos);
        CHECK(markdown.find("| httpx | 1.0 | 1.0 | vcs-changed (vcs commit-id 111111111111... -> "
                            "222222222222...) |\n") != std::string::npos);
        CHECK(markdown.find("| idna | 3.10 | 3.10 | source-changed (wheels -> vcs) |\n") !=
              std::string::npos);
        CHECK(markdown.find("| **six** | **1.17.0** | **1.17.0** | **rebuilt archive "
                            "six-1.17.0.tar.gz: sha256 aaaaaaaa... -> bbbbbbbb...** |\n") !=
              std::string::npos);

        const std::string json = diff::render_diff_json(diff);
        CHECK(json.find(R"("source_fields": [
        {
          "source": "vcs",
          "field": "commit-id",
          "before": ")" +
                        k_commit_a + R"(",
          "after": ")" + k_commit_b +
                        R"("
        }
      ])") != std::string::npos);
        CHECK(json.find(R"("source": {
        "before": "wheels",
        "after": "vcs"
      },)") != std::string::npos);
        CHECK(json.find(R"("kind": "archive")") != std::string::npos);
    }
}

}  // namespace ROOTLOCK_UNIT_ID
