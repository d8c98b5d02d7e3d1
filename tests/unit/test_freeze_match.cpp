// Tests for match_wheels: wheels built here and served by a loopback index (PEP 691 JSON), an
// installed venv written to disk from one of them, then frozen and matched by RECORD digests.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "freeze/freeze.hpp"
#include "freeze/freeze_match.hpp"
#include "fs/directory_tree.hpp"
#include "python/environment.hpp"
#include "support/loopback_server.hpp"
#include "support/temp_dir.hpp"
#include "support/zip_writer.hpp"
#include "util/sha256.hpp"

namespace ROOTLOCK_UNIT_ID {

using namespace rootlock;
using rootlock::freeze::match_wheels;
using rootlock::freeze::MatchOptions;
using rootlock::freeze::MatchReport;
using rootlock::testing::LoopbackServer;
using rootlock::testing::Route;
using rootlock::testing::TempDir;

namespace {

const std::string k_site = "opt/venv/lib/python3.11/site-packages";
// Ranked first for cp311 on glibc 2.36 x86_64; the 2_17 build second; macOS not at all.
const std::string k_new = "demo-1.0-cp311-cp311-manylinux_2_28_x86_64.whl";
const std::string k_old = "demo-1.0-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl";
const std::string k_mac = "demo-1.0-cp311-cp311-macosx_11_0_arm64.whl";
const std::string k_older_version = "demo-0.9-cp311-cp311-manylinux_2_28_x86_64.whl";

using Files = std::vector<std::pair<std::string, std::string>>;  // path -> content

std::string record_digest(const std::string& content) {
    util::Sha256 hasher;
    hasher.update(content);
    return util::Sha256::to_base64url(hasher.digest());
}

std::string record_of(const Files& files, const std::string& record_path) {
    std::string record;
    for (const auto& [path, content] : files)
        record += path + ",sha256=" + record_digest(content) + "," +
                  std::to_string(content.size()) + "\n";
    return record + record_path + ",,\n";
}

// The files of a demo 1.0 wheel whose native module holds `native`.
Files wheel_files(const std::string& native) {
    return {{"demo/__init__.py", "VALUE = 1\n"},
            {"demo/_native.so", native},
            {"demo/__pycache__/__init__.cpython-311.pyc", "pyc as shipped"},
            {"demo-1.0.data/scripts/demo-cli", "#!python\nimport demo\n"},
            {"demo-1.0.data/purelib/demo/extra.py", "EXTRA = 1\n"},
            {"demo-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n"},
            {"demo-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: false\n"}};
}

std::string wheel_bytes(const Files& files) {
    std::vector<testing::ZipMember> members;
    for (const auto& [path, content] : files)
        members.push_back({path, content, testing::k_zip_file_mode, std::nullopt});
    members.push_back({"demo-1.0.dist-info/RECORD", record_of(files, "demo-1.0.dist-info/RECORD"),
                       testing::k_zip_file_mode, std::nullopt});
    return testing::build_zip(members);
}

// What pip leaves in site-packages for a wheel of `wheel_files(native)`: scripts rewritten, the
// .pyc recompiled, INSTALLER, REQUESTED and direct_url.json added.
Files installed_files(const std::string& native) {
    return {{"demo/__init__.py", "VALUE = 1\n"},
            {"demo/_native.so", native},
            {"demo/extra.py", "EXTRA = 1\n"},
            {"demo/__pycache__/__init__.cpython-311.pyc", "pyc compiled here"},
            {"../../../bin/demo-cli", "#!/opt/venv/bin/python\nimport demo\n"},
            {"demo-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n"},
            {"demo-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: false\n"},
            {"demo-1.0.dist-info/INSTALLER", "pip\n"},
            {"demo-1.0.dist-info/REQUESTED", ""},
            {"demo-1.0.dist-info/direct_url.json", "{}"}};
}

void install(const TempDir& root, const std::string& dist_info, const Files& files) {
    for (const auto& [path, content] : files) {
        const std::string host = std::filesystem::path(k_site + "/" + path).lexically_normal();
        root.write_file(host, content);
    }
    root.write_file(k_site + "/" + dist_info + "/RECORD", record_of(files, dist_info + "/RECORD"));
}

void write_venv(const TempDir& root) {
    root.write_file("opt/venv/pyvenv.cfg", "home = /usr/bin\nversion = 3.11.2\n");
    root.make_dirs("opt/venv/bin");
    root.make_dirs(k_site);
}

struct Served {
    std::string filename;
    std::string bytes;
};

std::string file_entry(const LoopbackServer& server, const Served& file, bool with_hash = true) {
    (void)server;
    std::string hashes =
        with_hash ? R"({"sha256":")" + util::sha256_hex(file.bytes) + R"("})" : std::string("{}");
    return R"({"filename":")" + file.filename + R"(","url":"/files/)" + file.filename +
           R"(","hashes":)" + hashes + R"(,"size":)" + std::to_string(file.bytes.size()) +
           R"(,"upload-time":"2025-01-02T03:04:05Z"})";
}

// Serves `files` under /files/ and a JSON page listing them at /simple/NAME/.
void serve_project(LoopbackServer& server, const std::string& name,
                   const std::vector<Served>& files, const std::string& index = "/simple/") {
    std::string entries;
    for (const Served& file : files) {
        entries += (entries.empty() ? "" : ",") + file_entry(server, file);
        Route route;
        route.body = file.bytes;
        server.route("/files/" + file.filename, route);
    }
    Route page;
    page.headers = {{"Content-Type", "application/vnd.pypi.simple.v1+json"}};
    page.body =
        R"({"meta":{"api-version":"1.1"},"name":")" + name + R"(","files":[)" + entries + "]}";
    server.route(index + name + "/", page);
}

index::HttpOptions test_http() {
    ::setenv("no_proxy", "127.0.0.1,localhost", 1);
    ::setenv("NO_PROXY", "127.0.0.1,localhost", 1);
    index::HttpOptions options;
    options.connect_timeout_ms = 2000;
    options.stall_timeout_ms = 2000;
    options.retries = 1;
    options.backoff_initial_ms = 1;
    options.user_agent = "rootlock/test";
    options.netrc_file = "/nonexistent/netrc";
    return options;
}

struct Frozen {
    freeze::FreezeResult result;
    python::PythonEnvironment env;
};

// Freezes the venv in `root` and declares the target a cp311 glibc 2.36 x86_64 machine (the
// test root has no /bin/sh to tell it from).
Frozen freeze_tree(const TempDir& root, bool known_target = true) {
    auto tree = fs::DirectoryTree::create(root.path());
    REQUIRE(tree.ok());
    auto result = freeze::freeze_environment(**tree, {"/opt/venv", 1});
    REQUIRE(result.ok());
    auto envs = python::find_environments(**tree, {"/opt/venv"});
    REQUIRE(envs.ok());
    REQUIRE(envs->size() == 1);
    if (known_target) {
        result->lock.rootlock->target.glibc = "2.36";
        result->lock.rootlock->target.arch = "x86_64";
    }
    return Frozen{std::move(*result), std::move(envs->front())};
}

freeze::MatchOptions options_for(const TempDir& cache, std::vector<std::string> urls) {
    freeze::MatchOptions options;
    options.index_urls = std::move(urls);
    options.cache_dir = cache.path();
    options.http = test_http();
    return options;
}

freeze::MatchReport match_ok(Frozen& frozen, const freeze::MatchOptions& options) {
    auto report = freeze::match_wheels(frozen.result, frozen.env, options);
    if (!report.ok())
        FAIL(report.error().text());
    return std::move(report).value();
}

const pylock::LockPackage& package_named(const Frozen& frozen, const std::string& name) {
    for (const auto& package : frozen.result.lock.packages) {
        if (package.name == name)
            return package;
    }
    FAIL("no package " << name);
    return frozen.result.lock.packages.front();
}

using Strings = std::vector<std::string>;

}  // namespace

TEST_SUITE("rootlock::freeze") {
    TEST_CASE("the wheel whose RECORD agrees with the installed files is chosen, not the first") {
        const Served newer{k_new, wheel_bytes(wheel_files("native for 2_28"))};
        const Served older{k_old, wheel_bytes(wheel_files("native for 2_17"))};
        const Served mac{k_mac, wheel_bytes(wheel_files("native for macOS"))};
        const Served other{k_older_version, "not read"};
        LoopbackServer server;
        serve_project(server, "demo", {mac, newer, other, older});
        TempDir root, cache;
        write_venv(root);
        install(root, "demo-1.0.dist-info", installed_files("native for 2_17"));
        Frozen frozen = freeze_tree(root);

        const freeze::MatchReport report =
            match_ok(frozen, options_for(cache, {server.url("/simple/")}));
        CHECK(report.matched == Strings{"demo"});
        CHECK(report.unmatched.empty());
        CHECK(report.notes.empty());
        const pylock::LockPackage& demo = package_named(frozen, "demo");
        CHECK(demo.index == server.url("/simple/"));
        REQUIRE(demo.wheels.size() == 1);
        CHECK(demo.wheels[0].name == k_old);
        CHECK(demo.wheels[0].url == server.url("/files/" + k_old));
        CHECK(demo.wheels[0].size == older.bytes.size());
        CHECK(demo.wheels[0].hashes ==
              std::map<std::string, std::string>{{"sha256", util::sha256_hex(older.bytes)}});
        CHECK(demo.wheels[0].upload_time == "2025-01-02T03:04:05Z");
        // Other tags and other versions are never downloaded.
        CHECK(server.requests_for("/files/" + k_mac).empty());
        CHECK(server.requests_for("/files/" + k_older_version).empty());
        CHECK(server.requests_for("/files/" + k_new).size() == 1);

        // A second run, offline, answers from the page cache and the content store alone.
        Frozen again = freeze_tree(root);
        freeze::MatchOptions offline = options_for(cache, {server.url("/simple/")});
        offline.offline = true;
        const size_t asked = server.requests().size();
        const freeze::MatchReport cached = match_ok(again, offline);
        CHECK(cached.matched == Strings{"demo"});
        CHECK(again.result.lock.packages == frozen.result.lock.packages);
        CHECK(server.requests().size() == asked);
    }

    TEST_CASE("an installed file that differs from every candidate leaves the package unmatched") {
        const Served newer{k_new, wheel_bytes(wheel_files("native for 2_28"))};
        const Served older{k_old, wheel_bytes(wheel_files("native for 2_17"))};
        // By its index in installed_files(): a plain file, and one a wheel puts under
        // .data/purelib/ (compared at its installed place); the 2_28 build's first difference
        // is its native module, which comes before extra.py in RECORD.
        const std::vector<std::tuple<size_t, std::string, std::string>> edits = {
            {0, "demo/__init__.py", "demo/__init__.py"}, {2, "demo/extra.py", "demo/_native.so"}};
        for (const auto& [edited, path, newer_path] : edits) {
            CAPTURE(path);
            LoopbackServer server;
            serve_project(server, "demo", {older, newer});
            TempDir root, cache;
            write_venv(root);
            Files files = installed_files("native for 2_17");
            files[edited].second += "# edited after installation\n";
            install(root, "demo-1.0.dist-info", files);
            Frozen frozen = freeze_tree(root);

            const freeze::MatchReport report =
                match_ok(frozen, options_for(cache, {server.url("/simple/")}));
            CHECK(report.matched.empty());
            CHECK(report.unmatched == Strings{"demo"});
            CHECK(report.notes ==
                  Strings{"demo 1.0: no candidate wheel matches the installed files (" + k_new +
                          ": " + newer_path + " differs; " + k_old + ": " + path + " differs)"});
            const pylock::LockPackage& demo = package_named(frozen, "demo");
            CHECK(demo.wheels.empty());
            CHECK(demo.index.empty());
        }
    }

    TEST_CASE("a wheel sharing no hashed file with the installation does not match") {
        Files foreign = {{"elsewhere/mod.py", "X = 1\n"},
                         {"demo-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: demo\n"}};
        const Served wheel{k_new, wheel_bytes(foreign)};
        LoopbackServer server;
        serve_project(server, "demo", {wheel});
        TempDir root, cache;
        write_venv(root);
        // RECORD lists only a file the wheel lacks and INSTALLER; METADATA is there, unlisted.
        install(root, "demo-1.0.dist-info",
                {{"demo/__init__.py", "VALUE = 1\n"}, {"demo-1.0.dist-info/INSTALLER", "pip\n"}});
        root.write_file(k_site + "/demo-1.0.dist-info/METADATA",
                        "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n");
        Frozen frozen = freeze_tree(root);

        const freeze::MatchReport report =
            match_ok(frozen, options_for(cache, {server.url("/simple/")}));
        CHECK(report.unmatched == Strings{"demo"});
        CHECK(report.notes == Strings{"demo 1.0: no candidate wheel matches the installed files (" +
                                      k_new + ": no installed file in common)"});
    }

    TEST_CASE("two wheels with identical RECORDs: the target's first is kept, with a note") {
        const Served newer{k_new, wheel_bytes(wheel_files("same native"))};
        const Served older{k_old, wheel_bytes(wheel_files("same native"))};
        LoopbackServer server;
        serve_project(server, "demo", {older, newer});
        TempDir root, cache;
        write_venv(root);
        install(root, "demo-1.0.dist-info", installed_files("same native"));
        Frozen frozen = freeze_tree(root);

        const freeze::MatchReport report =
            match_ok(frozen, options_for(cache, {server.url("/simple/")}));
        CHECK(report.matched == Strings{"demo"});
        CHECK(report.notes ==
              Strings{"demo 1.0: " + k_new + ", " + k_old +
                      " all match the installed files; chose " + k_new + ", the target's first"});
        const pylock::LockPackage& demo = package_named(frozen, "demo");
        REQUIRE(demo.wheels.size() == 1);
        CHECK(demo.wheels[0].name == k_new);
    }

    TEST_CASE("a project no index has is a note; the first index that has one is its source") {
        const Served older{k_old, wheel_bytes(wheel_files("native for 2_17"))};
        LoopbackServer server;
        serve_project(server, "demo", {older}, "/second/");
        TempDir root, cache;
        write_venv(root);
        install(root, "demo-1.0.dist-info", installed_files("native for 2_17"));
        install(root, "other-2.0.dist-info",
                {{"other.py", "pass\n"},
                 {"other-2.0.dist-info/METADATA",
                  "Metadata-Version: 2.1\nName: other\nVersion: 2.0\n"}});
        Frozen frozen = freeze_tree(root);

        const freeze::MatchReport report =
            match_ok(frozen, options_for(cache, {server.url("/first/"), server.url("/second/")}));
        CHECK(report.matched == Strings{"demo"});
        CHECK(report.unmatched == Strings{"other"});
        CHECK(report.notes == Strings{"other 2.0: no project of that name on any index"});
        CHECK(package_named(frozen, "demo").index == server.url("/second/"));
        CHECK(package_named(frozen, "other").wheels.empty());
        CHECK(server.requests_for("/first/demo/").size() == 1);
    }

    TEST_CASE("a version without a wheel for the target is a note naming the index") {
        const Served mac{k_mac, wheel_bytes(wheel_files("native for macOS"))};
        LoopbackServer server;
        serve_project(server, "demo", {mac});
        TempDir root, cache;
        write_venv(root);
        install(root, "demo-1.0.dist-info", installed_files("native for macOS"));
        Frozen frozen = freeze_tree(root);

        const freeze::MatchReport report =
            match_ok(frozen, options_for(cache, {server.url("/simple/")}));
        CHECK(report.unmatched == Strings{"demo"});
        CHECK(report.notes == Strings{"demo 1.0: no wheel of this version for the target on " +
                                      server.url("/simple/")});
        CHECK(server.requests_for("/files/" + k_mac).empty());
    }

    TEST_CASE("with the target unknown every wheel of the version is a candidate") {
        const Served mac{k_mac, wheel_bytes(wheel_files("native for macOS"))};
        const Served newer{k_new, wheel_bytes(wheel_files("native for 2_28"))};
        LoopbackServer server;
        serve_project(server, "demo", {newer, mac});
        TempDir root, cache;
        write_venv(root);
        install(root, "demo-1.0.dist-info", installed_files("native for macOS"));
        Frozen frozen = freeze_tree(root, false);

        const freeze::MatchReport report =
            match_ok(frozen, options_for(cache, {server.url("/simple/")}));
        CHECK(report.matched == Strings{"demo"});
        CHECK(report.notes ==
              Strings{"the target's glibc or arch is unknown: every wheel of each version is a "
                      "candidate"});
        CHECK(package_named(frozen, "demo").wheels.at(0).name == k_mac);
    }

    TEST_CASE("a candidate whose bytes are not the index's is a reason, not a match") {
        const Served older{k_old, wheel_bytes(wheel_files("native for 2_17"))};
        LoopbackServer server;
        serve_project(server, "demo", {older});
        Route tampered;
        tampered.body = wheel_bytes(wheel_files("tampered 2_17!!"));  // the same size
        server.route("/files/" + k_old, tampered);
        TempDir root, cache;
        write_venv(root);
        install(root, "demo-1.0.dist-info", installed_files("native for 2_17"));
        Frozen frozen = freeze_tree(root);

        const freeze::MatchReport report =
            match_ok(frozen, options_for(cache, {server.url("/simple/")}));
        CHECK(report.unmatched == Strings{"demo"});
        CHECK(report.notes ==
              Strings{"demo 1.0: no candidate wheel matches the installed files (" +
                      server.url("/files/" + k_old) + ": sha256 mismatch: expected " +
                      util::sha256_hex(older.bytes) + ", got " + util::sha256_hex(tampered.body) +
                      ")"});
    }

    TEST_CASE("a candidate that is not a wheel is a reason with the zip's own error") {
        const Served broken{k_new, "not a zip at all"};
        LoopbackServer server;
        serve_project(server, "demo", {broken});
        TempDir root, cache;
        write_venv(root);
        install(root, "demo-1.0.dist-info", installed_files("native"));
        Frozen frozen = freeze_tree(root);

        const freeze::MatchReport report =
            match_ok(frozen, options_for(cache, {server.url("/simple/")}));
        CHECK(report.unmatched == Strings{"demo"});
        CHECK(report.notes ==
              Strings{"demo 1.0: no candidate wheel matches the installed files (" + k_new +
                      ": no end of central directory record (not a zip archive))"});
    }

    TEST_CASE("offline with an empty cache fails with the network error") {
        LoopbackServer server;
        serve_project(server, "demo", {});
        TempDir root, cache;
        write_venv(root);
        install(root, "demo-1.0.dist-info", installed_files("native"));
        Frozen frozen = freeze_tree(root);

        freeze::MatchOptions options = options_for(cache, {server.url("/simple/")});
        options.offline = true;
        auto report = freeze::match_wheels(frozen.result, frozen.env, options);
        REQUIRE_FALSE(report.ok());
        CHECK(report.error().text() ==
              server.url("/simple/demo/") + ": not in the cache and --offline forbids the network");
        CHECK(report.error().kind == util::ErrorKind::network);
        CHECK(server.requests().empty());
    }

    TEST_CASE("an unreachable index is a network error") {
        TempDir root, cache;
        write_venv(root);
        install(root, "demo-1.0.dist-info", installed_files("native"));
        Frozen frozen = freeze_tree(root);
        std::string url;
        {
            LoopbackServer gone;  // a port nobody listens on once it is destroyed
            url = gone.url("/simple/");
        }
        freeze::MatchOptions options = options_for(cache, {url});
        options.http.retries = 0;
        auto report = freeze::match_wheels(frozen.result, frozen.env, options);
        REQUIRE_FALSE(report.ok());
        CHECK(report.error().kind == util::ErrorKind::network);
    }
}

}  // namespace ROOTLOCK_UNIT_ID
