// Scopes and symbol binding for one namespace; see symbol_binding.hpp.
#include "check/symbol_binding.hpp"

#include <deque>
#include <unordered_set>

namespace rootlock::check {

using loader::canonical_of;

namespace {

std::vector<std::vector<int>> needed_edges(const loader::LoadSession& session) {
    std::vector<std::vector<int>> edges(session.objects().size());
    for (const auto& request : session.requests()) {
        if (request.requester >= 0 && request.object >= 0)
            edges[static_cast<size_t>(request.requester)].push_back(request.object);
    }
    return edges;
}

std::vector<int> breadth_first(const std::vector<std::vector<int>>& edges, int root) {
    std::vector<int> order;
    if (root < 0 || static_cast<size_t>(root) >= edges.size())
        return order;
    std::vector<bool> seen(edges.size(), false);
    std::deque<int> queue{root};
    seen[static_cast<size_t>(root)] = true;
    while (!queue.empty()) {
        int current = queue.front();
        queue.pop_front();
        order.push_back(current);
        for (int next : edges[static_cast<size_t>(current)]) {
            if (!seen[static_cast<size_t>(next)]) {
                seen[static_cast<size_t>(next)] = true;
                queue.push_back(next);
            }
        }
    }
    return order;
}

bool is_function(const elf::SymbolTable& symbols, size_t index) {
    return symbols.type(index) == elf::k_stt_func || symbols.type(index) == elf::k_stt_gnu_ifunc;
}

// The file a versioned reference's version is needed from.
std::string needed_file(const elf::ElfInfo& info, std::string_view version) {
    for (const auto& need : info.version_needs) {
        for (const auto& wanted : need.versions) {
            if (wanted.name == version)
                return need.file;
        }
    }
    return {};
}

struct ScopeEntry {
    const ExportIndex* index = nullptr;  // null: found, but its exports are unknown
    bool unknown = false;                // not found, or provided by the host
};

bool bound_in(const std::vector<ScopeEntry>& scope, elf::NamePool::Id name,
              std::string_view version) {
    const uint64_t hash = ExportIndex::hash_name(name);
    for (const auto& entry : scope) {
        if (entry.index->defines(name, hash, version))
            return true;
    }
    return false;
}

}  // namespace

BindingMemo::Entry* BindingMemo::find(const std::string& key) {
    auto found = m_entries.find(key);
    return found == m_entries.end() ? nullptr : &found->second;
}

BindingMemo::Entry& BindingMemo::insert(const std::string& key, Entry entry) {
    return m_entries.insert_or_assign(key, std::move(entry)).first->second;
}

BindResult bind_symbols(const loader::LoadSession& session, size_t first, const ScopePlan& plan,
                        const fs::FileTree& tree, ExportIndexCache& indexes, BindingMemo& memo) {
    BindResult result;
    const auto& objects = session.objects();
    const auto edges = needed_edges(session);

    // Each object's symbols, read once: the session's copy when it has them, else the tree's.
    std::vector<std::shared_ptr<const elf::ElfInfo>> infos(objects.size());
    auto info_of = [&](int index) -> const std::shared_ptr<const elf::ElfInfo>& {
        auto& slot = infos[static_cast<size_t>(index)];
        const auto& object = objects[static_cast<size_t>(index)];
        if (!slot && object.info) {
            slot = object.info;
            if (!slot->symbols_read && !object.canonical.empty()) {
                fs::ElfProbe probe = tree.probe_elf(object.canonical, true);
                if (probe.outcome == fs::ElfProbe::Outcome::elf && probe.info &&
                    probe.info->symbols_read) {
                    slot = probe.info;
                }
            }
        }
        return slot;
    };
    auto entry_of = [&](int index) {
        const auto& object = objects[static_cast<size_t>(index)];
        ScopeEntry entry;
        if (object.faked || !object.info) {
            entry.unknown = true;  // not found (reported as missing-soname) or host-provided
            return entry;
        }
        const auto& info = info_of(index);
        if (info && info->symbols_read)
            entry.index = &indexes.get(info);
        else
            entry.unknown = true;
        return entry;
    };

    std::vector<int> global;
    std::unordered_set<int> in_global;
    for (int root : plan.global_roots) {
        for (int index : breadth_first(edges, root)) {
            if (in_global.insert(index).second)
                global.push_back(index);
        }
    }
    std::vector<int> local;
    if (plan.local_root >= 0)
        local = breadth_first(edges, plan.local_root);

    auto make_scope = [&](const std::vector<int>& lists_a, const std::vector<int>& lists_b) {
        std::vector<ScopeEntry> scope;
        bool unknown = false;
        for (const auto* list : {&lists_a, &lists_b}) {
            for (int index : *list) {
                ScopeEntry entry = entry_of(index);
                unknown |= entry.unknown;
                if (entry.index != nullptr)
                    scope.push_back(entry);
            }
        }
        return std::make_pair(std::move(scope), unknown);
    };
    static const std::vector<int> k_none;
    const auto [global_scope, global_unknown] = make_scope(global, k_none);
    std::vector<ScopeEntry> local_scope;
    bool local_unknown = global_unknown;
    if (!local.empty()) {
        auto made = make_scope(global, local);
        local_scope = std::move(made.first);
        local_unknown = made.second;
    }

    for (size_t i = first; i < objects.size(); ++i) {
        const auto& object = objects[i];
        if (object.faked || !object.info)
            continue;
        const int index = static_cast<int>(i);
        const auto& info = info_of(index);
        if (!info || !info->symbols_read)
            continue;
        // First within the object's own closure, once per distinct closure.
        const std::vector<int> closure = breadth_first(edges, index);
        std::string key;
        for (int member : closure) {
            key += canonical_of(objects[static_cast<size_t>(member)]);
            key += '\n';
        }
        BindingMemo::Entry* entry = memo.find(key);
        if (entry == nullptr) {
            BindingMemo::Entry fresh;
            fresh.info = info;
            const auto [own_scope, own_unknown] = make_scope(closure, k_none);
            (void)own_unknown;
            const elf::SymbolTable& symbols = info->symbols;
            for (size_t s = 0; s < symbols.size(); ++s) {
                if (symbols.defined(s) || symbols.binding(s) != elf::k_stb_global)
                    continue;
                const elf::NamePool::Id name = symbols.name_id(s);
                if (name == elf::NamePool::k_empty)
                    continue;
                ++fresh.references;
                if (!bound_in(own_scope, name, symbols.version(s)))
                    fresh.residual.push_back(static_cast<uint32_t>(s));
            }
            entry = &memo.insert(key, std::move(fresh));
        }
        result.closures.push_back(entry);
        if (entry->residual.empty())
            continue;
        // The rest against the whole scope the object is bound in.
        const bool is_local = !local.empty() && in_global.count(index) == 0;
        const auto& scope = is_local ? local_scope : global_scope;
        const bool unknown = is_local ? local_unknown : global_unknown;
        const bool now = plan.bind_now || entry->info->bind_now();
        const elf::SymbolTable& symbols = entry->info->symbols;
        for (uint32_t s : entry->residual) {
            const std::string_view version = symbols.version(s);
            if ((unknown || plan.standalone) && version.empty()) {
                ++result.unjudged;
                continue;
            }
            if (bound_in(scope, symbols.name_id(s), version))
                continue;
            UnboundReference missing;
            missing.object = index;
            missing.name = symbols.name(s);
            missing.version = version;
            if (!version.empty())
                missing.file = needed_file(*entry->info, version);
            if (!missing.file.empty()) {
                // A version its provider lacks is a missing-version already.
                int provider = session.find_by_name(missing.file);
                if (provider >= 0) {
                    const auto& bound = objects[static_cast<size_t>(provider)];
                    if (!bound.faked && bound.info && !bound.info->version_defs.empty() &&
                        !bound.info->defines_version(missing.version)) {
                        ++result.unjudged;
                        continue;
                    }
                }
            }
            if (unknown && !missing.file.empty()) {
                int provider = session.find_by_name(missing.file);
                if (provider < 0 || objects[static_cast<size_t>(provider)].faked ||
                    !objects[static_cast<size_t>(provider)].info) {
                    ++result.unjudged;  // the library that must define it is missing or host's
                    continue;
                }
            }
            // Only a PLT-only call waits for its first call; without the relocation tables,
            // the symbol's type is the best guess.
            missing.at_load = now || (entry->info->relocations_read ? !symbols.lazy(s)
                                                                    : !is_function(symbols, s));
            result.unbound.push_back(std::move(missing));
        }
    }
    return result;
}

void count_references(BindResult& result) {
    for (BindingMemo::Entry* entry : result.closures) {
        if (!entry->counted) {
            result.references += entry->references;
            entry->counted = true;
        }
    }
}

}  // namespace rootlock::check
