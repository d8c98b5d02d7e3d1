// Export indexes and glibc's definition-matching rules (elf/dl-lookup.c check_match); see
// symbol_index.hpp.
#include "check/symbol_index.hpp"

namespace rootlock::check {

namespace {

// A definition ld.so would consider at all: defined, not local, of a type it binds to.
bool exported(const elf::Symbol& symbol) {
    if (!symbol.defined || symbol.binding == elf::k_stb_local || symbol.name.empty())
        return false;
    switch (symbol.type) {
        case elf::k_stt_notype:
        case elf::k_stt_object:
        case elf::k_stt_func:
        case 5:  // STT_COMMON
        case elf::k_stt_tls:
        case elf::k_stt_gnu_ifunc:
            return true;
        default:
            return false;
    }
}

bool all_digits(std::string_view text) {
    return !text.empty() && text.find_first_not_of("0123456789") == std::string_view::npos;
}

}  // namespace

std::string_view mangled_namespace(std::string_view name) {
    if (name.substr(0, 2) != "_Z")
        return {};
    size_t at = 2;
    // Special names: vtables, typeinfo, typeinfo names, VTT, construction vtables.
    if (name.size() > at + 1 && name[at] == 'T' &&
        (name[at + 1] == 'V' || name[at + 1] == 'I' || name[at + 1] == 'S' ||
         name[at + 1] == 'T')) {
        at += 2;
    }
    if (at >= name.size() || name[at] != 'N')
        return {};
    ++at;
    while (at < name.size() && (name[at] == 'K' || name[at] == 'V' || name[at] == 'r'))
        ++at;
    size_t digits = at;
    while (digits < name.size() && name[digits] >= '0' && name[digits] <= '9')
        ++digits;
    if (digits == at || digits - at > 4)
        return {};
    size_t length = 0;
    for (size_t i = at; i < digits; ++i)
        length = length * 10 + static_cast<size_t>(name[i] - '0');
    if (length == 0 || digits + length > name.size())
        return {};
    std::string_view prefix = name.substr(at, digits - at + length);
    return all_digits(prefix.substr(0, digits - at)) ? prefix : std::string_view{};
}

uint64_t ExportIndex::hash_name(std::string_view name) {
    // FNV-1a: short mangled names dominate, and it needs no state.
    uint64_t hash = 0xcbf29ce484222325ULL;
    for (char c : name) {
        hash ^= static_cast<unsigned char>(c);
        hash *= 0x100000001b3ULL;
    }
    return hash;
}

std::string_view c_prefix(std::string_view name) {
    if (name.size() < 6 || name.substr(0, 2) == "_Z")
        return {};
    return name.substr(0, 4);
}

size_t ExportIndex::c_prefix_count(std::string_view name) const {
    std::string_view prefix = c_prefix(name);
    auto found = prefix.empty() ? m_c_prefixes.end() : m_c_prefixes.find(prefix);
    return found == m_c_prefixes.end() ? 0 : found->second;
}

ExportIndex::ExportIndex(std::shared_ptr<const elf::ElfInfo> info) : m_info(std::move(info)) {
    const auto& symbols = m_info->symbols;
    size_t exports = 0;
    for (const auto& symbol : symbols) {
        m_versioned |= !symbol.version.empty();
        exports += exported(symbol) ? 1U : 0U;
    }
    m_entries.reserve(exports);
    size_t capacity = 16;
    while (capacity < exports * 2)
        capacity *= 2;
    m_slots.resize(capacity);
    const uint64_t mask = capacity - 1;
    for (size_t i = 0; i < symbols.size(); ++i) {
        const elf::Symbol& symbol = symbols[i];
        if (!exported(symbol))
            continue;
        m_entries.push_back(Entry{static_cast<uint32_t>(i), 0});
        const auto index = static_cast<uint32_t>(m_entries.size());
        const uint64_t hash = hash_name(symbol.name);
        const auto tag = static_cast<uint32_t>(hash >> 32);
        for (uint64_t at = hash & mask;; at = (at + 1) & mask) {
            Slot& slot = m_slots[at];
            if (slot.first == 0) {
                slot = Slot{tag, index};
                break;
            }
            if (slot.tag == tag && symbol_of(m_entries[slot.first - 1]).name == symbol.name) {
                m_entries.back().next = slot.first;
                slot.first = index;
                break;
            }
        }
        if (auto space = mangled_namespace(symbol.name); !space.empty())
            ++m_namespaces[space];
        else if (auto prefix = c_prefix(symbol.name); !prefix.empty())
            ++m_c_prefixes[prefix];
    }
}

const ExportIndex::Slot* ExportIndex::find(std::string_view name, uint64_t hash) const {
    const uint64_t mask = m_slots.size() - 1;
    const auto tag = static_cast<uint32_t>(hash >> 32);
    for (uint64_t at = hash & mask;; at = (at + 1) & mask) {
        const Slot& slot = m_slots[at];
        if (slot.first == 0)
            return nullptr;
        if (slot.tag == tag && symbol_of(m_entries[slot.first - 1]).name == name)
            return &slot;
    }
}

bool ExportIndex::defines(std::string_view name, uint64_t hash, std::string_view version) const {
    const Slot* found = find(name, hash);
    if (found == nullptr)
        return false;
    if (!m_versioned)
        return true;
    for (uint32_t at = found->first; at != 0; at = m_entries[at - 1].next) {
        const elf::Symbol& definition = symbol_of(m_entries[at - 1]);
        if (version.empty()) {
            if (!definition.hidden || definition.version.empty())
                return true;
        } else if (definition.version == version ||
                   (definition.version.empty() && !definition.hidden)) {
            return true;
        }
    }
    return false;
}

size_t ExportIndex::namespace_count(std::string_view mangled_prefix) const {
    auto found = m_namespaces.find(mangled_prefix);
    return found == m_namespaces.end() ? 0 : found->second;
}

const ExportIndex& ExportIndexCache::get(const std::shared_ptr<const elf::ElfInfo>& info) {
    std::lock_guard lock(m_mutex);
    auto& slot = m_indexes[info.get()];
    if (!slot)
        slot = std::make_unique<ExportIndex>(info);
    return *slot;
}

}  // namespace rootlock::check
