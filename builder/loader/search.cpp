// Candidate probing and directory search for the loader model; see search.hpp. The acceptance
// rules follow glibc 2.36's open_verify (elf/dl-load.c) as loader.md section 2 records them.
#include "loader/search.hpp"

#include <fmt/format.h>

namespace rootlock::loader {

SearchContext::SearchContext(const fs::FileTree& tree, Target target, LoaderEnvironment environment,
                             std::optional<CacheIndex> cache)
    : m_tree(tree),
      m_target(std::move(target)),
      m_environment(std::move(environment)),
      m_cache(std::move(cache)),
      m_resolver(tree),
      m_subdirs(hwcaps_subdirs(m_target)) {}

void SearchContext::note(std::string text) {
    m_notes.insert(std::move(text));
}

const SearchContext::Listing& SearchContext::listing(const std::string& dir) {
    auto it = m_listings.find(dir);
    if (it != m_listings.end())
        return it->second;
    Listing entry;
    if (auto resolved = m_resolver.resolve(dir.empty() ? "/" : dir);
        resolved && resolved->stat.kind == fs::NodeKind::directory) {
        if (auto names = m_tree.list(resolved->path)) {
            entry.exists = true;
            entry.canonical = resolved->path;
            for (auto& child : names.value())
                entry.names.insert(std::move(child.name));
        }
    }
    return m_listings.emplace(dir, std::move(entry)).first->second;
}

Attempt SearchContext::try_path(const std::string& path) {
    auto cached = m_attempts.find(path);
    if (cached != m_attempts.end())
        return cached->second;

    Attempt attempt;
    size_t slash = path.rfind('/');
    std::string dir = slash == std::string::npos ? "/" : path.substr(0, slash);
    std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
    const Listing& parent = listing(dir);
    std::optional<fs::Resolved> resolved;
    if (parent.exists && parent.names.count(base) != 0) {
        std::string joined = parent.canonical == "/" ? "/" + base : parent.canonical + "/" + base;
        resolved = m_resolver.resolve(joined);
    }
    if (resolved && resolved->stat.kind == fs::NodeKind::regular) {
        fs::ElfProbe probe = m_tree.probe_elf(resolved->path);
        using PO = fs::ElfProbe::Outcome;
        // open_verify reads e_ident first: another class is skipped before anything else is
        // looked at, however broken the rest of the header.
        const auto target_class = static_cast<uint8_t>(m_target.elf_class);
        if ((probe.outcome == PO::elf || probe.outcome == PO::malformed) &&
            probe.ident_class != 0 && probe.ident_class != target_class) {
            attempt.outcome = Attempt::Outcome::other_class;
            return m_attempts.emplace(path, attempt).first->second;
        }
        switch (probe.outcome) {
            case PO::missing:
            case PO::not_regular:
                break;
            case PO::too_short:
                attempt.outcome = Attempt::Outcome::fatal;
                attempt.error = "file too short";
                break;
            case PO::not_elf:
                attempt.outcome = Attempt::Outcome::fatal;
                attempt.error = "invalid ELF header";
                break;
            case PO::malformed:
                attempt.outcome = Attempt::Outcome::fatal;
                attempt.error = probe.error;
                break;
            case PO::elf: {
                const elf::ElfInfo& info = *probe.info;
                if (info.elf_class != m_target.elf_class) {
                    attempt.outcome = Attempt::Outcome::other_class;
                } else if (info.machine != m_target.machine) {
                    attempt.outcome = Attempt::Outcome::other_machine;
                } else if (info.byte_order != elf::ByteOrder::little &&
                           m_target.machine != elf::k_machine_s390) {
                    attempt.outcome = Attempt::Outcome::fatal;
                    attempt.error = "ELF file data encoding not little-endian";
                } else if (info.type != elf::k_type_dyn) {
                    attempt.outcome = Attempt::Outcome::fatal;
                    attempt.error = info.type == elf::k_type_exec
                                        ? "cannot dynamically load executable"
                                        : "only ET_DYN and ET_EXEC can be loaded";
                } else {
                    attempt.outcome = Attempt::Outcome::accepted;
                    attempt.found =
                        Found{path, resolved->path, resolved->stat.identity, probe.info};
                }
                break;
            }
        }
    }
    return m_attempts.emplace(path, attempt).first->second;
}

DirSearch SearchContext::search_dirs(std::string_view name, const std::vector<std::string>& dirs) {
    DirSearch result;
    for (const auto& dir : dirs) {
        const Listing& top = listing(dir);
        if (!top.exists)
            continue;
        std::string prefix = dir.empty() || dir.back() != '/' ? dir + "/" : dir;
        if (m_target.hwcaps.empty() && top.names.count("glibc-hwcaps") != 0) {
            note(
                fmt::format("{}glibc-hwcaps exists: which copy loads there depends on the CPU "
                            "(name the levels with --hwcaps)",
                            prefix));
        }
        std::vector<std::string> candidates;
        for (const auto& sub : m_subdirs)
            candidates.push_back(prefix + sub + "/" + std::string(name));
        candidates.push_back(prefix + std::string(name));
        for (const auto& candidate : candidates) {
            Attempt attempt = try_path(candidate);
            switch (attempt.outcome) {
                case Attempt::Outcome::absent:
                case Attempt::Outcome::other_machine:
                    break;
                case Attempt::Outcome::other_class:
                    result.saw_other_class = true;
                    break;
                case Attempt::Outcome::fatal:
                    result.fatal = attempt.error;
                    result.fatal_path = candidate;
                    return result;
                case Attempt::Outcome::accepted:
                    result.found = attempt.found;
                    return result;
            }
        }
    }
    return result;
}

std::optional<std::string> SearchContext::cache_lookup(std::string_view name) const {
    if (!m_cache)
        return std::nullopt;
    const CacheEntry* entry = m_cache->lookup(name);
    if (entry == nullptr)
        return std::nullopt;
    return entry->path;
}

}  // namespace rootlock::loader
