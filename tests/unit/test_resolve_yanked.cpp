// PEP 592 as pip applies it to every requirement (a yanked release only for an exact pin that
// only yanked releases satisfy, direct or transitive), and the report of direct requirements
// that did not get their newest version, with the reason.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "python/pep508.hpp"
#include "resolve/resolver.hpp"
#include "support/fake_source.hpp"

namespace ROOTLOCK_UNIT_ID {

using rootlock::python::linux_cpython;
using rootlock::resolve::Resolution;
using rootlock::resolve::resolve;
using rootlock::resolve::ResolveOptions;
using rootlock::testing::FakeSource;
using rootlock::testing::requirements;
using rootlock::testing::summary;

namespace {

ResolveOptions x86_options() {
    ResolveOptions options;
    options.environment = linux_cpython(3, 11, 2, "x86_64");
    return options;
}

Resolution solved(FakeSource& source, const std::vector<std::string>& roots,
                  const ResolveOptions& options = x86_options()) {
    auto result = resolve(requirements(roots), source, options);
    if (!result.ok())
        FAIL(result.error().text());
    return *result;
}

const rootlock::resolve::ResolvedPackage& package(const Resolution& resolution,
                                                  const std::string& name) {
    for (const auto& entry : resolution.packages)
        if (entry.name == name)
            return entry;
    FAIL("no " << name << " in " << summary(resolution));
    throw;  // unreachable: FAIL throws
}

// The graph: torch 2.8.0 pins an NCCL release that was yanked afterwards.
FakeSource torch_stack() {
    FakeSource source;
    source.add("app", "1.0.0", {"torch==2.7.1"}).add("app", "1.1.0", {"torch==2.8.0"});
    source.add("torch", "2.7.1", {"nvidia-nccl-cu12==2.26.2"});
    source.add("torch", "2.8.0", {"nvidia-nccl-cu12==2.27.3; platform_system == 'Linux'"});
    source.add("nvidia-nccl-cu12", "2.26.2")
        .add("nvidia-nccl-cu12", "2.27.3", {}, true)
        .add("nvidia-nccl-cu12", "2.28.3");
    return source;
}

}  // namespace

TEST_SUITE("rootlock::resolve") {
    TEST_CASE("a dependency's exact pin to a yanked release selects it, as pip does") {
        FakeSource source = torch_stack();
        const auto resolution = solved(source, {"app"});
        CHECK(summary(resolution) == "app 1.1.0, nvidia-nccl-cu12 2.27.3, torch 2.8.0");
        CHECK(resolution.downgrades.empty());
        const auto& nccl = package(resolution, "nvidia-nccl-cu12");
        CHECK(nccl.yanked);
        CHECK(nccl.yanked_by ==
              std::vector<std::string>{"torch 2.8.0 requires nvidia-nccl-cu12==2.27.3"});
        CHECK_FALSE(package(resolution, "torch").yanked);
        CHECK(package(resolution, "torch").yanked_by.empty());
    }

    TEST_CASE("a yanked release is never chosen while the requirement admits another") {
        FakeSource source = torch_stack();
        // Unpinned, the newest release that is not yanked; a range over the yanked one only
        // matches nothing.
        CHECK(summary(solved(source, {"nvidia-nccl-cu12"})) == "nvidia-nccl-cu12 2.28.3");
        CHECK(summary(solved(source, {"nvidia-nccl-cu12<2.28"})) == "nvidia-nccl-cu12 2.26.2");
        auto range = resolve(requirements({"nvidia-nccl-cu12>=2.27,<2.28"}), source, x86_options());
        REQUIRE_FALSE(range.ok());
        CHECK(range.error().text() ==
              "no version of nvidia-nccl-cu12 matches nvidia-nccl-cu12>=2.27,<2.28 (available: "
              "2.26.2, 2.27.3 (yanked), 2.28.3)");
        // ==2.8.0 matches both local builds; one is not yanked, so the yanked newer one is
        // skipped (pip: not every applicable candidate is yanked).
        FakeSource locals;
        locals.add("torch", "2.8.0+cu129", {}, true).add("torch", "2.8.0+cu128");
        const auto resolution = solved(locals, {"torch==2.8.0"});
        CHECK(summary(resolution) == "torch 2.8.0+cu128");
        CHECK_FALSE(resolution.packages[0].yanked);
        CHECK(summary(solved(locals, {"torch==2.8.0+cu129"})) == "torch 2.8.0+cu129");
    }

    TEST_CASE("=== pins a yanked release from a dependency too") {
        FakeSource source;
        source.add("app", "1.0", {"lib===2.0"}).add("lib", "1.0").add("lib", "2.0", {}, true);
        const auto resolution = solved(source, {"app"});
        CHECK(summary(resolution) == "app 1.0, lib 2.0");
        CHECK(package(resolution, "lib").yanked_by ==
              std::vector<std::string>{"app 1.0 requires lib===2.0"});
    }

    TEST_CASE("a wildcard pin does not admit a yanked release") {
        FakeSource source;
        source.add("app", "1.0", {"lib==1.*"}).add("app", "2.0", {"lib==2.*"});
        source.add("lib", "1.5").add("lib", "2.0", {}, true);
        const auto resolution = solved(source, {"app"});
        CHECK(summary(resolution) == "app 1.0, lib 1.5");
        REQUIRE(resolution.downgrades.size() == 1);
        CHECK(resolution.downgrades[0].why ==
              "with app==2.0, no version of lib satisfies every requirement:\n"
              "  app 2.0 requires lib==2.*, which no version of lib matches (available: 1.5, "
              "2.0 (yanked))\n"
              "  the recipe requires app==2.0");
    }

    TEST_CASE("an explanation's \"every other version\" leaves out yanked versions") {
        FakeSource source;
        source.add("app", "1.0", {"lib>=2"});
        source.add("user", "1.0", {"lib<2"}).add("user", "1.1", {"lib<2"});
        source.add("user", "1.2", {}, true);
        source.add("lib", "1.0").add("lib", "2.0");
        auto result = resolve(requirements({"app", "user"}), source, x86_options());
        REQUIRE_FALSE(result.ok());
        CHECK(result.error().text() ==
              "no version of lib satisfies every requirement:\n"
              "  app 1.0 requires lib>=2\n"
              "  user 1.1 requires lib<2\n"
              "  and every other version of user (1.0) also requires lib<2\n"
              "  the recipe requires app\n"
              "  the recipe requires user");
    }

    TEST_CASE("the pre-release fallback counts yanked final releases, as pip's finder does") {
        FakeSource source;
        source.add("p", "1.0", {}, true).add("p", "2.0b1");
        auto result = resolve(requirements({"p>=1"}), source, x86_options());
        REQUIRE_FALSE(result.ok());
        CHECK(result.error().text() ==
              "no version of p matches p>=1 (available: 1.0 (yanked), 2.0b1)");
        CHECK(summary(solved(source, {"p>=2.0b1"})) == "p 2.0b1");
    }

    TEST_CASE("a range beside the pin on the same project takes the pinned yanked release") {
        // pip merges the two into one pinned specifier (>=2.26,==2.27.3) and takes the yanked
        // 2.27.3 with the newest torch; the first pass, which judges each requirement alone,
        // keeps the older torch instead, and the second pass (resolver.hpp) finds pip's answer.
        FakeSource source = torch_stack();
        const auto resolution = solved(source, {"torch", "nvidia-nccl-cu12>=2.26"});
        CHECK(summary(resolution) == "nvidia-nccl-cu12 2.27.3, torch 2.8.0");
        const auto& nccl = package(resolution, "nvidia-nccl-cu12");
        CHECK(nccl.yanked);
        CHECK(nccl.yanked_by ==
              std::vector<std::string>{"torch 2.8.0 requires nvidia-nccl-cu12==2.27.3"});
        // The range alone would take 2.28.3: said, with the pin that stands in the way.
        REQUIRE(resolution.downgrades.size() == 1);
        CHECK(resolution.downgrades[0].name == "nvidia-nccl-cu12");
        CHECK(resolution.downgrades[0].why ==
              "with nvidia-nccl-cu12==2.28.3, no version of nvidia-nccl-cu12 satisfies every "
              "requirement:\n"
              "  torch 2.8.0 requires nvidia-nccl-cu12==2.27.3\n"
              "  torch 2.7.1 requires nvidia-nccl-cu12==2.26.2\n"
              "  the recipe requires nvidia-nccl-cu12==2.28.3\n"
              "  the recipe requires torch");
        // A range the pin falls outside of is still a conflict, and torch is kept older.
        const auto outside = solved(source, {"torch", "nvidia-nccl-cu12<2.27"});
        CHECK(summary(outside) == "nvidia-nccl-cu12 2.26.2, torch 2.7.1");
        CHECK_FALSE(package(outside, "nvidia-nccl-cu12").yanked);
    }

    TEST_CASE("a range never takes a yanked release that no chosen requirement pins") {
        // a 2.0 pins the yanked lib 2.0 but cannot be chosen (nothing satisfies zz>=5): the pin
        // was met, so the second pass runs, and its answer (lib 2.0 beside a 1.0's plain "lib")
        // is not pip's; the first pass's stands.
        FakeSource source;
        source.add("a", "1.0", {"lib"}).add("a", "2.0", {"lib==2.0", "zz>=5"});
        source.add("lib", "1.5").add("lib", "2.0", {}, true);
        source.add("zz", "1.0");
        const auto resolution = solved(source, {"a", "lib"});
        CHECK(summary(resolution) == "a 1.0, lib 1.5");
        CHECK_FALSE(package(resolution, "lib").yanked);
        // With the pin chosen (zz 5 exists), both take the yanked release.
        source.add("zz", "5.0");
        const auto pinned = solved(source, {"a", "lib"});
        CHECK(summary(pinned) == "a 2.0, lib 2.0, zz 5.0");
        CHECK(package(pinned, "lib").yanked_by ==
              std::vector<std::string>{"a 2.0 requires lib==2.0"});
    }

    TEST_CASE("a direct requirement that cannot have its newest version says why") {
        FakeSource source;
        source.add("app", "1.0.0", {"torchlike==2.7.0"}).add("app", "1.1.0", {"torchlike==2.8.0"});
        source.add("torchlike", "2.7.0", {"nccl==2.26.5"});
        source.add("torchlike", "2.8.0", {"nccl>=2.27,<2.28"});
        source.add("nccl", "2.26.5").add("nccl", "2.27.3", {}, true);
        const auto resolution = solved(source, {"app>=1"});
        CHECK(summary(resolution) == "app 1.0.0, nccl 2.26.5, torchlike 2.7.0");
        REQUIRE(resolution.downgrades.size() == 1);
        const auto& downgrade = resolution.downgrades[0];
        CHECK(downgrade.name == "app");
        CHECK(rootlock::python::to_string(downgrade.chosen) == "1.0.0");
        CHECK(rootlock::python::to_string(downgrade.newest) == "1.1.0");
        CHECK(downgrade.why ==
              "with app==1.1.0, no version of nccl satisfies every requirement:\n"
              "  torchlike 2.8.0 requires nccl>=2.27,<2.28, which no version of nccl matches "
              "(available: 2.26.5, 2.27.3 (yanked))\n"
              "  app 1.1.0 requires torchlike==2.8.0\n"
              "  the recipe requires app==1.1.0");
        // The newest that the requirement itself allows is the measure, not the newest listed.
        CHECK(solved(source, {"app<1.1"}).downgrades.empty());
    }

    TEST_CASE("a trade-off between two direct requirements names what the other choice costs") {
        FakeSource source;
        source.add("left", "1.0", {"shared<2"}).add("left", "2.0", {"shared<2"});
        source.add("right", "1.0", {"shared<2"}).add("right", "2.0", {"shared>=2"});
        source.add("shared", "1.0").add("shared", "2.0");
        // right 2.0 is possible, but only with shared 2.0, which no left allows.
        const auto resolution = solved(source, {"left", "right"});
        CHECK(summary(resolution) == "left 2.0, right 1.0, shared 1.0");
        REQUIRE(resolution.downgrades.size() == 1);
        CHECK(resolution.downgrades[0].name == "right");
        CHECK(resolution.downgrades[0].why.starts_with(
            "with right==2.0, no version of shared satisfies every requirement:\n"));

        FakeSource pair;
        pair.add("left", "1.0").add("left", "2.0", {"right<2"});
        pair.add("right", "1.0").add("right", "2.0");
        const auto traded = solved(pair, {"left", "right"});
        CHECK(summary(traded) == "left 2.0, right 1.0");
        REQUIRE(traded.downgrades.size() == 1);
        CHECK(traded.downgrades[0].why ==
              "a resolution with right 2.0 exists, but it takes left 1.0 (not 2.0)");
    }

    TEST_CASE("a version kept from the existing lock is reported with the newest it could take") {
        FakeSource source;
        source.add("app", "1.0").add("app", "1.1");
        ResolveOptions options = x86_options();
        options.preferences.emplace("app", *rootlock::python::parse_version("1.0"));
        const auto resolution = solved(source, {"app"}, options);
        CHECK(summary(resolution) == "app 1.0");
        REQUIRE(resolution.downgrades.size() == 1);
        CHECK(resolution.downgrades[0].why ==
              "the existing lock's version is kept (upgrading it is possible)");
        options.upgrade.insert("app");
        CHECK(solved(source, {"app"}, options).downgrades.empty());
    }

    TEST_CASE("the downgrade question asks the source nothing twice") {
        FakeSource source = torch_stack();
        const auto resolution = solved(source, {"app", "nvidia-nccl-cu12>=2.26"});
        CHECK(summary(resolution) == "app 1.1.0, nvidia-nccl-cu12 2.27.3, torch 2.8.0");
        REQUIRE(resolution.downgrades.size() == 1);
        CHECK(resolution.downgrades[0].name == "nvidia-nccl-cu12");
        CHECK(source.max_dependency_calls_per_version() == 1);
        CHECK(source.versions_calls() == 3);
    }
}

}  // namespace ROOTLOCK_UNIT_ID
