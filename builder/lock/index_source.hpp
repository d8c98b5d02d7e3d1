// IndexSource: the resolver's package source over the recipe's indexes. It applies the index
// rules (a pinned pattern's packages come only from its index; otherwise the first index that
// has a project is its only source), the target's wheel tags and requires-python, and reads
// dependencies from PEP 658 metadata files, or from the wheel itself when the index has none.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "fetch/wheel_fetcher.hpp"
#include "index/index_client.hpp"
#include "python/pep440.hpp"
#include "python/pep508.hpp"
#include "python/wheel_tags.hpp"
#include "resolve/package_source.hpp"

namespace rootlock::lock {

using fetch::ChosenFile;

struct SourceIndex {
    std::string name;
    std::string url;
    std::vector<std::string> patterns;  // normalised names with '*' globs; empty: any project
};

// Reads a wheel's METADATA when the index offers no metadata file (the locker downloads and
// scans the wheel, which it needs anyway).
using WheelMetadataReader = std::function<util::Result<std::string>(const ChosenFile&)>;

// True when `name` matches the glob `pattern` ('*' matches any run of characters).
bool matches_pattern(std::string_view pattern, std::string_view name);

class IndexSource final : public resolve::PackageSource {
  public:
    // `environment`: the target's marker values, which decide what is worth prefetching.
    IndexSource(index::IndexClient& client, std::vector<SourceIndex> indexes,
                const python::SupportedTags& tags, python::Version python_full,
                python::MarkerEnvironment environment, WheelMetadataReader read_wheel_metadata);

    util::Result<std::vector<resolve::CandidateVersion>> versions(const std::string& name) override;
    util::Result<std::vector<python::Requirement>> dependencies(
        const std::string& name, const python::Version& version) override;
    void prefetch(const std::vector<std::pair<std::string, python::Version>>& wanted) override;

    // Fetches, in parallel ahead of versions(), the pages of the projects these requirements
    // name when they apply to the target without any extra, as the resolver will ask for them.
    // A requirement whose marker is false, or true only under an extra, is never asked here: a
    // page fetched for nothing is a request the lock never needed, and it tells the index a
    // name (what dependency-confusion defences avoid). An extra's pages are asked when the
    // resolver needs that extra.
    void prefetch_requirements(const std::vector<python::Requirement>& requirements);

    // The wheel behind a version that versions() offered; nullptr for anything else.
    const ChosenFile* chosen(const std::string& name, const python::Version& version) const;

  private:
    // Every candidate of one project, keyed by the normalised version text.
    struct Project {
        std::map<std::string, ChosenFile> by_version;
        std::map<std::string, python::Version> versions;
    };
    std::vector<const SourceIndex*> allowed_indexes(const std::string& name) const;
    util::Result<const Project*> load(const std::string& name);
    util::Result<std::string> metadata_text(const ChosenFile& chosen);

    index::IndexClient& m_client;
    std::vector<SourceIndex> m_indexes;
    const python::SupportedTags& m_tags;
    python::Version m_python_full;
    python::MarkerEnvironment m_environment;
    WheelMetadataReader m_read_wheel_metadata;
    std::map<std::string, Project> m_projects;
    std::map<std::pair<std::string, std::string>, std::vector<python::Requirement>> m_dependencies;
};

}  // namespace rootlock::lock
