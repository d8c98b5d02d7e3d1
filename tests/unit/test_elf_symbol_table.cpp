// The compact symbol table: symbols pushed with strings of their own read back the same, names
// are ids in the shared pool, versions are interned once per table.
#include <doctest/doctest.h>

#include <string>
#include <unordered_set>
#include <vector>

#include "elf/elf_info.hpp"

namespace rootlock::testing {
namespace {

elf::Symbol make_symbol(std::string name, std::string version, bool defined) {
    elf::Symbol symbol;
    symbol.name = std::move(name);
    symbol.version = std::move(version);
    symbol.defined = defined;
    symbol.binding = elf::k_stb_global;
    symbol.type = elf::k_stt_func;
    return symbol;
}

}  // namespace

TEST_SUITE("rootlock::elf") {
    TEST_CASE("pushed symbols read back with every field, by index and by iteration") {
        elf::SymbolTable table;
        CHECK(table.empty());
        elf::Symbol weak = make_symbol("_ZN3c105ErrorC2Ev", "", false);
        weak.binding = elf::k_stb_weak;
        weak.type = elf::k_stt_object;
        weak.lazy = true;
        elf::Symbol hidden = make_symbol("memcpy", "GLIBC_2.2.5", true);
        hidden.hidden = true;
        table.push_back(weak);
        table.push_back(hidden);
        table.push_back(make_symbol("memcpy", "GLIBC_2.14", true));
        REQUIRE(table.size() == 3);

        const elf::SymbolRef first = table[0];
        CHECK(first.name == "_ZN3c105ErrorC2Ev");
        CHECK(first.version.empty());
        CHECK_FALSE(first.defined);
        CHECK(first.lazy);
        CHECK(first.binding == elf::k_stb_weak);
        CHECK(first.type == elf::k_stt_object);
        CHECK(table[1].hidden);
        CHECK(table[1].version == "GLIBC_2.2.5");
        CHECK_FALSE(table[2].hidden);
        CHECK(table[2].version == "GLIBC_2.14");
        CHECK(table.versioned());

        std::vector<std::string> names;
        for (const auto& symbol : table)
            names.push_back(symbol.name);  // a name still converts to std::string
        CHECK(names == std::vector<std::string>{"_ZN3c105ErrorC2Ev", "memcpy", "memcpy"});
        std::unordered_set<std::string> kept;
        kept.insert(table[1].name);
        CHECK(kept.count("memcpy") == 1);
    }

    TEST_CASE("versions are interned: equal versions share an id, no version is id 0") {
        elf::SymbolTable table;
        CHECK_FALSE(table.versioned());
        const uint16_t a = table.intern_version("GLIBC_2.34");
        const uint16_t b = table.intern_version("GLIBCXX_3.4.29");
        CHECK(a != b);
        CHECK(table.intern_version("GLIBC_2.34") == a);
        CHECK(table.intern_version("") == elf::SymbolTable::k_no_version);
        table.push_back(make_symbol("f", "GLIBCXX_3.4.29", false));
        table.push_back(make_symbol("g", "", false));
        CHECK(table.version_id(0) == b);
        CHECK(table.version_id(1) == elf::SymbolTable::k_no_version);
        CHECK(table.version(1).empty());
    }

    TEST_CASE("symbols added by name id read back their fields") {
        elf::SymbolTable table;
        elf::NamePool& pool = elf::NamePool::shared();
        const uint16_t glibc = table.intern_version("GLIBC_2.2.5");
        table.add(pool.intern("puts"), glibc,
                  static_cast<uint8_t>(elf::k_stb_global << 4 | elf::k_stt_func), false, false);
        table.add(pool.intern("_ZdlPv"), elf::SymbolTable::k_no_version,
                  static_cast<uint8_t>(elf::k_stb_weak << 4 | elf::k_stt_func), true, true);
        table.add(elf::NamePool::k_empty, elf::SymbolTable::k_no_version, 0, false, false);
        CHECK(table.name(0) == "puts");
        CHECK(table.version(0) == "GLIBC_2.2.5");
        CHECK(table.name(1) == "_ZdlPv");
        CHECK(table.binding(1) == elf::k_stb_weak);
        CHECK(table.defined(1));
        CHECK(table.hidden(1));
        CHECK(table.name(2).empty());
        table.set_name(2, pool.intern("late"));
        CHECK(table.name(2) == "late");
        table.set_lazy(0, true);
        CHECK(table.lazy(0));
        table.set_lazy(0, false);
        CHECK_FALSE(table.lazy(0));
    }

    TEST_CASE("equal names in different tables have one id") {
        elf::SymbolTable a;
        elf::SymbolTable b;
        a.push_back(make_symbol("malloc", "GLIBC_2.2.5", false));
        b.push_back(make_symbol("free", "", true));
        b.push_back(make_symbol("malloc", "", true));
        CHECK(a.name_id(0) == b.name_id(1));
        CHECK(a.name_id(0) != b.name_id(0));
    }

    TEST_CASE("a pushed name keeps every byte, a NUL included") {
        elf::SymbolTable table;
        table.push_back(make_symbol(std::string("ab\0cd", 5), "", true));
        CHECK(table.name(0) == std::string_view("ab\0cd", 5));
    }

    TEST_CASE("copies of an ElfInfo keep their own names") {
        elf::ElfInfo info;
        info.symbols.push_back(make_symbol("f", "V1", true));
        elf::ElfInfo copy = info;
        info.symbols.push_back(make_symbol("g", "V2", true));
        info = elf::ElfInfo();
        REQUIRE(copy.symbols.size() == 1);
        CHECK(copy.symbols[0].name == "f");
        CHECK(copy.symbols[0].version == "V1");
    }
}

}  // namespace rootlock::testing
