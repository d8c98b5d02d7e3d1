// Grouping, demangling and explaining undefined symbols; see symbol_report.hpp.
#include "check/symbol_report.hpp"

#include <cxxabi.h>
#include <fmt/format.h>
#include <algorithm>
#include <cstdlib>
#include <memory>
#include <unordered_map>
#include <unordered_set>

namespace rootlock::check {

using loader::canonical_of;
using loader::soname_of;

namespace {

// The library a reference was expected from: the file its version is needed from; for a C++
// name, the directly needed library exporting the most names of the same top-level namespace
// (c10:: from libc10.so); otherwise unknown (found later from the root, if anywhere).
std::string expected_library(const loader::LoadSession& session, const UnboundReference& missing,
                             ExportIndexCache& indexes) {
    if (!missing.file.empty())
        return missing.file;
    std::string_view space = mangled_namespace(missing.name);
    std::string best;
    size_t best_count = 0;
    for (const auto& request : session.requests()) {
        if (request.requester != missing.object || request.object < 0)
            continue;
        const auto& object = session.objects()[static_cast<size_t>(request.object)];
        if (object.faked || !object.info || !object.info->symbols_read)
            continue;
        const ExportIndex& index = indexes.get(object.info);
        size_t count =
            space.empty() ? index.c_prefix_count(missing.name) : index.namespace_count(space);
        if (count > best_count) {
            best_count = count;
            best = soname_of(object);
        }
    }
    return best;
}

bool is_torch_library(const std::string& library, const std::string& provider) {
    return library.rfind("libc10", 0) == 0 || library.rfind("libtorch", 0) == 0 ||
           provider.find("/torch/lib/") != std::string::npos;
}

std::string hint_for(const std::string& library, const std::string& provider,
                     const std::set<std::string>& needed_by, bool cxx) {
    if (library.empty())
        return {};
    if (is_torch_library(library, provider)) {
        // A consumer inside the same torch directory is torch itself: a torch of mixed builds.
        const size_t lib_at = provider.find("/torch/lib/");
        const std::string torch_dir =
            lib_at == std::string::npos ? std::string() : provider.substr(0, lib_at + 7);
        const bool extension =
            std::any_of(needed_by.begin(), needed_by.end(), [&](const std::string& consumer) {
                return torch_dir.empty() || consumer.rfind(torch_dir, 0) != 0;
            });
        return extension ? "this extension was built against another torch"
                         : "torch's own libraries come from different builds";
    }
    if (cxx)
        return fmt::format("built against another version of {}", library);
    return fmt::format(
        "{} does not define them: another build of it wins, or it is older "
        "than the one linked against",
        library);
}

}  // namespace

std::string demangle(const std::string& name) {
    if (name.rfind("_Z", 0) != 0)
        return name;
    int status = 0;
    std::unique_ptr<char, decltype(&std::free)> text(
        abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status), &std::free);
    return status == 0 && text ? std::string(text.get()) : name;
}

void SymbolCollector::add(const loader::LoadSession& session, const BindResult& result,
                          bool standalone, ExportIndexCache& indexes) {
    m_references += result.references;
    m_unjudged += result.unjudged;
    for (const auto& missing : result.unbound) {
        const auto& objects = session.objects();
        std::string library = expected_library(session, missing, indexes);
        std::string provider;
        if (!library.empty()) {
            int bound = session.find_by_name(library);
            if (bound >= 0 && !objects[static_cast<size_t>(bound)].faked)
                provider = canonical_of(objects[static_cast<size_t>(bound)]);
        }
        auto& group = m_groups[{canonical_of(objects[static_cast<size_t>(missing.object)]), library,
                                provider}];
        group.symbols.insert(Missing{missing.name, missing.version, missing.at_load});
        group.in_context |= !standalone;
        if (library.empty() && group.needed.empty()) {
            for (const auto& request : session.requests()) {
                if (request.requester != missing.object || request.object < 0)
                    continue;
                const auto& bound = objects[static_cast<size_t>(request.object)];
                group.needed[request.name] = bound.faked ? "" : canonical_of(bound);
            }
        }
    }
}

std::vector<std::string> SymbolCollector::missed_by(const std::string& consumer) const {
    std::vector<std::string> names;
    for (auto it = m_groups.lower_bound({consumer, "", ""});
         it != m_groups.end() && std::get<0>(it->first) == consumer; ++it) {
        if (!it->second.in_context)
            continue;
        for (const auto& missing : it->second.symbols)
            names.push_back(missing.name);
    }
    return names;
}

void SymbolCollector::emit(const Scan& scan, std::vector<Problem>& problems) const {
    if (m_groups.empty())
        return;
    // The missing names by their pool ids (they came from symbol tables, so the pool has them).
    std::unordered_set<elf::NamePool::Id> wanted;
    for (const auto& [key, group] : m_groups) {
        for (const auto& missing : group.symbols) {
            if (auto id = elf::NamePool::shared().find(missing.name))
                wanted.insert(*id);
        }
    }
    // Where else the root defines them: one pass over every scanned object's symbols.
    std::unordered_map<std::string, std::set<std::string>> definers;
    std::unordered_map<std::string, std::string> soname_at;
    for (const auto& object : scan.objects) {
        if (!object.info || !object.info->symbols_read)
            continue;
        const elf::SymbolTable& symbols = object.info->symbols;
        for (size_t s = 0; s < symbols.size(); ++s) {
            if (!symbols.defined(s) || symbols.binding(s) == elf::k_stb_local ||
                wanted.count(symbols.name_id(s)) == 0) {
                continue;
            }
            definers[std::string(symbols.name(s))].insert(object.path);
            soname_at[object.path] = object.info->soname;
        }
    }
    // A symbol that fails at load in one context and at the first call in another is reported
    // by its earliest failure.
    struct Merged {
        std::set<std::string> needed_by;
        bool in_context = false;
    };
    using Symbols = std::map<std::pair<std::string, std::string>, bool>;  // -> at_load
    std::map<std::tuple<std::string, std::string, Symbols>, Merged> merged;
    for (const auto& [key, group] : m_groups) {
        Symbols symbols;
        for (const auto& missing : group.symbols)
            symbols[{missing.name, missing.version}] |= missing.at_load;
        std::string library = std::get<1>(key);
        std::string provider = std::get<2>(key);
        if (library.empty()) {
            // A copy elsewhere defining the first of them, under a soname the consumer needs.
            auto found = definers.find(group.symbols.begin()->name);
            for (const auto& path :
                 found == definers.end() ? std::set<std::string>{} : found->second) {
                auto needed = group.needed.find(soname_at[path]);
                if (needed != group.needed.end() && !needed->first.empty()) {
                    library = needed->first;
                    provider = needed->second;
                    break;
                }
            }
        }
        auto& entry = merged[{library, provider, std::move(symbols)}];
        entry.needed_by.insert(std::get<0>(key));
        entry.in_context |= group.in_context;
    }
    for (const auto& [key, entry] : merged) {
        const auto& [library, provider, symbols] = key;
        Problem problem{
            "undefined-symbol", entry.in_context ? Severity::error : Severity::warning, {}};
        std::set<std::string> everywhere;
        bool first = true;
        bool cxx = false;
        nlohmann::ordered_json rows = nlohmann::ordered_json::array();
        for (const auto& [name_version, at_load] : symbols) {
            const auto& [name, version] = name_version;
            cxx |= name.rfind("_Z", 0) == 0;
            nlohmann::ordered_json row;
            row["name"] = name;
            row["demangled"] = demangle(name);
            row["version"] = version;
            row["fails"] = at_load ? "at-load" : "at-first-call";
            rows.push_back(std::move(row));
            std::set<std::string> here;
            if (auto found = definers.find(name); found != definers.end())
                here = found->second;
            if (first) {
                everywhere = here;
                first = false;
            } else {
                std::set<std::string> both;
                for (const auto& path : everywhere) {
                    if (here.count(path))
                        both.insert(path);
                }
                everywhere = std::move(both);
            }
        }
        everywhere.erase(provider);
        problem.fields["library"] = library;
        problem.fields["provider"] = provider;
        problem.fields["needed_by"] =
            std::vector<std::string>(entry.needed_by.begin(), entry.needed_by.end());
        problem.fields["count"] = symbols.size();
        problem.fields["symbols"] = std::move(rows);
        if (!everywhere.empty())
            problem.fields["defined_by"] =
                std::vector<std::string>(everywhere.begin(), everywhere.end());
        if (std::string hint = hint_for(library, provider, entry.needed_by, cxx); !hint.empty())
            problem.fields["hint"] = hint;
        if (!entry.in_context)
            problem.fields["context"] = "standalone";
        problems.push_back(std::move(problem));
    }
}

}  // namespace rootlock::check
