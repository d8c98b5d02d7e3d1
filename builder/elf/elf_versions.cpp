// DT_VERNEED and DT_VERDEF: the version chains ld.so checks at load time. Each chain is walked
// with two bounds, the declared count and a visited-offset set, so a cyclic chain fails, never
// hangs.
#include <algorithm>
#include <unordered_set>

#include <fmt/format.h>

#include "elf/elf_decode.hpp"

namespace rootlock::elf::detail {

using util::Result;
using util::Status;

namespace {

constexpr uint64_t k_verneed_size = 16;
constexpr uint64_t k_vernaux_size = 16;
constexpr uint64_t k_verdef_size = 20;
constexpr uint64_t k_verdaux_size = 8;
constexpr uint16_t k_ver_flg_weak = 2;

// Walks one region of chained records that all live in the PT_LOAD segment of the first one.
// Next pointers are added in the address space, wrapping at the class width as ld.so's pointer
// arithmetic does (so an ELF32 "next" can point backwards, and a cycle must be caught).
class ChainWalker {
  public:
    ChainWalker(const Context& context, const Context::Placement& first)
        : m_context(context),
          m_segment(*first.segment),
          m_reader(context.source(), std::min(first.limit, context.size())) {}

    // The file offset of a `length`-byte record at `vaddr`, checked against the segment and the
    // file; errors are located at `where` (the record or dynamic entry that pointed there).
    Result<uint64_t> locate(uint64_t vaddr, uint64_t length, uint64_t where,
                            std::string_view what) {
        if (vaddr < m_segment.vaddr || vaddr - m_segment.vaddr >= m_segment.filesz) {
            return m_context.fail(
                where,
                fmt::format("{} address 0x{:x} is outside its PT_LOAD segment", what, vaddr));
        }
        uint64_t offset = 0;
        if (__builtin_add_overflow(m_segment.offset, vaddr - m_segment.vaddr, &offset)) {
            return m_context.fail(
                where,
                fmt::format("{} address 0x{:x} is outside its PT_LOAD segment", what, vaddr));
        }
        uint64_t limit = 0;
        if (__builtin_add_overflow(m_segment.offset, m_segment.filesz, &limit))
            limit = ~uint64_t{0};
        Context::Placement placement{vaddr, offset, limit, &m_segment};
        if (auto status = m_context.check_fits(placement, length, where, what); !status) {
            return status.error();
        }
        return offset;
    }

    Result<const std::byte*> record(uint64_t offset, uint64_t length) {
        return m_reader.at(offset, static_cast<size_t>(length));
    }

    uint64_t advance(uint64_t vaddr, uint64_t next) const {
        return (vaddr + next) & m_context.codec().address_mask();
    }

  private:
    const Context& m_context;
    const Segment& m_segment;
    ChunkReader m_reader;
};

// The count tag must accompany the address tag, and cannot exceed what the file could hold.
Result<uint64_t> declared_count(const Context& context, const DynamicTable& dynamic,
                                const DynEntry& address, uint64_t count_tag, uint64_t record_size,
                                std::string_view what) {
    const DynEntry* count = dynamic.last(count_tag);
    if (count == nullptr) {
        return context.fail(address.offset, fmt::format("{} without {}", tag_name(address.tag),
                                                        tag_name(count_tag)));
    }
    if (count->value > context.size() / record_size) {
        return context.fail(count->offset, fmt::format("absurd {} count {} ({})", what,
                                                       count->value, tag_name(count_tag)));
    }
    return count->value;
}

}  // namespace

Status read_version_needs(const Context& context, const DynamicTable& dynamic,
                          const StringTable& strings, ElfInfo& info) {
    const DynEntry* verneed = dynamic.last(k_dt_verneed);
    if (verneed == nullptr)
        return util::ok_status();
    ROOTLOCK_TRY(count, declared_count(context, dynamic, *verneed, k_dt_verneednum, k_verneed_size,
                                       "version need"));
    ROOTLOCK_TRY(first, context.place(verneed->value, verneed->offset, "DT_VERNEED"));
    const Codec& codec = context.codec();
    ChainWalker walker(context, first);
    std::unordered_set<uint64_t> seen_entries;
    std::unordered_set<uint64_t> seen_aux;
    uint64_t vaddr = verneed->value;
    uint64_t where = verneed->offset;
    for (uint64_t i = 0; i < count; ++i) {
        ROOTLOCK_TRY(offset, walker.locate(vaddr, k_verneed_size, where, "version need entry"));
        if (!seen_entries.insert(offset).second) {
            return context.fail(where, "version need chain is cyclic");
        }
        ROOTLOCK_TRY(p, walker.record(offset, k_verneed_size));
        uint16_t version = codec.u16(p);
        uint16_t aux_count = codec.u16(p + 2);
        uint32_t file = codec.u32(p + 4);
        uint32_t aux = codec.u32(p + 8);
        uint32_t next = codec.u32(p + 12);
        if (version != 1) {
            return context.fail(offset,
                                fmt::format("unsupported version {} of Verneed record", version));
        }
        ROOTLOCK_TRY(file_name, strings.get(file, offset, "vn_file"));
        VersionNeed need;
        need.file = std::string(file_name);

        uint64_t aux_vaddr = walker.advance(vaddr, aux);
        uint64_t aux_where = offset;
        seen_aux.clear();  // entries may share auxiliary records; only a loop within one is bad
        for (uint16_t j = 0; j < aux_count; ++j) {
            ROOTLOCK_TRY(aux_offset, walker.locate(aux_vaddr, k_vernaux_size, aux_where,
                                                   "version need auxiliary entry"));
            if (!seen_aux.insert(aux_offset).second) {
                return context.fail(aux_where, "version need auxiliary chain is cyclic");
            }
            ROOTLOCK_TRY(q, walker.record(aux_offset, k_vernaux_size));
            NeededVersion needed;
            needed.hash = codec.u32(q);
            needed.weak = (codec.u16(q + 4) & k_ver_flg_weak) != 0;
            needed.index = codec.u16(q + 6);
            ROOTLOCK_TRY(name, strings.get(codec.u32(q + 8), aux_offset, "vna_name"));
            needed.name = std::string(name);
            need.versions.push_back(std::move(needed));
            uint32_t aux_next = codec.u32(q + 12);
            if (aux_next == 0)
                break;
            aux_vaddr = walker.advance(aux_vaddr, aux_next);
            aux_where = aux_offset;
        }
        info.version_needs.push_back(std::move(need));
        if (next == 0)
            break;
        vaddr = walker.advance(vaddr, next);
        where = offset;
    }
    return util::ok_status();
}

Status read_version_defs(const Context& context, const DynamicTable& dynamic,
                         const StringTable& strings, ElfInfo& info) {
    const DynEntry* verdef = dynamic.last(k_dt_verdef);
    if (verdef == nullptr)
        return util::ok_status();
    ROOTLOCK_TRY(count, declared_count(context, dynamic, *verdef, k_dt_verdefnum, k_verdef_size,
                                       "version definition"));
    ROOTLOCK_TRY(first, context.place(verdef->value, verdef->offset, "DT_VERDEF"));
    const Codec& codec = context.codec();
    ChainWalker walker(context, first);
    std::unordered_set<uint64_t> seen_entries;
    std::unordered_set<uint64_t> seen_aux;
    uint64_t vaddr = verdef->value;
    uint64_t where = verdef->offset;
    for (uint64_t i = 0; i < count; ++i) {
        ROOTLOCK_TRY(offset,
                     walker.locate(vaddr, k_verdef_size, where, "version definition entry"));
        if (!seen_entries.insert(offset).second) {
            return context.fail(where, "version definition chain is cyclic");
        }
        ROOTLOCK_TRY(p, walker.record(offset, k_verdef_size));
        uint16_t version = codec.u16(p);
        VersionDef def;
        def.flags = codec.u16(p + 2);
        def.index = codec.u16(p + 4);
        uint16_t aux_count = codec.u16(p + 6);
        def.hash = codec.u32(p + 8);
        uint32_t aux = codec.u32(p + 12);
        uint32_t next = codec.u32(p + 16);
        if (version != 1) {
            return context.fail(offset,
                                fmt::format("unsupported version {} of Verdef record", version));
        }
        if (aux_count == 0) {
            return context.fail(offset, "version definition has no name (vd_cnt is 0)");
        }
        uint64_t aux_vaddr = walker.advance(vaddr, aux);
        uint64_t aux_where = offset;
        // Linkers let two definitions share one name record (libjansson's base and its
        // version are both "libjansson.so.4"); only a loop within one definition is bad.
        seen_aux.clear();
        for (uint16_t j = 0; j < aux_count; ++j) {
            ROOTLOCK_TRY(aux_offset, walker.locate(aux_vaddr, k_verdaux_size, aux_where,
                                                   "version definition auxiliary entry"));
            if (!seen_aux.insert(aux_offset).second) {
                return context.fail(aux_where, "version definition auxiliary chain is cyclic");
            }
            ROOTLOCK_TRY(q, walker.record(aux_offset, k_verdaux_size));
            ROOTLOCK_TRY(name, strings.get(codec.u32(q), aux_offset, "vda_name"));
            if (j == 0) {
                def.name = std::string(name);
            } else {
                def.parents.emplace_back(name);
            }
            uint32_t aux_next = codec.u32(q + 4);
            if (aux_next == 0)
                break;
            aux_vaddr = walker.advance(aux_vaddr, aux_next);
            aux_where = aux_offset;
        }
        info.version_defs.push_back(std::move(def));
        if (next == 0)
            break;
        vaddr = walker.advance(vaddr, next);
        where = offset;
    }
    return util::ok_status();
}

void VersionIndex::add(uint16_t index, std::string_view name) {
    size_t slot = index & 0x7fffU;
    if (slot >= names.size()) {
        names.resize(slot + 1);
        present.resize(slot + 1, false);
    }
    if (present[slot])
        return;  // the first declaration of an index wins
    names[slot] = name;
    present[slot] = true;
}

const std::string_view* VersionIndex::find(uint16_t index) const {
    size_t slot = index & 0x7fffU;
    if (slot >= names.size() || !present[slot])
        return nullptr;
    return &names[slot];
}

VersionIndex index_versions(const ElfInfo& info) {
    VersionIndex index;
    for (const auto& def : info.version_defs)
        index.add(def.index, def.name);
    for (const auto& need : info.version_needs) {
        for (const auto& version : need.versions)
            index.add(version.index, version.name);
    }
    return index;
}

}  // namespace rootlock::elf::detail
