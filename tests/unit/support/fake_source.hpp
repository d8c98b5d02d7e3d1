// FakeSource: an in-memory PackageSource for the resolver's tests, built from requirement texts,
// counting every lookup so that tests can prove nothing is fetched twice.
#pragma once

#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "resolve/package_source.hpp"
#include "resolve/resolver.hpp"

namespace rootlock::testing {

class FakeSource : public resolve::PackageSource {
  public:
    // Adds NAME VERSION with Requires-Dist lines ("b>=2", "c; extra == 'x'"); throws
    // std::runtime_error on text that does not parse (a bug in the test).
    FakeSource& add(const std::string& name, const std::string& version,
                    const std::vector<std::string>& requires_dist = {}, bool yanked = false);
    // versions() of this project fails with a network error.
    void fail_network(const std::string& name) { m_network_failures.insert(name); }
    // versions() answers in an order derived from `seed` instead of insertion order.
    void shuffle(unsigned seed) { m_seed = seed; }

    util::Result<std::vector<resolve::CandidateVersion>> versions(const std::string& name) override;
    util::Result<std::vector<python::Requirement>> dependencies(
        const std::string& name, const python::Version& version) override;
    void prefetch(const std::vector<std::pair<std::string, python::Version>>& wanted) override;

    size_t dependency_calls() const { return m_dependency_calls; }
    size_t versions_calls() const { return m_versions_calls; }
    size_t prefetch_hints() const { return m_prefetch_hints; }
    // The most times one (name, version) had its dependencies asked for.
    size_t max_dependency_calls_per_version() const;

  private:
    struct Entry {
        resolve::CandidateVersion candidate;
        std::vector<python::Requirement> requires_dist;
    };
    std::map<std::string, std::vector<Entry>> m_projects;
    std::set<std::string> m_network_failures;
    std::map<std::pair<std::string, std::string>, size_t> m_calls;
    size_t m_dependency_calls = 0;
    size_t m_versions_calls = 0;
    size_t m_prefetch_hints = 0;
    unsigned m_seed = 0;
};

// Parses requirement texts; throws std::runtime_error on one that does not parse.
std::vector<python::Requirement> requirements(const std::vector<std::string>& texts);

// "a 1.0, b[x] 2.0": every resolved package with its extras, in the resolution's order.
std::string summary(const resolve::Resolution& resolution);

}  // namespace rootlock::testing
