// Export indexes and glibc's definition-matching rules (elf/dl-lookup.c check_match); see
// symbol_index.hpp.
#include "check/symbol_index.hpp"

namespace rootlock::check {

namespace {

// A definition ld.so would consider at all: defined, not local, of a type it binds to.
bool exported(const elf::SymbolTable& symbols, size_t index) {
    if (!symbols.defined(index) || symbols.binding(index) == elf::k_stb_local)
        return false;
    switch (symbols.type(index)) {
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

// Where a hash lands: its bucket from the high half, its Bloom word and two bits from the low.
uint64_t bucket_of(uint64_t hash, uint64_t mask) {
    return (hash >> 32) & mask;
}
uint64_t bloom_word_of(uint64_t hash, uint64_t mask) {
    return (hash >> 12) & mask;
}
uint64_t bloom_bits_of(uint64_t hash) {
    return (uint64_t{1} << (hash & 63U)) | (uint64_t{1} << ((hash >> 6) & 63U));
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

uint64_t ExportIndex::hash_name(elf::NamePool::Id name) {
    // MurmurHash3's finaliser: ids are offsets, so every bit of them is mixed into the bucket,
    // the Bloom word and its two bits.
    uint64_t hash = name;
    hash ^= hash >> 33;
    hash *= 0xff51afd7ed558ccdULL;
    hash ^= hash >> 33;
    hash *= 0xc4ceb9fe1a85ec53ULL;
    hash ^= hash >> 33;
    return hash;
}

std::string_view c_prefix(std::string_view name) {
    if (name.size() < 6 || name.substr(0, 2) == "_Z")
        return {};
    return name.substr(0, 4);
}

size_t ExportIndex::c_prefix_count(std::string_view name) const {
    count_prefixes();
    std::string_view prefix = c_prefix(name);
    auto found = prefix.empty() ? m_c_prefixes.end() : m_c_prefixes.find(prefix);
    return found == m_c_prefixes.end() ? 0 : found->second;
}

ExportIndex::ExportIndex(std::shared_ptr<const elf::ElfInfo> info) : m_info(std::move(info)) {
    const elf::SymbolTable& symbols = m_info->symbols;
    struct Found {
        uint64_t hash;
        uint32_t symbol;
    };
    std::vector<Found> found;
    found.reserve(symbols.size());  // grown step by step, it faulted in its pages again each time
    for (size_t i = 0; i < symbols.size(); ++i) {
        if (!exported(symbols, i))
            continue;
        const elf::NamePool::Id id = symbols.name_id(i);
        if (id == elf::NamePool::k_empty)
            continue;
        found.push_back(Found{hash_name(id), static_cast<uint32_t>(i)});
    }
    // One or two exports a bucket; eight to sixteen filter bits an export (two set), which
    // lets about one miss in twenty through to the buckets.
    size_t buckets = 1;
    while (buckets * 2 < found.size())
        buckets *= 2;
    size_t words = 1;
    while (words * 8 < found.size())
        words *= 2;
    m_bucket_mask = buckets - 1;
    m_bloom_mask = words - 1;
    m_bloom.assign(words, 0);
    m_buckets.assign(buckets + 1, 0);
    for (const auto& export_found : found) {
        ++m_buckets[bucket_of(export_found.hash, m_bucket_mask) + 1];
        m_bloom[bloom_word_of(export_found.hash, m_bloom_mask)] |= bloom_bits_of(export_found.hash);
    }
    for (size_t b = 1; b <= buckets; ++b)
        m_buckets[b] += m_buckets[b - 1];
    m_exports.resize(found.size());
    std::vector<uint32_t> fill(m_buckets.begin(), m_buckets.end() - 1);
    for (const auto& export_found : found) {
        uint32_t& at = fill[bucket_of(export_found.hash, m_bucket_mask)];
        m_exports[at++] = export_found.symbol;
    }
}

bool ExportIndex::matches(uint32_t symbol, std::string_view version) const {
    const elf::SymbolTable& symbols = m_info->symbols;
    if (!symbols.versioned())
        return true;
    const std::string_view defined = symbols.version(symbol);
    if (version.empty())
        return !symbols.hidden(symbol) || defined.empty();
    return defined == version || (defined.empty() && !symbols.hidden(symbol));
}

bool ExportIndex::defines(std::string_view name, std::string_view version) const {
    // A name the pool never saw is defined nowhere.
    const auto id = elf::NamePool::shared().find(name);
    return id && defines(*id, hash_name(*id), version);
}

bool ExportIndex::defines(elf::NamePool::Id name, uint64_t hash, std::string_view version) const {
    const uint64_t bits = bloom_bits_of(hash);
    if ((m_bloom[bloom_word_of(hash, m_bloom_mask)] & bits) != bits)
        return false;
    const uint64_t bucket = bucket_of(hash, m_bucket_mask);
    const elf::SymbolTable& symbols = m_info->symbols;
    for (uint32_t at = m_buckets[bucket]; at < m_buckets[bucket + 1]; ++at) {
        const uint32_t candidate = m_exports[at];
        if (symbols.name_id(candidate) == name && matches(candidate, version))
            return true;
    }
    return false;
}

void ExportIndex::count_prefixes() const {
    std::call_once(m_prefixes_counted, [this] {
        const elf::SymbolTable& symbols = m_info->symbols;
        for (uint32_t symbol : m_exports) {
            const std::string_view name = symbols.name(symbol);
            if (auto space = mangled_namespace(name); !space.empty())
                ++m_namespaces[space];
            else if (auto prefix = c_prefix(name); !prefix.empty())
                ++m_c_prefixes[prefix];
        }
    });
}

size_t ExportIndex::namespace_count(std::string_view mangled_prefix) const {
    count_prefixes();
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
