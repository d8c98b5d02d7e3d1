// Reading a root's apt sources in apt's order; see apt_sources.hpp. apt's rules: parts are
// read in name order, only names of [A-Za-z0-9_.-] ending in ".list" or ".sources" (apt
// ignores the rest).
#include "freeze/apt_sources.hpp"

#include <algorithm>
#include <set>
#include <utility>

#include "fs/path_resolve.hpp"

namespace rootlock::freeze {

namespace {

constexpr std::string_view k_sources_list = "/etc/apt/sources.list";
constexpr std::string_view k_sources_parts = "/etc/apt/sources.list.d";

bool apt_reads_part(const std::string& name) {
    const bool ends_right = (name.size() > 5 && name.ends_with(".list")) ||
                            (name.size() > 8 && name.ends_with(".sources"));
    return ends_right && std::all_of(name.begin(), name.end(), [](char c) {
               return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                      c == '_' || c == '.' || c == '-';
           });
}

}  // namespace

util::Result<AptSources> read_apt_sources(const fs::FileTree& tree) {
    std::vector<std::pair<std::string, bool>> files;  // path, deb822 style
    files.emplace_back(std::string(k_sources_list), false);
    if (auto parts = fs::resolve(tree, k_sources_parts);
        parts && parts->stat.kind == fs::NodeKind::directory) {
        if (auto entries = tree.list(parts->path); entries.ok()) {
            std::vector<std::string> names;
            for (const auto& entry : *entries)
                if (apt_reads_part(entry.name))
                    names.push_back(entry.name);
            std::sort(names.begin(), names.end());
            for (const auto& name : names)
                files.emplace_back(std::string(k_sources_parts) + "/" + name,
                                   name.ends_with(".sources"));
        }
    }
    AptSources out;
    std::set<std::pair<std::string, std::string>> seen;
    for (const auto& [path, deb822] : files) {
        auto resolved = fs::resolve(tree, path);
        if (!resolved || resolved->stat.kind != fs::NodeKind::regular)
            continue;  // apt reads what is there
        ROOTLOCK_TRY(text, tree.read_file(resolved->path));
        std::vector<debian::SourceLine> entries;
        if (deb822) {
            ROOTLOCK_TRY(parsed, debian::parse_deb822_sources(text, path));
            entries = std::move(parsed);
        } else {
            entries = debian::parse_sources_list(text, path);
        }
        for (auto& entry : entries) {
            if (!seen.emplace(entry.url, entry.suite).second)
                continue;
            if (debian::is_flat_suite(entry.suite))
                out.flat.push_back(entry.from + " " + entry.url + " " + entry.suite);
            else
                out.archives.push_back(std::move(entry));
        }
    }
    return out;
}

}  // namespace rootlock::freeze
