// Interning symbol names; see name_pool.hpp.
#include "elf/name_pool.hpp"

#include <algorithm>
#include <cstring>
#include <functional>
#include <new>
#include <stdexcept>

#include <sys/mman.h>

namespace rootlock::elf {

namespace {

constexpr size_t k_first_slots = size_t{1} << 16;

size_t varint_size(size_t value) {
    size_t size = 1;
    while (value >= 0x80) {
        value >>= 7;
        ++size;
    }
    return size;
}

uint8_t tag_of(uint64_t hash) {
    return static_cast<uint8_t>(0x80U | (hash >> 57));
}

}  // namespace

NamePool& NamePool::shared() {
    static NamePool pool;
    return pool;
}

NamePool::NamePool() {
    m_table.tags.assign(k_first_slots, 0);
    m_table.ids.assign(k_first_slots, 0);
    std::lock_guard lock(m_mutex);
    find_or_add("", hash_of(""));  // k_empty: the first record of the first chunk
}

uint64_t NamePool::hash_of(std::string_view name) {
    return std::hash<std::string_view>{}(name);
}

std::string_view NamePool::view(Id id) const {
    const std::byte* at = m_chunks[id >> k_offset_bits].get() + (id & (k_chunk_size - 1));
    size_t length = 0;
    unsigned shift = 0;
    while (true) {
        const auto byte = std::to_integer<uint8_t>(*at++);
        length |= static_cast<size_t>(byte & 0x7fU) << shift;
        if ((byte & 0x80U) == 0)
            break;
        shift += 7;
    }
    return std::string_view(reinterpret_cast<const char*>(at), length);
}

std::optional<NamePool::Id> NamePool::find_locked(std::string_view name, uint64_t hash) const {
    const size_t mask = m_table.tags.size() - 1;
    const uint8_t tag = tag_of(hash);
    for (size_t slot = hash & mask;; slot = (slot + 1) & mask) {
        const uint8_t found = m_table.tags[slot];
        if (found == 0)
            return std::nullopt;
        if (found == tag && view(m_table.ids[slot]) == name)
            return m_table.ids[slot];
    }
}

NamePool::Id NamePool::find_or_add(std::string_view name, uint64_t hash) {
    if (auto found = find_locked(name, hash))
        return *found;
    // At most four slots in five used: probes stay short, and a tag byte plus an id is five
    // bytes a slot, about eight a name.
    if ((m_table.used + 1) * 5 > m_table.tags.size() * 4)
        grow();
    const Id id = store(name);
    const size_t mask = m_table.tags.size() - 1;
    size_t slot = hash & mask;
    while (m_table.tags[slot] != 0)
        slot = (slot + 1) & mask;
    m_table.tags[slot] = tag_of(hash);
    m_table.ids[slot] = id;
    ++m_table.used;
    return id;
}

NamePool::Id NamePool::store(std::string_view name) {
    const size_t record = varint_size(name.size()) + name.size();
    if (m_chunk_ends.empty() || m_chunk_ends.back() + record > m_chunk_capacity) {
        if (m_chunk_ends.size() == k_max_chunks)
            throw std::length_error("symbol name pool exceeds 4 GiB");  // a container limit
        // Only a name longer than a chunk gets a bigger one, alone: every id's offset fits.
        const size_t capacity = std::max(k_chunk_size, record);
        m_chunks[m_chunk_ends.size()] = map_chunk(capacity);
        m_chunk_ends.push_back(0);
        m_chunk_capacity = capacity;
    }
    const size_t chunk = m_chunk_ends.size() - 1;
    const size_t offset = m_chunk_ends.back();
    std::byte* at = m_chunks[chunk].get() + offset;
    size_t length = name.size();
    do {
        const auto low = static_cast<uint8_t>(length & 0x7fU);
        length >>= 7;
        *at++ = std::byte{static_cast<uint8_t>(length != 0 ? (low | 0x80U) : low)};
    } while (length != 0);
    if (!name.empty())
        std::memcpy(at, name.data(), name.size());
    // A chunk of one long name takes nothing more.
    m_chunk_ends.back() = m_chunk_capacity > k_chunk_size ? m_chunk_capacity : offset + record;
    return static_cast<Id>((chunk << k_offset_bits) | offset);
}

void NamePool::ChunkUnmapper::operator()(std::byte* chunk) const {
    ::munmap(chunk, size);
}

NamePool::Chunk NamePool::map_chunk(size_t size) {
    void* chunk = ::mmap(nullptr, size, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (chunk == MAP_FAILED)
        throw std::bad_alloc();
    return Chunk(static_cast<std::byte*>(chunk), ChunkUnmapper{size});
}

void NamePool::grow() {
    Table bigger;
    bigger.tags.assign(m_table.tags.size() * 2, 0);
    bigger.ids.assign(m_table.ids.size() * 2, 0);
    bigger.used = m_table.used;
    const size_t mask = bigger.tags.size() - 1;
    // Rehashed in the order the names are stored: one sequential pass over them, not a cache
    // miss a name.
    for (size_t chunk = 0; chunk < m_chunk_ends.size(); ++chunk) {
        for (size_t offset = 0; offset < m_chunk_ends[chunk];) {
            const auto id = static_cast<Id>((chunk << k_offset_bits) | offset);
            const std::string_view name = view(id);
            offset += varint_size(name.size()) + name.size();
            const uint64_t hash = hash_of(name);
            size_t at = hash & mask;
            while (bigger.tags[at] != 0)
                at = (at + 1) & mask;
            bigger.tags[at] = tag_of(hash);
            bigger.ids[at] = id;
        }
    }
    m_table = std::move(bigger);
}

NamePool::Id NamePool::intern(std::string_view name) {
    const uint64_t hash = hash_of(name);
    std::lock_guard lock(m_mutex);
    return find_or_add(name, hash);
}

void NamePool::intern(std::span<const std::string_view> names, std::span<Id> ids) {
    // Hashed before the lock is taken: the other reading thread waits only for the probes.
    std::vector<uint64_t> hashes(names.size());
    for (size_t i = 0; i < names.size(); ++i)
        hashes[i] = hash_of(names[i]);
    std::lock_guard lock(m_mutex);
    // Each probe starts at a random slot of a table of megabytes: the slots a few names ahead
    // are asked for early, so that their cache misses overlap instead of following each other
    // (the other reading thread waits on this lock meanwhile). A hint only; growing the table
    // on the way just makes a few of them useless.
    constexpr size_t k_ahead = 8;
    for (size_t i = 0; i < names.size(); ++i) {
        if (i + k_ahead < names.size()) {
            const size_t slot = hashes[i + k_ahead] & (m_table.tags.size() - 1);
            __builtin_prefetch(&m_table.tags[slot]);
            __builtin_prefetch(&m_table.ids[slot]);
        }
        ids[i] = find_or_add(names[i], hashes[i]);
    }
}

std::optional<NamePool::Id> NamePool::find(std::string_view name) const {
    const uint64_t hash = hash_of(name);
    std::lock_guard lock(m_mutex);
    return find_locked(name, hash);
}

size_t NamePool::size() const {
    std::lock_guard lock(m_mutex);
    return m_table.used;
}

}  // namespace rootlock::elf
