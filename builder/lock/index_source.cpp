// The resolver's view of the recipe's indexes: candidate versions with the wheel each would use,
// and their dependencies, read once per (project, version) and kept for the whole run.
#include "lock/index_source.hpp"

#include "python/metadata.hpp"
#include "python/pep508.hpp"
#include "python/wheel_filename.hpp"

namespace rootlock::lock {

bool matches_pattern(std::string_view pattern, std::string_view name) {
    // Iterative glob with backtracking to the last '*': linear in practice, never recursive.
    size_t p = 0, n = 0, star = std::string_view::npos, mark = 0;
    while (n < name.size()) {
        if (p < pattern.size() && pattern[p] == '*') {
            star = p++;
            mark = n;
        } else if (p < pattern.size() && pattern[p] == name[n]) {
            ++p;
            ++n;
        } else if (star != std::string_view::npos) {
            p = star + 1;
            n = ++mark;
        } else {
            return false;
        }
    }
    while (p < pattern.size() && pattern[p] == '*')
        ++p;
    return p == pattern.size();
}

IndexSource::IndexSource(index::IndexClient& client, std::vector<SourceIndex> indexes,
                         const python::SupportedTags& tags, python::Version python_full,
                         python::MarkerEnvironment environment,
                         WheelMetadataReader read_wheel_metadata)
    : m_client(client),
      m_indexes(std::move(indexes)),
      m_tags(tags),
      m_python_full(std::move(python_full)),
      m_environment(std::move(environment)),
      m_read_wheel_metadata(std::move(read_wheel_metadata)) {}

std::vector<const SourceIndex*> IndexSource::allowed_indexes(const std::string& name) const {
    // Indexes that pin the name are its only sources; otherwise the unpinned ones, in order.
    std::vector<const SourceIndex*> allowed;
    for (const auto& index : m_indexes) {
        for (const auto& pattern : index.patterns) {
            if (matches_pattern(pattern, name)) {
                allowed.push_back(&index);
                break;
            }
        }
    }
    if (allowed.empty()) {
        for (const auto& index : m_indexes) {
            if (index.patterns.empty())
                allowed.push_back(&index);
        }
    }
    return allowed;
}

void IndexSource::prefetch_requirements(const std::vector<python::Requirement>& requirements) {
    // Only the first index each project may come from: that is where nearly all are found.
    std::map<std::string, std::vector<std::string>> by_index;
    for (const auto& requirement : requirements) {
        // The resolver's own rule for a requirement without extras (resolver.hpp); a URL
        // requirement is refused by the resolver before any page is needed.
        if (requirement.url.has_value() || !python::applies(requirement, m_environment))
            continue;
        const std::string& name = requirement.normalized_name;
        if (m_projects.count(name) != 0)
            continue;
        auto allowed = allowed_indexes(name);
        if (!allowed.empty())
            by_index[allowed.front()->url].push_back(name);
    }
    for (const auto& [url, wanted] : by_index)
        m_client.prefetch_projects(url, wanted);
}

util::Result<const IndexSource::Project*> IndexSource::load(const std::string& name) {
    if (auto found = m_projects.find(name); found != m_projects.end())
        return &found->second;

    std::vector<const SourceIndex*> allowed = allowed_indexes(name);

    Project project;
    bool found_page = false;
    std::vector<std::string> asked;
    for (const SourceIndex* index : allowed) {
        asked.push_back(index->name);
        ROOTLOCK_TRY(page, m_client.project(index->url, name));
        if (!page.has_value())
            continue;  // not on this index: the next one may have it
        found_page = true;
        for (const auto& file : page->files) {
            auto wheel = python::parse_wheel_filename(file.filename);
            if (!wheel.ok() || python::normalize_name(wheel->name) != name)
                continue;  // sdists, foreign names and unparseable files are not candidates
            auto version = python::parse_version(wheel->version);
            if (!version.ok())
                continue;
            auto priority = m_tags.best_priority(*wheel);
            if (!priority.has_value())
                continue;
            if (file.requires_python.has_value()) {
                auto specifiers = python::parse_specifiers(*file.requires_python);
                // pip ignores a file whose requires-python does not parse; so does rootlock.
                if (!specifiers.ok() || !specifiers->contains(m_python_full, true))
                    continue;
            }
            ChosenFile candidate{file, index->name, index->url, *priority};
            const std::string key = python::to_string(*version);
            auto [slot, inserted] = project.by_version.try_emplace(key, candidate);
            if (!inserted) {
                // Within one version: a file that is not yanked, then the best tag, then the
                // smallest name, so that the choice never depends on the page's order.
                const ChosenFile& old = slot->second;
                auto rank = [](const ChosenFile& c) {
                    return std::tuple(c.file.yanked, c.tag_priority, c.file.filename);
                };
                if (rank(candidate) < rank(old))
                    slot->second = candidate;
            }
            project.versions.try_emplace(key, *version);
        }
        break;  // the first index that has the project is its only source
    }
    if (!found_page) {
        std::string where;
        for (const auto& index_name : asked)
            where += (where.empty() ? "" : ", ") + index_name;
        if (asked.empty())
            return util::make_error(
                name, "no index may serve this project (every index pins other packages)");
        return util::make_error(name, "no project of that name on " +
                                          std::string(asked.size() == 1 ? "index " : "indexes ") +
                                          where);
    }
    auto [slot, inserted] = m_projects.emplace(name, std::move(project));
    (void)inserted;
    return &slot->second;
}

util::Result<std::vector<resolve::CandidateVersion>> IndexSource::versions(
    const std::string& name) {
    ROOTLOCK_TRY(project, load(name));
    std::vector<resolve::CandidateVersion> out;
    for (const auto& [key, version] : project->versions)
        out.push_back({version, project->by_version.at(key).file.yanked});
    return out;
}

const ChosenFile* IndexSource::chosen(const std::string& name,
                                      const python::Version& version) const {
    auto project = m_projects.find(name);
    if (project == m_projects.end())
        return nullptr;
    auto found = project->second.by_version.find(python::to_string(version));
    return found == project->second.by_version.end() ? nullptr : &found->second;
}

util::Result<std::string> IndexSource::metadata_text(const ChosenFile& chosen_file) {
    ROOTLOCK_TRY(from_index, m_client.metadata(chosen_file.file));
    if (from_index.has_value())
        return std::move(*from_index);
    return m_read_wheel_metadata(chosen_file);
}

util::Result<std::vector<python::Requirement>> IndexSource::dependencies(
    const std::string& name, const python::Version& version) {
    const std::string key = python::to_string(version);
    if (auto found = m_dependencies.find({name, key}); found != m_dependencies.end())
        return found->second;
    ROOTLOCK_TRY(project, load(name));
    auto file = project->by_version.find(key);
    if (file == project->by_version.end())
        return util::make_error(name + " " + key, "not a candidate offered by the index");
    ROOTLOCK_TRY(text, metadata_text(file->second));
    const std::string label = file->second.file.filename + ".metadata";
    ROOTLOCK_TRY(metadata, python::parse_metadata(text, label));
    if (python::normalize_name(metadata.name) != name)
        return util::make_error(label, "names project '" + metadata.name + "', not '" + name + "'");
    auto metadata_version = python::parse_version(metadata.version);
    if (!metadata_version.ok() || !(*metadata_version == version))
        return util::make_error(label, "names version " + metadata.version + ", not " + key);
    std::vector<python::Requirement> requirements;
    for (const auto& line : metadata.requires_dist) {
        auto requirement = python::parse_requirement(line);
        if (!requirement.ok())
            return util::make_error(label, "Requires-Dist: " + requirement.error().text());
        requirements.push_back(std::move(*requirement));
    }
    // The resolver asks for the active ones' versions next: one parallel round trip for all.
    prefetch_requirements(requirements);
    auto [slot, inserted] = m_dependencies.emplace(std::pair{name, key}, std::move(requirements));
    (void)inserted;
    return slot->second;
}

void IndexSource::prefetch(const std::vector<std::pair<std::string, python::Version>>& wanted) {
    std::vector<index::DistributionFile> files;
    for (const auto& [name, version] : wanted) {
        if (m_dependencies.count({name, python::to_string(version)}) != 0)
            continue;
        if (const ChosenFile* file = chosen(name, version);
            file != nullptr && file->file.has_metadata)
            files.push_back(file->file);
    }
    if (!files.empty())
        m_client.prefetch_metadata(files);  // failures surface again, located, in dependencies()
}

}  // namespace rootlock::lock
