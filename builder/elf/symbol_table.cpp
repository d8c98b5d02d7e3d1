// Building and reading the compact symbol table; see symbol_table.hpp.
#include "elf/symbol_table.hpp"

#include <limits>
#include <stdexcept>

namespace rootlock::elf {

namespace {

constexpr uint8_t st_info_of(uint8_t binding, uint8_t type) {
    return static_cast<uint8_t>((static_cast<unsigned>(binding) << 4U) | (type & 0xfU));
}

}  // namespace

void SymbolTable::push_back(const Symbol& symbol) {
    add(NamePool::shared().intern(symbol.name), intern_version(symbol.version),
        st_info_of(symbol.binding, symbol.type), symbol.defined, symbol.hidden);
    set_lazy(m_entries.size() - 1, symbol.lazy);
}

uint16_t SymbolTable::intern_version(std::string_view version) {
    if (version.empty())
        return k_no_version;
    // Objects define or need a few dozen versions at most: a scan beats a map here.
    for (size_t id = 1; id < m_versions.size(); ++id) {
        if (m_versions[id] == version)
            return static_cast<uint16_t>(id);
    }
    // The reader has at most 2^15 (versym indexes); only pushed symbols could pass 2^16.
    if (m_versions.size() > std::numeric_limits<uint16_t>::max())
        throw std::length_error("symbol table holds more than 65535 versions");
    m_versions.emplace_back(version);
    return static_cast<uint16_t>(m_versions.size() - 1);
}

void SymbolTable::add(NamePool::Id name, uint16_t version, uint8_t st_info, bool defined,
                      bool hidden) {
    Entry entry;
    entry.name = name;
    entry.version = version;
    entry.st_info = st_info;
    entry.flags = static_cast<uint8_t>((defined ? k_defined : 0U) | (hidden ? k_hidden : 0U));
    m_entries.push_back(entry);
}

void SymbolTable::set_lazy(size_t index, bool lazy) {
    Entry& entry = m_entries[index];
    entry.flags = static_cast<uint8_t>(lazy ? (entry.flags | k_lazy) : (entry.flags & ~k_lazy));
}

SymbolRef SymbolTable::operator[](size_t index) const {
    SymbolRef symbol;
    symbol.name = name(index);
    symbol.version = version(index);
    symbol.defined = defined(index);
    symbol.hidden = hidden(index);
    symbol.lazy = lazy(index);
    symbol.binding = binding(index);
    symbol.type = type(index);
    return symbol;
}

}  // namespace rootlock::elf
