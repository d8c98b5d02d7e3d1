// FakeSource: projects held in memory, answers in insertion or shuffled order, with counters of
// the lookups the resolver made.
#include "support/fake_source.hpp"

#include <algorithm>
#include <random>
#include <stdexcept>

#include "python/pep440.hpp"
#include "python/pep508.hpp"

namespace rootlock::testing {

FakeSource& FakeSource::add(const std::string& name, const std::string& version,
                            const std::vector<std::string>& requires_dist, bool yanked) {
    auto parsed = python::parse_version(version);
    if (!parsed)
        throw std::runtime_error("FakeSource: " + parsed.error().text());
    Entry entry{resolve::CandidateVersion{*parsed, yanked}, {}};
    for (const auto& line : requires_dist) {
        auto requirement = python::parse_requirement(line);
        if (!requirement)
            throw std::runtime_error("FakeSource: " + requirement.error().text());
        entry.requires_dist.push_back(*requirement);
    }
    m_projects[name].push_back(std::move(entry));
    return *this;
}

util::Result<std::vector<resolve::CandidateVersion>> FakeSource::versions(const std::string& name) {
    ++m_versions_calls;
    if (m_network_failures.count(name) != 0)
        return util::make_network_error("https://pypi.org/simple/" + name + "/",
                                        "connection refused");
    auto found = m_projects.find(name);
    if (found == m_projects.end())
        return util::make_error("", "no project named '" + name + "' on any index");
    std::vector<resolve::CandidateVersion> out;
    for (const auto& entry : found->second)
        out.push_back(entry.candidate);
    if (m_seed != 0) {
        std::mt19937 random(m_seed);
        std::shuffle(out.begin(), out.end(), random);
    }
    return out;
}

util::Result<std::vector<python::Requirement>> FakeSource::dependencies(
    const std::string& name, const python::Version& version) {
    ++m_dependency_calls;
    ++m_calls[{name, python::to_string(version)}];
    auto found = m_projects.find(name);
    if (found != m_projects.end())
        for (const auto& entry : found->second)
            if (entry.candidate.version == version)
                return entry.requires_dist;
    return util::make_error("", "no metadata for " + name + " " + python::to_string(version));
}

void FakeSource::prefetch(const std::vector<std::pair<std::string, python::Version>>& wanted) {
    m_prefetch_hints += wanted.size();
}

size_t FakeSource::max_dependency_calls_per_version() const {
    size_t most = 0;
    for (const auto& [key, count] : m_calls)
        most = std::max(most, count);
    return most;
}

std::vector<python::Requirement> requirements(const std::vector<std::string>& texts) {
    std::vector<python::Requirement> out;
    for (const auto& text : texts) {
        auto requirement = python::parse_requirement(text);
        if (!requirement)
            throw std::runtime_error("requirements: " + requirement.error().text());
        out.push_back(*requirement);
    }
    return out;
}

std::string summary(const resolve::Resolution& resolution) {
    std::string out;
    for (const auto& package : resolution.packages) {
        out += (out.empty() ? "" : ", ") + package.name;
        if (!package.extras.empty()) {
            std::string extras;
            for (const auto& extra : package.extras)
                extras += (extras.empty() ? "" : ",") + extra;
            out += "[" + extras + "]";
        }
        out += " " + python::to_string(package.version);
    }
    return out;
}

}  // namespace rootlock::testing
