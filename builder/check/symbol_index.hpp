// What one ELF object exports, indexed once by name, and glibc's check_match rules for whether a
// definition answers a (possibly versioned) reference. libtorch exports ~10^5 symbols, and one
// index serves every namespace the object appears in.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "elf/elf_info.hpp"

namespace rootlock::check {

class ExportIndex {
  public:
    explicit ExportIndex(std::shared_ptr<const elf::ElfInfo> info);

    // Whether a reference to `name` (with `version`, empty when unversioned) binds here, as
    // glibc's check_match decides: a versioned reference takes the definition of that version
    // or an unversioned one; an unversioned reference takes any definition that is not a
    // hidden (name@VER) one. An object without version information answers any version.
    bool defines(std::string_view name, std::string_view version) const;
    // The same for a name by its id in elf::NamePool::shared(), with hash_name(name) computed
    // once by the caller, who asks every object of a scope in turn.
    bool defines(elf::NamePool::Id name, uint64_t hash, std::string_view version) const;

    static uint64_t hash_name(elf::NamePool::Id name);

    // How many exported C++ names sit in the top-level namespace `mangled_prefix` ("3c10" for
    // c10::), for telling which library a missing C++ symbol was expected from.
    size_t namespace_count(std::string_view mangled_prefix) const;
    // How many exported C names start with the same four characters ("nccl", "cuda"), the
    // same question for libraries with a C API.
    size_t c_prefix_count(std::string_view name) const;
    size_t size() const { return m_exports.size(); }

  private:
    // Laid out as glibc's DT_GNU_HASH is, for the same reasons: a Bloom filter answers most
    // lookups (a scope walk asks dozens of objects that do not define the name) from one
    // word, and the exports sit grouped by bucket as indexes into the symbol table, whose
    // entry holds the name: 7 to 10 bytes an export and no pointers. A root holds half a
    // million exports.
    bool matches(uint32_t symbol, std::string_view version) const;
    // Fills m_namespaces and m_c_prefixes on first use: only a missing symbol asks, and
    // counting touches the name of every export.
    void count_prefixes() const;

    std::shared_ptr<const elf::ElfInfo> m_info;  // keeps the symbols the index points into
    std::vector<uint64_t> m_bloom;               // a power of two of words, two bits an export
    std::vector<uint32_t> m_buckets;  // bucket -> first export; one more entry ends the last
    std::vector<uint32_t> m_exports;  // indexes into m_info->symbols, grouped by bucket
    uint64_t m_bloom_mask = 0;
    uint64_t m_bucket_mask = 0;
    mutable std::once_flag m_prefixes_counted;
    mutable std::unordered_map<std::string_view, size_t> m_namespaces;
    mutable std::unordered_map<std::string_view, size_t> m_c_prefixes;
};

// The first top-level namespace of a mangled C++ name as its length-prefixed source name
// ("_ZN3c104cuda9SetDeviceEi" gives "3c10", "_ZTVN2at6TensorE" gives "2at"); empty for C names
// and names outside a namespace.
std::string_view mangled_namespace(std::string_view name);

// The first four characters of a C name that long enough to tell an API apart; empty otherwise.
std::string_view c_prefix(std::string_view name);

// One index per object, built on first use and shared; thread-safe.
class ExportIndexCache {
  public:
    const ExportIndex& get(const std::shared_ptr<const elf::ElfInfo>& info);

  private:
    std::mutex m_mutex;
    std::unordered_map<const elf::ElfInfo*, std::unique_ptr<ExportIndex>> m_indexes;
};

}  // namespace rootlock::check
