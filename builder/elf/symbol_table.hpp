// An object's dynamic symbols in eight bytes each: names are ids in the process's NamePool,
// versions are interned per object. A root holds about a million symbols, most of them long C++
// names, so a std::string per name (and a 72-byte struct per symbol) was most of check's memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "elf/name_pool.hpp"

namespace rootlock::elf {

// One dynamic symbol with strings of its own: how the scan cache and tests hand a table symbols.
struct Symbol {
    std::string name;
    std::string version;   // empty when unversioned or local/global index
    bool defined = false;  // st_shndx != SHN_UNDEF
    bool hidden = false;   // versym bit 15: not the default version (name@VER, not name@@VER)
    // Undefined and named only by PLT relocations (DT_JMPREL): bound at its first call unless
    // the object or the process binds now. Known only when ElfInfo::relocations_read.
    bool lazy = false;
    uint8_t binding = 0;  // k_stb_*
    uint8_t type = 0;     // k_stt_*
};

// A name as a table hands it out: a view into the pool. It still converts to std::string
// implicitly, so code that keeps names (a set of them) reads as it did when symbols owned them.
class SymbolName : public std::string_view {
  public:
    constexpr SymbolName() = default;
    constexpr SymbolName(std::string_view view) : std::string_view(view) {}
    operator std::string() const { return std::string(data(), size()); }
};

// One symbol of a table, by value; its strings live as long as the table and are not copied.
struct SymbolRef {
    SymbolName name;
    std::string_view version;  // empty when unversioned
    bool defined = false;
    bool hidden = false;
    bool lazy = false;
    uint8_t binding = 0;
    uint8_t type = 0;
};

class SymbolTable {
  public:
    // Version id 0: no version (unversioned, or versym index 0 or 1).
    static constexpr uint16_t k_no_version = 0;

    size_t size() const { return m_entries.size(); }
    bool empty() const { return m_entries.empty(); }
    void reserve(size_t count) { m_entries.reserve(count); }

    // Appends a symbol, its name interned and its version interned in the table (the scan
    // cache, tests).
    void push_back(const Symbol& symbol);

    // The ELF reader's way in: a symbol by its name's id in NamePool::shared().
    void add(NamePool::Id name, uint16_t version, uint8_t st_info, bool defined, bool hidden);
    void set_name(size_t index, NamePool::Id name) { m_entries[index].name = name; }
    void set_lazy(size_t index, bool lazy);
    // The id of `version` in this table, added when new; ids are equal exactly when the
    // versions are, so callers may compare ids of one table instead of strings.
    uint16_t intern_version(std::string_view version);

    // Queries by index, for loops that touch millions of symbols and want no SymbolRef.
    NamePool::Id name_id(size_t index) const { return m_entries[index].name; }
    std::string_view name(size_t index) const { return NamePool::shared().view(name_id(index)); }
    uint16_t version_id(size_t index) const { return m_entries[index].version; }
    std::string_view version(size_t index) const { return m_versions[version_id(index)]; }
    bool defined(size_t index) const { return (m_entries[index].flags & k_defined) != 0; }
    bool hidden(size_t index) const { return (m_entries[index].flags & k_hidden) != 0; }
    bool lazy(size_t index) const { return (m_entries[index].flags & k_lazy) != 0; }
    uint8_t binding(size_t index) const {
        return static_cast<uint8_t>(m_entries[index].st_info >> 4);
    }
    uint8_t type(size_t index) const {
        return static_cast<uint8_t>(m_entries[index].st_info & 0xfU);
    }
    // Some symbol has a version (the object has a DT_VERSYM table that names one).
    bool versioned() const { return m_versions.size() > 1; }

    SymbolRef operator[](size_t index) const;

    class const_iterator {
      public:
        using iterator_category = std::forward_iterator_tag;
        using value_type = SymbolRef;
        using difference_type = std::ptrdiff_t;
        using pointer = void;
        using reference = SymbolRef;

        const_iterator() = default;
        const_iterator(const SymbolTable* table, size_t index) : m_table(table), m_index(index) {}
        SymbolRef operator*() const { return (*m_table)[m_index]; }
        const_iterator& operator++() {
            ++m_index;
            return *this;
        }
        const_iterator operator++(int) {
            const_iterator before = *this;
            ++m_index;
            return before;
        }
        bool operator==(const const_iterator& other) const { return m_index == other.m_index; }

      private:
        const SymbolTable* m_table = nullptr;
        size_t m_index = 0;
    };
    const_iterator begin() const { return {this, 0}; }
    const_iterator end() const { return {this, size()}; }

  private:
    static constexpr uint8_t k_defined = 1;
    static constexpr uint8_t k_hidden = 2;
    static constexpr uint8_t k_lazy = 4;

    struct Entry {
        NamePool::Id name = NamePool::k_empty;
        uint16_t version = 0;  // index into m_versions
        uint8_t st_info = 0;   // binding << 4 | type, as in the ELF symbol
        uint8_t flags = 0;     // k_defined | k_hidden | k_lazy
    };
    static_assert(sizeof(Entry) == 8);

    std::vector<std::string> m_versions{""};  // [0] is no version
    std::vector<Entry> m_entries;
};

}  // namespace rootlock::elf
