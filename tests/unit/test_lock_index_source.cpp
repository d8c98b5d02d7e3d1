// Unit tests for what the resolver's index source asks the index: over a real loopback server,
// a resolution never requests the page of a requirement whose marker is false for the target,
// nor of one that holds only under an extra nobody asked for; a requested extra's pages are.
#include <doctest/doctest.h>

#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "index/content_store.hpp"
#include "index/http_client.hpp"
#include "index/index_client.hpp"
#include "index/page_cache.hpp"
#include "lock/index_source.hpp"
#include "python/pep508.hpp"
#include "python/wheel_tags.hpp"
#include "resolve/resolver.hpp"
#include "support/loopback_server.hpp"
#include "support/temp_dir.hpp"
#include "util/sha256.hpp"

using rootlock::index::ContentStore;
using rootlock::index::HttpClient;
using rootlock::index::HttpOptions;
using rootlock::index::IndexClient;
using rootlock::index::PageCache;
using rootlock::lock::ChosenFile;
using rootlock::lock::IndexSource;
using rootlock::testing::LoopbackServer;
using rootlock::testing::Route;
using rootlock::testing::TempDir;
namespace python = rootlock::python;
namespace resolve = rootlock::resolve;

namespace {

HttpOptions test_options() {
    return rootlock::testing::loopback_http_options(1);
}

// A project with one pure wheel, version 1.0, whose METADATA lists `requires`.
void serve(LoopbackServer& server, const std::string& name,
           const std::vector<std::string>& requires_dist) {
    std::string metadata = "Metadata-Version: 2.1\nName: " + name + "\nVersion: 1.0\n";
    for (const auto& line : requires_dist)
        metadata += "Requires-Dist: " + line + "\n";
    std::string distribution = name;  // a wheel's file name escapes '-' (binary format spec)
    for (char& c : distribution)
        if (c == '-')
            c = '_';
    const std::string wheel = distribution + "-1.0-py3-none-any.whl";
    Route page;
    page.headers = {{"Content-Type", "application/vnd.pypi.simple.v1+json"}};
    page.body = R"({"meta": {"api-version": "1.1"}, "name": ")" + name +
                R"(", "files": [{"filename": ")" + wheel + R"(", "url": "../../files/)" + wheel +
                R"(", "hashes": {}, "core-metadata": {"sha256": ")" +
                rootlock::util::sha256_hex(metadata) + R"("}}]})";
    server.route("/simple/" + name + "/", page);
    Route file;
    file.body = metadata;
    server.route("/files/" + wheel + ".metadata", file);
}

// The project names whose pages the server was asked for.
std::set<std::string> pages_asked(const LoopbackServer& server) {
    std::set<std::string> names;
    for (const auto& request : server.requests()) {
        const std::string prefix = "/simple/";
        if (request.target.rfind(prefix, 0) == 0)
            names.insert(
                request.target.substr(prefix.size(), request.target.size() - prefix.size() - 1));
    }
    return names;
}

struct Fixture {
    LoopbackServer server;
    TempDir cache;
    HttpClient http{test_options()};
    PageCache pages{cache.path()};
    ContentStore store{cache.path()};
    IndexClient client{http, pages, store, false};
    python::SupportedTags tags{python::TargetTags{3, 11, "x86_64", 2, 36, false}};
    python::MarkerEnvironment environment = python::linux_cpython(3, 11, 2, "x86_64");

    Fixture() {
        serve(server, "app",
              {"dep>=1", "pywin32; sys_platform == \"win32\"", "tomli; python_version < \"3.11\"",
               "pytest; extra == \"test\"", "fast-codec; extra == \"fast\"",
               "linux-only; sys_platform == \"linux\""});
        for (const char* name : {"dep", "linux-only", "fast-codec"})
            serve(server, name, {});
    }

    IndexSource source() {
        return IndexSource(client, {{"fixture", server.url("/simple/"), {}}}, tags,
                           *python::parse_version("3.11.2"), environment,
                           [](const ChosenFile& file) -> rootlock::util::Result<std::string> {
                               return rootlock::util::make_error(file.file.filename,
                                                                 "the wheel is not read here");
                           });
    }

    std::vector<python::Requirement> roots(const std::vector<std::string>& texts) {
        std::vector<python::Requirement> out;
        for (const auto& text : texts)
            out.push_back(*python::parse_requirement(text));
        return out;
    }
};

}  // namespace

TEST_SUITE("rootlock::lock") {
    TEST_CASE("dependencies() prefetches only what applies to the target without an extra") {
        Fixture f;
        IndexSource source = f.source();
        REQUIRE(source.versions("app").ok());
        auto requirements = source.dependencies("app", *python::parse_version("1.0"));
        REQUIRE(requirements.ok());
        CHECK(requirements->size() == 6);  // unevaluated: the resolver evaluates them with extras
        CHECK(pages_asked(f.server) == std::set<std::string>{"app", "dep", "linux-only"});
    }

    TEST_CASE("a root whose marker is false is never prefetched") {
        Fixture f;
        IndexSource source = f.source();
        source.prefetch_requirements(
            f.roots({"app", "pywin32; sys_platform == \"win32\"", "dep @ https://x/dep.whl"}));
        CHECK(pages_asked(f.server) == std::set<std::string>{"app"});
    }

    TEST_CASE("a resolution asks for no inactive requirement and no unrequested extra") {
        Fixture f;
        IndexSource source = f.source();
        resolve::ResolveOptions options;
        options.environment = f.environment;
        auto roots = f.roots({"app", "tomli; python_version < \"3.11\""});
        source.prefetch_requirements(roots);
        auto resolution = resolve::resolve(roots, source, options);
        REQUIRE_MESSAGE(resolution.ok(), (resolution.ok() ? "" : resolution.error().text()));
        CHECK(resolution->packages.size() == 3);
        CHECK(pages_asked(f.server) == std::set<std::string>{"app", "dep", "linux-only"});
    }

    TEST_CASE("a requested extra's pages are asked when the resolver needs them") {
        Fixture f;
        IndexSource source = f.source();
        resolve::ResolveOptions options;
        options.environment = f.environment;
        auto roots = f.roots({"app[fast]"});
        source.prefetch_requirements(roots);
        auto resolution = resolve::resolve(roots, source, options);
        REQUIRE_MESSAGE(resolution.ok(), (resolution.ok() ? "" : resolution.error().text()));
        CHECK(resolution->packages.size() == 4);
        CHECK(pages_asked(f.server) ==
              std::set<std::string>{"app", "dep", "fast-codec", "linux-only"});
    }
}
