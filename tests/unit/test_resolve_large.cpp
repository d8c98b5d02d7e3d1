// A generated graph of 320 projects with four versions each and planted conflicts: the result is
// checked against every requirement independently, and no version's metadata is fetched twice.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <random>
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

constexpr int k_packages = 320;
constexpr int k_versions = 4;

struct Generated {
    std::vector<std::string> roots;
    // name -> version text -> Requires-Dist
    std::map<std::string, std::map<std::string, std::vector<std::string>>> requires_dist;
};

std::string name_of(int index) {
    char buffer[16];
    std::snprintf(buffer, sizeof buffer, "p%03d", index);
    return buffer;
}

// A planted solution (one version per project) satisfies every requirement of its own versions;
// versions newer than the planted one often require what the recipe's pins forbid, so the
// newest-first search has to back out of them.
Generated generate(unsigned seed) {
    std::mt19937 random(seed);
    auto below = [&](int bound) {
        return static_cast<int>(random() % static_cast<unsigned>(bound));
    };
    std::vector<int> planted(k_packages);
    for (auto& version : planted)
        version = 1 + below(k_versions);
    auto plant = [&](int index) { return planted[static_cast<size_t>(index)]; };
    Generated out;
    for (int i = 0; i < k_packages; ++i) {
        for (int v = 1; v <= k_versions; ++v) {
            auto& lines = out.requires_dist[name_of(i)][std::to_string(v) + ".0"];
            for (int d = 0; d < 3 && i + 1 < k_packages; ++d) {
                const int j = i + 1 + below(std::min(40, k_packages - i - 1));
                const int low = 1 + below(plant(j));
                const int high = plant(j) + below(k_versions - plant(j) + 1);
                if (v > plant(i) && below(2) == 0)
                    lines.push_back(name_of(j) + "!=" + std::to_string(plant(j)) + ".0");
                else
                    lines.push_back(name_of(j) + ">=" + std::to_string(low) +
                                    ".0,<=" + std::to_string(high) + ".0");
            }
        }
    }
    for (int i = 0; i < 12; ++i)
        out.roots.push_back(name_of(i * 3));
    for (int i = 0; i < 40; ++i) {
        const int j = 10 + below(k_packages - 10);
        out.roots.push_back(name_of(j) + "==" + std::to_string(plant(j)) + ".0");
    }
    return out;
}

FakeSource source_for(const Generated& generated, unsigned shuffle_seed) {
    FakeSource source;
    source.shuffle(shuffle_seed);
    for (const auto& [name, versions] : generated.requires_dist)
        for (const auto& [version, lines] : versions)
            source.add(name, version, lines);
    return source;
}

ResolveOptions options() {
    ResolveOptions out;
    out.environment = linux_cpython(3, 12, 1, "x86_64");
    return out;
}

}  // namespace

TEST_SUITE("rootlock::resolve") {
    TEST_CASE("a large graph with planted conflicts resolves to a set that satisfies everything") {
        const Generated generated = generate(20250611);
        FakeSource source = source_for(generated, 0);
        const auto start = std::chrono::steady_clock::now();
        auto result = resolve(requirements(generated.roots), source, options());
        const auto elapsed =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start);
        if (!result.ok())
            FAIL(result.error().text());
        MESSAGE("resolved ", result->packages.size(), " packages in ", elapsed.count(), " ms, ",
                result->steps, " steps, ", result->backtracks, " backtracks, ",
                source.dependency_calls(), " dependency lookups, ", result->downgrades.size(),
                " direct requirements not at their newest");
        CHECK(result->backtracks >= 1);
        CHECK(source.max_dependency_calls_per_version() == 1);

        // Independent check: every requirement of the recipe and of every chosen version holds.
        std::map<std::string, rootlock::python::Version> chosen;
        for (const auto& package : result->packages)
            chosen.emplace(package.name, package.version);
        auto holds = [&](const rootlock::python::Requirement& requirement) {
            auto found = chosen.find(requirement.normalized_name);
            return found != chosen.end() && requirement.specifiers.contains(found->second, false);
        };
        for (const auto& root : requirements(generated.roots))
            CHECK_MESSAGE(holds(root), rootlock::python::to_string(root));
        size_t edges = 0;
        for (const auto& package : result->packages) {
            const auto& lines = generated.requires_dist.at(package.name)
                                    .at(rootlock::python::to_string(package.version));
            for (const auto& requirement : requirements(lines)) {
                CHECK_MESSAGE(holds(requirement), package.name, " ",
                              rootlock::python::to_string(package.version), " requires ",
                              rootlock::python::to_string(requirement));
                ++edges;
            }
            CHECK_FALSE(package.required_by.empty());
        }
        CHECK(edges > 0);
        CHECK(result->packages.size() > 50);

        // The same graph listed in another order gives the same answer.
        FakeSource shuffled = source_for(generated, 7);
        auto again = resolve(requirements(generated.roots), shuffled, options());
        REQUIRE(again.ok());
        CHECK(summary(*again) == summary(*result));
    }
}

}  // namespace ROOTLOCK_UNIT_ID
