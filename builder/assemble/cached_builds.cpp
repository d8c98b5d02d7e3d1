// Searching the wheel-scan cache for builds that define missing symbols; see cached_builds.hpp.
#include "assemble/cached_builds.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <unordered_set>

#include "python/wheel_scan.hpp"
#include "util/sealed_text.hpp"

namespace rootlock::assemble {

namespace {

std::string read_all(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::string base_name(const std::string& path) {
    size_t slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

std::vector<std::string> cached_builds_defining(const std::string& cache_dir,
                                                const std::string& project,
                                                const std::string& library,
                                                const std::vector<std::string>& symbols) {
    std::set<std::string> versions;
    std::error_code error;
    const std::filesystem::path root = python::scan_cache_folder(cache_dir);
    if (symbols.empty() || !std::filesystem::is_directory(root, error))
        return {};
    // Scans are JSON with keys in sorted order; a cheap text test skips other projects' scans
    // before anything is parsed.
    const std::string marker = "\"filename\":\"" + project + "-";
    for (auto it = std::filesystem::recursive_directory_iterator(root, error);
         !error && it != std::filesystem::recursive_directory_iterator(); it.increment(error)) {
        if (!it->is_regular_file(error) || it->path().extension() != ".json")
            continue;
        std::string text = read_all(it->path());
        if (text.find(marker) == std::string::npos)
            continue;
        auto content = util::unseal_text(text);
        if (!content)
            continue;  // damaged: the run that reads it as a wheel's scan says so
        auto scan = python::scan_from_json(*content);
        if (!scan.ok() || scan->filename.normalized_name != project)
            continue;
        for (const auto& entry : scan->entries) {
            if (!entry.elf || !entry.elf->symbols_read)
                continue;
            if (entry.elf->soname != library && base_name(entry.path) != library)
                continue;
            std::unordered_set<std::string> defined;
            for (const auto& symbol : entry.elf->symbols) {
                if (symbol.defined)
                    defined.insert(symbol.name);
            }
            if (std::all_of(symbols.begin(), symbols.end(),
                            [&](const std::string& name) { return defined.count(name) != 0; })) {
                versions.insert(scan->filename.version);
            }
        }
    }
    return std::vector<std::string>(versions.begin(), versions.end());
}

void add_cached_builds(const std::string& cache_dir, std::vector<check::Problem>& problems) {
    for (auto& problem : problems) {
        if (problem.kind != "undefined-symbol" || !problem.fields.contains("hint") ||
            problem.fields["hint"].get<std::string>().find("another torch") == std::string::npos) {
            continue;
        }
        std::vector<std::string> names;
        for (const auto& symbol : problem.fields["symbols"])
            names.push_back(symbol["name"].get<std::string>());
        auto builds = cached_builds_defining(cache_dir, "torch",
                                             problem.fields["library"].get<std::string>(), names);
        if (!builds.empty())
            problem.fields["cached_builds"] = builds;
    }
}

}  // namespace rootlock::assemble
