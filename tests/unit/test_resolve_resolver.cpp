// The resolver's behaviour on small graphs: chains, diamonds, cycles, extras, markers, the
// pre-release and yanked rules, local versions, preferences, determinism and source errors.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "python/pep508.hpp"
#include "resolve/resolver.hpp"
#include "support/fake_source.hpp"

namespace ROOTLOCK_UNIT_ID {

using rootlock::python::linux_cpython;
using rootlock::resolve::resolve;
using rootlock::resolve::ResolveOptions;
using rootlock::testing::FakeSource;
using rootlock::testing::requirements;
using rootlock::testing::summary;

namespace {

ResolveOptions x86_options() {
    ResolveOptions options;
    options.environment = linux_cpython(3, 12, 1, "x86_64");
    return options;
}

std::string resolved(FakeSource& source, const std::vector<std::string>& roots,
                     const ResolveOptions& options = x86_options()) {
    auto result = resolve(requirements(roots), source, options);
    if (!result.ok())
        FAIL(result.error().text());
    return summary(*result);
}

std::string failure(FakeSource& source, const std::vector<std::string>& roots,
                    const ResolveOptions& options = x86_options()) {
    auto result = resolve(requirements(roots), source, options);
    REQUIRE_FALSE(result.ok());
    return result.error().text();
}

rootlock::python::Version version(const std::string& text) {
    return *rootlock::python::parse_version(text);
}

}  // namespace

TEST_SUITE("rootlock::resolve") {
    TEST_CASE("a chain resolves to the newest versions that satisfy each link") {
        FakeSource source;
        source.add("a", "1.0", {"b>=1"}).add("a", "2.0", {"b>=2,<3"});
        source.add("b", "1.0", {"c"}).add("b", "2.5", {"c<2"}).add("b", "3.0", {"c"});
        source.add("c", "1.0").add("c", "2.0");
        auto result = resolve(requirements({"a"}), source, x86_options());
        REQUIRE(result.ok());
        CHECK(summary(*result) == "a 2.0, b 2.5, c 1.0");
        const auto& a = result->packages[0];
        CHECK(a.direct);
        CHECK(a.required_by == std::vector<std::string>{"<recipe>"});
        CHECK(a.dependencies == std::vector<std::string>{"b"});
        CHECK(result->packages[2].required_by == std::vector<std::string>{"b"});
        CHECK_FALSE(result->packages[2].direct);
    }

    TEST_CASE("a diamond picks one version that both sides accept") {
        FakeSource source;
        source.add("app", "1.0", {"left", "right"});
        source.add("left", "1.0", {"shared>=1.2"});
        source.add("right", "1.0", {"shared<1.4"});
        for (const char* v : {"1.0", "1.2", "1.3", "1.4", "1.5"})
            source.add("shared", v);
        auto result = resolve(requirements({"app"}), source, x86_options());
        REQUIRE(result.ok());
        CHECK(summary(*result) == "app 1.0, left 1.0, right 1.0, shared 1.3");
        CHECK(result->packages.back().required_by == std::vector<std::string>{"left", "right"});
    }

    TEST_CASE("backtracking finds an older version when the newest leads to a conflict") {
        FakeSource source;
        source.add("a", "2.0", {"b==2"}).add("a", "1.0", {"b==1"});
        source.add("b", "1").add("b", "2", {"c>=5"});
        source.add("c", "1.0").add("c", "4.0");
        auto result = resolve(requirements({"a"}), source, x86_options());
        REQUIRE(result.ok());
        CHECK(summary(*result) == "a 1.0, b 1");
        CHECK(result->backtracks >= 1);
    }

    TEST_CASE("a cycle A -> B -> A resolves and records both edges") {
        FakeSource source;
        source.add("a", "1.0", {"b"}).add("b", "1.0", {"a>=1"});
        auto result = resolve(requirements({"a"}), source, x86_options());
        REQUIRE(result.ok());
        CHECK(summary(*result) == "a 1.0, b 1.0");
        CHECK(result->packages[0].required_by == std::vector<std::string>{"<recipe>", "b"});
        CHECK(result->packages[1].dependencies == std::vector<std::string>{"a"});
    }

    TEST_CASE("an extra adds its requirements and shares one version with the plain package") {
        FakeSource source;
        source.add("app", "1.0", {"foo>=1", "bar"});
        source.add("bar", "1.0", {"foo[gpu]<2"});
        source.add("foo", "1.0", {"cuda; extra == 'gpu'", "docs; extra == 'doc'"});
        source.add("foo", "2.0", {"cuda; extra == 'gpu'"});
        source.add("cuda", "12.0").add("docs", "1.0");
        auto result = resolve(requirements({"app"}), source, x86_options());
        REQUIRE(result.ok());
        CHECK(summary(*result) == "app 1.0, bar 1.0, cuda 12.0, foo[gpu] 1.0");
        CHECK(result->packages[3].dependencies == std::vector<std::string>{"cuda"});
        CHECK(result->packages[2].required_by == std::vector<std::string>{"foo"});
    }

    TEST_CASE("markers are evaluated for the declared target, not the host") {
        FakeSource source;
        source.add("app", "1.0",
                   {"x86only; platform_machine == 'x86_64'",
                    "armonly; platform_machine == 'aarch64'", "old; python_version < '3.9'"});
        source.add("x86only", "1.0").add("armonly", "1.0").add("old", "1.0");
        CHECK(resolved(source, {"app"}) == "app 1.0, x86only 1.0");
        ResolveOptions arm = x86_options();
        arm.environment = linux_cpython(3, 12, 1, "aarch64");
        CHECK(resolved(source, {"app", "skipped; sys_platform == 'win32'"}, arm) ==
              "app 1.0, armonly 1.0");
    }

    TEST_CASE("pre-releases are skipped unless named, or unless a requirement matches no final") {
        FakeSource source;
        source.add("p", "1.0").add("p", "2.1b1");
        CHECK(resolved(source, {"p"}) == "p 1.0");
        CHECK(resolved(source, {"p>=2.0b1"}) == "p 2.1b1");
        // Nothing final satisfies >=2, and the only requirement accepts the pre-release.
        CHECK(resolved(source, {"p>=2"}) == "p 2.1b1");
        CHECK(failure(source, {"p>2.1b1"}) ==
              "no version of p matches p>2.1b1 (available: 1.0, 2.1b1)");
        FakeSource only;
        only.add("q", "1.0rc1").add("q", "1.0rc2").add("q", "0.9.dev1");
        CHECK(resolved(only, {"q"}) == "q 1.0rc2");
    }

    TEST_CASE("the pre-release fallback needs every requirement to accept it on its own") {
        FakeSource source;
        source.add("app", "1.0", {"p>=1"}).add("beta-user", "1.0", {"p>=2.0a1"});
        source.add("p", "1.0").add("p", "2.1b1");
        // p>=1 alone admits 1.0, so it does not accept 2.1b1; p>=2 alone admits only 2.1b1.
        CHECK(failure(source, {"app", "p>=2"}) ==
              "no version of p satisfies every requirement:\n"
              "  app 1.0 requires p>=1\n"
              "  the recipe requires p>=2\n"
              "  the recipe requires app");
        // Naming a pre-release in one requirement does not relax another (pip would take 2.1b1).
        CHECK(failure(source, {"app", "p>=2.1b1"}) ==
              "no version of p satisfies every requirement:\n"
              "  app 1.0 requires p>=1\n"
              "  the recipe requires p>=2.1b1\n"
              "  the recipe requires app");
        CHECK(resolved(source, {"beta-user", "p>=2"}) == "beta-user 1.0, p 2.1b1");
    }

    TEST_CASE("a yanked version is chosen only for an exact pin that nothing else satisfies") {
        FakeSource source;
        source.add("y", "1.0").add("y", "1.1", {}, true);
        CHECK(resolved(source, {"y"}) == "y 1.0");
        CHECK(failure(source, {"y>=1.1,<2"}) ==
              "no version of y matches y>=1.1,<2 (available: 1.0, 1.1 (yanked))");
        CHECK(resolved(source, {"y==1.1"}) == "y 1.1");
        CHECK(resolved(source, {"y===1.1"}) == "y 1.1");
        CHECK(failure(source, {"y>=1.1"}) ==
              "no version of y matches y>=1.1 (available: 1.0, 1.1 (yanked))");
    }

    TEST_CASE("==V matches V's local versions and the newest local one wins") {
        FakeSource source;
        source.add("torch", "2.8.0+cu126").add("torch", "2.8.0+cu128").add("torch", "2.7.1");
        CHECK(resolved(source, {"torch==2.8.0"}) == "torch 2.8.0+cu128");
        CHECK(resolved(source, {"torch==2.8.0+cu126"}) == "torch 2.8.0+cu126");
        CHECK(resolved(source, {"torch<2.8"}) == "torch 2.7.1");
    }

    TEST_CASE("a locked version is kept while it still satisfies everything") {
        FakeSource source;
        source.add("a", "1.0", {"b"}).add("a", "1.1", {"b"}).add("a", "1.2", {"b"});
        source.add("b", "3.0").add("b", "3.1");
        ResolveOptions options = x86_options();
        options.preferences["a"] = version("1.1");
        options.preferences["b"] = version("3.0");
        CHECK(resolved(source, {"a"}, options) == "a 1.1, b 3.0");
        SUBCASE("upgrade_all ignores every preference") {
            options.upgrade_all = true;
            CHECK(resolved(source, {"a"}, options) == "a 1.2, b 3.1");
        }
        SUBCASE("upgrade names one package whose preference is ignored") {
            options.upgrade.insert("b");
            CHECK(resolved(source, {"a"}, options) == "a 1.1, b 3.1");
        }
        SUBCASE("a preference no longer allowed is dropped") {
            CHECK(resolved(source, {"a>=1.2", "b>3.0"}, options) == "a 1.2, b 3.1");
        }
        SUBCASE("a preference for a version that no longer exists is dropped") {
            options.preferences["a"] = version("0.9");
            CHECK(resolved(source, {"a"}, options) == "a 1.2, b 3.0");
        }
    }

    TEST_CASE("the result does not depend on the order the source lists versions in") {
        auto build = [](unsigned seed) {
            FakeSource source;
            source.shuffle(seed);
            for (int major = 1; major <= 6; ++major) {
                const std::string v = std::to_string(major) + ".0";
                source.add("a", v,
                           {"b>=" + std::to_string(major - 1), "c<" + std::to_string(7 - major)});
                source.add("b", v, {"c>=" + std::to_string(std::max(0, major - 2))});
                source.add("c", v);
            }
            return source;
        };
        FakeSource first = build(0);
        const std::string expected = resolved(first, {"a", "b<6"});
        for (unsigned seed : {1U, 2U, 3U, 17U, 99U}) {
            FakeSource shuffled = build(seed);
            CHECK(resolved(shuffled, {"a", "b<6"}) == expected);
        }
        CHECK(expected == "a 3.0, b 5.0, c 3.0");
    }

    TEST_CASE("source errors stop the resolution and come back as they are") {
        FakeSource source;
        source.add("a", "1.0", {"ghost>=1"}).add("b", "1.0", {"down"});
        CHECK(failure(source, {"nothere"}) == "no project named 'nothere' on any index");
        CHECK(failure(source, {"a"}) == "no project named 'ghost' on any index");
        source.fail_network("down");
        auto result = resolve(requirements({"b"}), source, x86_options());
        REQUIRE_FALSE(result.ok());
        CHECK(result.error().kind == rootlock::util::ErrorKind::network);
        CHECK(result.error().text() == "https://pypi.org/simple/down/: connection refused");
    }

    TEST_CASE("direct URL requirements are refused, at the root and below") {
        FakeSource source;
        source.add("a", "1.0", {"b @ https://example.com/b-1.0-py3-none-any.whl"});
        CHECK(failure(source, {"c @ https://example.com/c.whl"}) ==
              "c @ https://example.com/c.whl: direct URL requirements are not supported");
        CHECK(failure(source, {"a"}) ==
              "b @ https://example.com/b-1.0-py3-none-any.whl: direct URL requirements are not "
              "supported (required by a 1.0)");
    }

    TEST_CASE("the step limit gives a clear error") {
        FakeSource source;
        source.add("a", "1.0", {"b"}).add("b", "1.0", {"c"}).add("c", "1.0");
        ResolveOptions options = x86_options();
        options.max_steps = 2;
        CHECK(failure(source, {"a"}, options) ==
              "gave up after 2 steps without finding a resolution (max_steps)");
        options.max_steps = 4;  // the recipe itself is one decision
        CHECK(resolved(source, {"a"}, options) == "a 1.0, b 1.0, c 1.0");
    }

    TEST_CASE("dependencies are fetched once per version and the source gets prefetch hints") {
        FakeSource source;
        source.add("a", "2.0", {"b==2"}).add("a", "1.0", {"b==1"});
        source.add("b", "1").add("b", "2", {"c>=5"});
        source.add("c", "1.0").add("c", "4.0");
        CHECK(resolved(source, {"a"}) == "a 1.0, b 1");
        CHECK(source.max_dependency_calls_per_version() == 1);
        CHECK(source.versions_calls() == 3);
        CHECK(source.prefetch_hints() >= 1);
    }
}

}  // namespace ROOTLOCK_UNIT_ID
