// CacheIndex: a parsed ld.so.cache indexed once for one target, answering lookups the way
// glibc 2.36's _dl_load_cache_lookup (search_cache) does; see ld_so_cache.hpp.
#include "loader/ld_so_cache.hpp"

#include <algorithm>

namespace rootlock::loader {

namespace {

bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

// The libcmp equivalence class of a soname: digit runs without their leading zeros.
std::string lookup_key(std::string_view soname) {
    std::string key;
    key.reserve(soname.size());
    for (size_t i = 0; i < soname.size();) {
        if (!is_digit(soname[i])) {
            key += soname[i++];
            continue;
        }
        size_t end = i;
        while (end < soname.size() && is_digit(soname[end]))
            ++end;
        while (i + 1 < end && soname[i] == '0')
            ++i;
        key.append(soname.substr(i, end - i));
        i = end;
    }
    return key;
}

}  // namespace

CacheIndex::CacheIndex(LdSoCache cache, CacheLookupTarget target)
    : m_cache(std::move(cache)), m_target(std::move(target)) {
    for (size_t i = 0; i < m_cache.entries.size(); ++i) {
        m_by_key[lookup_key(m_cache.entries[i].soname)].push_back(i);
    }
}

const std::vector<size_t>* CacheIndex::candidates(std::string_view soname) const {
    auto found = m_by_key.find(lookup_key(soname));
    return found == m_by_key.end() ? nullptr : &found->second;
}

bool CacheIndex::flags_accepted(int32_t flags) const {
    if (flags == m_target.required_flags)
        return true;
    return m_target.required_flags == k_cache_flag_elf_libc6 && flags == k_cache_flag_elf;
}

const CacheEntry* CacheIndex::lookup(std::string_view soname) const {
    const auto* indices = candidates(soname);
    if (indices == nullptr)
        return nullptr;
    const uint64_t exclude = ~(m_target.legacy_hwcap | m_target.legacy_platform_mask | k_hwcap_tls);
    const CacheEntry* best = nullptr;
    size_t best_priority = 0;
    // search_cache's walk over the run of equal keys, in cache order.
    for (size_t index : *indices) {
        const CacheEntry& entry = m_cache.entries[index];
        if (!flags_accepted(entry.flags))
            continue;
        bool named = is_hwcaps_extension(entry.hwcap);
        if (named) {
            uint64_t level = (entry.hwcap >> 32) & k_hwcap_isa_level_mask;
            if (level >= 32 || ((m_target.isa_levels >> level) & 1U) == 0)
                continue;
        }
        // glibc-hwcaps entries come first; once they are exhausted, a match found stands.
        if (!named && best != nullptr)
            break;
        if (!named && (entry.hwcap & exclude) != 0)
            continue;
        uint64_t platform = entry.hwcap & m_target.legacy_platform_mask;
        if (platform != 0 && platform != m_target.legacy_platform)
            continue;
        if (named) {
            const auto& supported = m_target.hwcaps_supported;
            auto found = std::find(supported.begin(), supported.end(), entry.hwcaps_subdir);
            if (found == supported.end())
                continue;
            auto priority = static_cast<size_t>(found - supported.begin()) + 1;
            if (best != nullptr && priority >= best_priority)
                continue;
            best_priority = priority;
        }
        best = &entry;
        if (!named && entry.flags == m_target.required_flags)
            break;
    }
    return best;
}

std::vector<const CacheEntry*> CacheIndex::all(std::string_view soname) const {
    std::vector<const CacheEntry*> result;
    if (const auto* indices = candidates(soname)) {
        for (size_t index : *indices)
            result.push_back(&m_cache.entries[index]);
    }
    return result;
}

}  // namespace rootlock::loader
