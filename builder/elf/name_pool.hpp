// Every symbol name of the process, stored once, as an id. A root's objects repeat each other's
// names: every reference names another object's definition, and gcc's cc1, cc1plus, lto1 and
// lto-dump export the same 28,000 each (the torch root: 33 MB of names, 20 MB distinct). Equal
// ids mean equal names, so lookups compare numbers and hash no strings.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace rootlock::elf {

class NamePool {
  public:
    using Id = uint32_t;
    // The empty name.
    static constexpr Id k_empty = 0;

    // The pool every reader and table of the process shares (ids must agree across objects).
    static NamePool& shared();

    NamePool();
    NamePool(const NamePool&) = delete;
    NamePool& operator=(const NamePool&) = delete;

    // The id of `name`, added when new. Thread-safe.
    Id intern(std::string_view name);
    // The ids of `names`, in order, under one lock: a reader interns a whole table at once.
    void intern(std::span<const std::string_view> names, std::span<Id> ids);
    // The id of `name` if the pool holds it. Thread-safe.
    std::optional<Id> find(std::string_view name) const;

    // The name of an id this pool gave out. Without a lock: stored names never move, and an id
    // reaches another thread only through whatever handed it over.
    std::string_view view(Id id) const;

    size_t size() const;  // distinct names held

  private:
    // Names live in chunks of 1 MiB (a longer name gets a chunk of its own), each as its
    // length (LEB128) then its bytes; an id is the chunk's number and the offset in it.
    static constexpr unsigned k_offset_bits = 20;
    static constexpr size_t k_chunk_size = size_t{1} << k_offset_bits;
    static constexpr size_t k_max_chunks = size_t{1} << (32 - k_offset_bits);

    // Open addressing, linear probing: a tag byte a slot (high bit set when used) screens out
    // nearly every other name before its bytes are compared; slots hold ids.
    struct Table {
        std::vector<uint8_t> tags;
        std::vector<Id> ids;
        size_t used = 0;
    };

    static uint64_t hash_of(std::string_view name);
    Id find_or_add(std::string_view name, uint64_t hash);  // caller holds m_mutex
    std::optional<Id> find_locked(std::string_view name, uint64_t hash) const;
    Id store(std::string_view name);
    void grow();

    mutable std::mutex m_mutex;
    // Chunks are mapped with their pages already in (MAP_POPULATE): the pool fills each whole,
    // and one call populating a megabyte costs half what 256 page faults do (20 MB of names on
    // a torch root).
    struct ChunkUnmapper {
        size_t size;  // no default member initialiser: the nested type must be default
                      // constructible before NamePool is complete
        void operator()(std::byte* chunk) const;
    };
    using Chunk = std::unique_ptr<std::byte[], ChunkUnmapper>;
    static Chunk map_chunk(size_t size);
    std::array<Chunk, k_max_chunks> m_chunks;
    std::vector<size_t> m_chunk_ends;  // bytes used in each chunk
    size_t m_chunk_capacity = 0;       // the last chunk's size
    Table m_table;
};

}  // namespace rootlock::elf
