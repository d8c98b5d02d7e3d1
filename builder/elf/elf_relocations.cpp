// Which undefined symbols are reached only through the PLT: glibc binds DT_JMPREL relocations
// lazily (at the first call) unless BIND_NOW, and every other relocation when the object loads,
// so a missing function whose address is taken fails at load like missing data.
#include <algorithm>

#include "elf/elf_decode.hpp"

namespace rootlock::elf::detail {

namespace {

constexpr uint8_t k_by_plt = 1;
constexpr uint8_t k_by_other = 2;

// Marks the symbols one relocation table names. False when the table cannot be read.
bool mark_table(const Context& context, const DynamicTable& dynamic, uint64_t address_tag,
                uint64_t size_tag, bool rela, uint64_t skip, uint8_t kind,
                std::vector<uint8_t>& marks) {
    const DynEntry* address = dynamic.last(address_tag);
    const DynEntry* size = dynamic.last(size_tag);
    if (address == nullptr || size == nullptr || size->value == 0)
        return true;  // no such table
    const Codec& codec = context.codec();
    const uint64_t word = codec.word_size();
    const uint64_t entry = rela ? 3 * word : 2 * word;
    auto placement = context.place(address->value, address->offset, "relocation table");
    if (!placement || size->value % entry != 0)
        return false;
    if (!context.check_fits(*placement, size->value, address->offset, "relocation table"))
        return false;
    // Linkers sort relative relocations first and count them (DT_RELACOUNT): they name no
    // symbol, and in libtorch they are most of the table.
    const uint64_t total = size->value / entry;
    const uint64_t first = std::min(skip, total);
    if (first == total)
        return true;
    // Read a few thousand entries at a time through one buffer: the table can be megabytes
    // (libtorch's are), and a buffer that large is fresh pages each time, whose faults cost
    // more than reading the entries.
    constexpr uint64_t k_chunk_entries = 2048;
    util::ByteBuffer chunk;
    for (uint64_t done = first; done < total;) {
        const uint64_t count = std::min(k_chunk_entries, total - done);
        chunk.resize(static_cast<size_t>(count * entry));
        if (!context.source().read_at(placement->offset + done * entry, chunk))
            return false;
        for (uint64_t i = 0; i < count; ++i) {
            const std::byte* at = chunk.data() + i * entry + word;  // r_info
            const uint64_t info = codec.is64() ? codec.u64(at) : codec.u32(at);
            const uint64_t symbol = codec.is64() ? info >> 32 : info >> 8;
            if (symbol != 0 && symbol < marks.size())
                marks[symbol] |= kind;
        }
        done += count;
    }
    return true;
}

}  // namespace

void read_relocation_kinds(const Context& context, const DynamicTable& dynamic, ElfInfo& info) {
    // marks[i] is for dynamic symbol i; info.symbols skips the null symbol at index 0.
    std::vector<uint8_t> marks(info.symbols.size() + 1, 0);
    const DynEntry* pltrel = dynamic.last(k_dt_pltrel);
    const bool plt_rela = pltrel == nullptr || pltrel->value == k_dt_rela;
    const DynEntry* relacount = dynamic.last(k_dt_relacount);
    const DynEntry* relcount = dynamic.last(k_dt_relcount);
    const bool read =
        mark_table(context, dynamic, k_dt_jmprel, k_dt_pltrelsz, plt_rela, 0, k_by_plt, marks) &&
        mark_table(context, dynamic, k_dt_rela, k_dt_relasz, true, relacount ? relacount->value : 0,
                   k_by_other, marks) &&
        mark_table(context, dynamic, k_dt_rel, k_dt_relsz, false, relcount ? relcount->value : 0,
                   k_by_other, marks);
    if (!read)
        return;
    // DT_JMPREL usually lies inside DT_RELA's range too (the linker's .rela.dyn + .rela.plt):
    // entries there were counted as both, so PLT-only is judged without the overlap.
    const DynEntry* jmprel = dynamic.last(k_dt_jmprel);
    const DynEntry* rela = dynamic.last(plt_rela ? k_dt_rela : k_dt_rel);
    const DynEntry* relasz = dynamic.last(plt_rela ? k_dt_relasz : k_dt_relsz);
    if (jmprel && rela && relasz && jmprel->value >= rela->value &&
        jmprel->value < rela->value + relasz->value) {
        // Re-mark: other relocations are those of DT_RELA before DT_JMPREL.
        std::fill(marks.begin(), marks.end(), 0);
        mark_table(context, dynamic, k_dt_jmprel, k_dt_pltrelsz, plt_rela, 0, k_by_plt, marks);
        DynamicTable head = dynamic;
        for (auto& entry : head.entries) {
            if (entry.tag == (plt_rela ? k_dt_relasz : k_dt_relsz))
                entry.value = jmprel->value - rela->value;
        }
        mark_table(context, head, plt_rela ? k_dt_rela : k_dt_rel,
                   plt_rela ? k_dt_relasz : k_dt_relsz, plt_rela,
                   plt_rela ? (relacount ? relacount->value : 0) : (relcount ? relcount->value : 0),
                   k_by_other, marks);
    }
    for (size_t i = 0; i < info.symbols.size(); ++i)
        info.symbols.set_lazy(i, !info.symbols.defined(i) && marks[i + 1] == k_by_plt);
    info.relocations_read = true;
}

}  // namespace rootlock::elf::detail
