// The dynamic symbol table: its length from DT_HASH's nchain or a DT_GNU_HASH walk (ELF has no
// other count), then one bulk read of the symbols and one of their DT_VERSYM entries.
#include <algorithm>

#include <fmt/format.h>

#include "elf/elf_decode.hpp"
#include "util/quote.hpp"

namespace rootlock::elf::detail {

using util::Result;
using util::Status;

namespace {

constexpr uint16_t k_versym_hidden = 0x8000;

struct SymbolCount {
    uint64_t count = 0;
    uint64_t where = 0;       // the hash table that gave the count
    std::string_view source;  // "DT_HASH nchain", for messages
};

Result<SymbolCount> count_from_hash(const Context& context, const DynEntry& hash) {
    ROOTLOCK_TRY(placement, context.place(hash.value, hash.offset, "DT_HASH"));
    // 64-bit s390 (like Alpha) uses 8-byte hash words; everyone else uses 4.
    const bool wide = context.codec().is64() && context.headers().machine == k_machine_s390;
    const uint64_t word = wide ? 8 : 4;
    if (auto status = context.check_fits(placement, 2 * word, hash.offset, "symbol hash table");
        !status) {
        return status.error();
    }
    ROOTLOCK_TRY(header, context.read(placement.offset, 2 * word));
    const Codec& codec = context.codec();
    uint64_t nchain = wide ? codec.u64(header.data() + 8) : codec.u32(header.data() + 4);
    return SymbolCount{nchain, placement.offset, "DT_HASH nchain"};
}

Result<SymbolCount> count_from_gnu_hash(const Context& context, const DynEntry& hash) {
    ROOTLOCK_TRY(placement, context.place(hash.value, hash.offset, "DT_GNU_HASH"));
    if (auto status = context.check_fits(placement, 16, hash.offset, "GNU hash table"); !status) {
        return status.error();
    }
    const Codec& codec = context.codec();
    ROOTLOCK_TRY(header, context.read(placement.offset, 16));
    const uint64_t nbuckets = codec.u32(header.data());
    const uint64_t symoffset = codec.u32(header.data() + 4);
    const uint64_t bloom_size = codec.u32(header.data() + 8);
    const uint64_t bloom_bytes = bloom_size * codec.word_size();
    if (auto status = context.check_fits(placement, 16 + bloom_bytes + nbuckets * 4, hash.offset,
                                         "GNU hash table");
        !status) {
        return status.error();
    }
    ROOTLOCK_TRY(buckets, context.read(placement.offset + 16 + bloom_bytes, nbuckets * 4));
    uint64_t highest = 0;
    for (uint64_t i = 0; i < nbuckets; ++i) {
        highest = std::max<uint64_t>(highest, codec.u32(buckets.data() + i * 4));
    }
    // Symbols below symoffset are not hashed; with every bucket empty they are all there is.
    if (highest == 0)
        return SymbolCount{symoffset, placement.offset, "DT_GNU_HASH"};
    if (highest < symoffset) {
        return context.fail(
            placement.offset,
            fmt::format("GNU hash bucket value {} is below symoffset {}", highest, symoffset));
    }
    // The last chain ends at the entry with its low bit set; that symbol is the table's last.
    const uint64_t chain = placement.offset + 16 + bloom_bytes + nbuckets * 4;
    const uint64_t limit = std::min(placement.limit, context.size());
    ChunkReader reader(context.source(), limit);
    for (uint64_t index = highest;; ++index) {
        uint64_t offset = chain + (index - symoffset) * 4;
        if (offset > limit || limit - offset < 4) {
            return context.fail(placement.offset,
                                offset + 4 > context.size()
                                    ? fmt::format("GNU hash chain runs past the end of the file "
                                                  "({} bytes)",
                                                  context.size())
                                    : std::string("GNU hash chain runs past the end of its "
                                                  "PT_LOAD segment"));
        }
        ROOTLOCK_TRY(p, reader.at(offset, 4));
        if ((codec.u32(p) & 1U) != 0) {
            return SymbolCount{index + 1, placement.offset, "DT_GNU_HASH"};
        }
    }
}

Result<SymbolCount> count_symbols(const Context& context, const DynamicTable& dynamic) {
    if (const DynEntry* hash = dynamic.last(k_dt_hash))
        return count_from_hash(context, *hash);
    if (const DynEntry* gnu = dynamic.last(k_dt_gnu_hash))
        return count_from_gnu_hash(context, *gnu);
    return SymbolCount{};  // no hash table: ld.so could not look anything up either
}

}  // namespace

Status read_symbols(const Context& context, const DynamicTable& dynamic, const StringTable& strings,
                    const VersionIndex& versions, ElfInfo& info) {
    const DynEntry* symtab = dynamic.last(k_dt_symtab);
    if (symtab == nullptr)
        return util::ok_status();
    const Codec& codec = context.codec();
    const uint64_t entry_size = codec.sym_size();
    if (const DynEntry* syment = dynamic.last(k_dt_syment);
        syment != nullptr && syment->value != entry_size) {
        return context.fail(syment->offset,
                            fmt::format("DT_SYMENT {} is not {}", syment->value, entry_size));
    }
    ROOTLOCK_TRY(counted, count_symbols(context, dynamic));
    const uint64_t count = counted.count;
    if (count <= 1)
        return util::ok_status();  // at most the null symbol
    // Rejected before anything is allocated: the table cannot be larger than the file.
    if (count > context.size() / entry_size) {
        return context.fail(counted.where,
                            fmt::format("absurd symbol count {} from {}", count, counted.source));
    }
    ROOTLOCK_TRY(table_at, context.place(symtab->value, symtab->offset, "DT_SYMTAB"));
    if (auto status = context.check_fits(table_at, count * entry_size, symtab->offset,
                                         "dynamic symbol table");
        !status) {
        return status.error();
    }
    uint64_t versym_offset = 0;
    bool has_versym = false;
    if (const DynEntry* versym_entry = dynamic.last(k_dt_versym)) {
        ROOTLOCK_TRY(versym_at,
                     context.place(versym_entry->value, versym_entry->offset, "DT_VERSYM"));
        if (auto status = context.check_fits(versym_at, count * 2, versym_entry->offset,
                                             "symbol version table");
            !status) {
            return status.error();
        }
        versym_offset = versym_at.offset;
        has_versym = true;
    }

    SymbolTable& symbols = info.symbols;
    symbols.reserve(static_cast<size_t>(count - 1));
    // Versym index -> the table's interned version id, filled on first use.
    std::vector<int32_t> version_ids(versions.names.size(), -1);
    // The names, views into the string table until the pool has them all (one lock for all).
    std::vector<std::string_view> names;
    names.reserve(static_cast<size_t>(count - 1));
    // The symbol and version tables are read a few thousand entries at a time through the same
    // two buffers: libtorch's are a megabyte, and buffers that large are fresh pages each time.
    constexpr uint64_t k_chunk_symbols = 2048;
    util::ByteBuffer table;
    util::ByteBuffer versym;
    for (uint64_t first = 1; first < count;) {
        const uint64_t chunk = std::min(k_chunk_symbols, count - first);
        table.resize(static_cast<size_t>(chunk * entry_size));
        if (auto status = context.source().read_at(table_at.offset + first * entry_size, table);
            !status) {
            return status.error();
        }
        if (has_versym) {
            versym.resize(static_cast<size_t>(chunk * 2));
            if (auto status = context.source().read_at(versym_offset + first * 2, versym);
                !status) {
                return status.error();
            }
        }
        for (uint64_t i = first; i < first + chunk; ++i) {
            const std::byte* p = table.data() + (i - first) * entry_size;
            const uint64_t offset = table_at.offset + i * entry_size;
            const uint32_t name_index = codec.u32(p);
            const uint8_t st_info = std::to_integer<uint8_t>(p[codec.is64() ? 4 : 12]);
            const uint16_t shndx = codec.u16(p + (codec.is64() ? 6 : 14));
            ROOTLOCK_TRY(name, strings.get(name_index, offset, "symbol name"));
            bool hidden = false;
            uint16_t version_id = SymbolTable::k_no_version;
            if (has_versym) {
                const uint16_t value = codec.u16(versym.data() + (i - first) * 2);
                hidden = (value & k_versym_hidden) != 0;
                const uint16_t index = static_cast<uint16_t>(value & 0x7fffU);
                if (index >= 2) {  // 0 is local, 1 is global: neither names a version
                    const std::string_view* version = versions.find(index);
                    if (version == nullptr) {
                        return context.fail(
                            versym_offset + i * 2,
                            fmt::format("symbol {} ({}) has version index {}, which no version "
                                        "definition or need declares",
                                        i, util::printable(name), index));
                    }
                    int32_t& id = version_ids[index];
                    if (id < 0)
                        id = symbols.intern_version(*version);
                    version_id = static_cast<uint16_t>(id);
                }
            }
            names.push_back(name);
            symbols.add(NamePool::k_empty, version_id, st_info, shndx != 0, hidden);
        }
        first += chunk;
    }
    std::vector<NamePool::Id> ids(names.size());
    NamePool::shared().intern(names, ids);
    for (size_t i = 0; i < ids.size(); ++i)
        symbols.set_name(i, ids[i]);
    return util::ok_status();
}

}  // namespace rootlock::elf::detail
