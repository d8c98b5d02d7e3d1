// The test-only ELF writer: lays out headers, a read-only metadata segment, a text segment of
// zeros and a data segment with the dynamic section, then fills them in the requested byte order.
#include "support/elf_writer.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <stdexcept>

namespace rootlock::testing {

namespace {

using elf::ByteOrder;
using elf::ElfClass;

constexpr uint64_t k_page = 0x1000;
constexpr uint32_t k_pt_load = 1;
constexpr uint32_t k_pt_dynamic = 2;
constexpr uint32_t k_pt_interp = 3;
constexpr uint32_t k_pf_r = 4;
constexpr uint32_t k_pf_w = 2;
constexpr uint32_t k_pf_x = 1;
constexpr uint16_t k_defined_section = 7;  // any non-zero st_shndx means "defined"

uint64_t align_up(uint64_t value, uint64_t alignment) {
    return (value + alignment - 1) / alignment * alignment;
}

// Writes integers of one class and byte order into a growing buffer.
class Buffer {
  public:
    Buffer(ElfClass elf_class, ByteOrder order) : m_class(elf_class), m_order(order) {}

    void put(uint64_t offset, uint64_t value, size_t width) {
        if (m_bytes.size() < offset + width)
            m_bytes.resize(offset + width);
        for (size_t i = 0; i < width; ++i) {
            size_t shift = m_order == ByteOrder::little ? i : width - 1 - i;
            m_bytes[offset + i] = static_cast<std::byte>((value >> (8 * shift)) & 0xffU);
        }
    }
    void u8(uint64_t offset, uint64_t value) { put(offset, value, 1); }
    void u16(uint64_t offset, uint64_t value) { put(offset, value, 2); }
    void u32(uint64_t offset, uint64_t value) { put(offset, value, 4); }
    void word(uint64_t offset, uint64_t value) { put(offset, value, is64() ? 8 : 4); }
    void text(uint64_t offset, std::string_view text) {
        if (m_bytes.size() < offset + text.size())
            m_bytes.resize(offset + text.size());
        for (size_t i = 0; i < text.size(); ++i)
            m_bytes[offset + i] = std::byte(text[i]);
    }
    void resize(uint64_t size) { m_bytes.resize(size); }
    bool is64() const { return m_class == ElfClass::elf64; }
    std::vector<std::byte> take() { return std::move(m_bytes); }

  private:
    ElfClass m_class;
    ByteOrder m_order;
    std::vector<std::byte> m_bytes;
};

struct StringPool {
    std::string data = std::string(1, '\0');
    std::map<std::string, uint64_t> index{{"", 0}};

    uint64_t add(const std::string& text) {
        auto found = index.find(text);
        if (found != index.end())
            return found->second;
        uint64_t at = data.size();
        data += text;
        data.push_back('\0');
        index.emplace(text, at);
        return at;
    }
};

// The versions with the implicit base definition added, and symbols in .dynsym order.
struct Normalized {
    std::vector<VersionDefSpec> defs;
    std::vector<SymbolSpec> symbols;  // without the null symbol
    uint64_t symoffset = 1;           // the first symbol the GNU hash table covers
    uint64_t gnu_buckets = 1;
};

Normalized normalize(const ElfSpec& spec) {
    Normalized out;
    bool has_base = std::any_of(spec.version_defs.begin(), spec.version_defs.end(),
                                [](const VersionDefSpec& def) { return def.index == 1; });
    if (!spec.version_defs.empty() && !has_base) {
        out.defs.push_back(VersionDefSpec{spec.soname.empty() ? "base" : spec.soname, 1, 1, {}});
    }
    out.defs.insert(out.defs.end(), spec.version_defs.begin(), spec.version_defs.end());

    std::vector<SymbolSpec> defined;
    for (const auto& symbol : spec.symbols) {
        (symbol.defined ? defined : out.symbols).push_back(symbol);
    }
    out.symoffset = 1 + out.symbols.size();
    out.gnu_buckets = std::max<uint64_t>(1, (defined.size() + 1) / 2);
    if (spec.gnu_hash) {
        const uint64_t buckets = out.gnu_buckets;
        std::stable_sort(defined.begin(), defined.end(), [&](const auto& a, const auto& b) {
            return gnu_hash(a.name) % buckets < gnu_hash(b.name) % buckets;
        });
    }
    out.symbols.insert(out.symbols.end(), defined.begin(), defined.end());
    return out;
}

}  // namespace

uint32_t elf_hash(std::string_view name) {
    uint32_t hash = 0;
    for (char c : name) {
        hash = (hash << 4) + static_cast<unsigned char>(c);
        uint32_t high = hash & 0xf0000000U;
        if (high != 0)
            hash ^= high >> 24;
        hash &= ~high;
    }
    return hash;
}

uint32_t gnu_hash(std::string_view name) {
    uint32_t hash = 5381;
    for (char c : name)
        hash = hash * 33 + static_cast<unsigned char>(c);
    return hash;
}

uint64_t ElfLayout::dynamic_entry(uint64_t tag) const {
    for (const auto& [entry_tag, offset] : dynamic_entries) {
        if (entry_tag == tag)
            return offset;
    }
    throw std::out_of_range("no dynamic entry with that tag");
}

uint64_t ElfLayout::symbol(std::string_view name) const {
    for (size_t i = 1; i < symbol_names.size(); ++i) {
        if (symbol_names[i] == name)
            return dynsym_offset + i * sym_entry_size;
    }
    throw std::out_of_range("no such symbol");
}

ElfImage::ElfImage(std::vector<std::byte> bytes, ElfLayout layout, ElfClass elf_class,
                   ByteOrder byte_order)
    : m_bytes(std::move(bytes)),
      m_layout(std::move(layout)),
      m_class(elf_class),
      m_order(byte_order) {}

void ElfImage::patch(uint64_t offset, uint64_t value, size_t width) {
    if (offset + width > m_bytes.size())
        throw std::out_of_range("patch past the end");
    for (size_t i = 0; i < width; ++i) {
        size_t shift = m_order == ByteOrder::little ? i : width - 1 - i;
        m_bytes[offset + i] = static_cast<std::byte>((value >> (8 * shift)) & 0xffU);
    }
}

void ElfImage::patch_u8(uint64_t offset, uint64_t value) {
    patch(offset, value, 1);
}
void ElfImage::patch_u16(uint64_t offset, uint64_t value) {
    patch(offset, value, 2);
}
void ElfImage::patch_u32(uint64_t offset, uint64_t value) {
    patch(offset, value, 4);
}
void ElfImage::patch_u64(uint64_t offset, uint64_t value) {
    patch(offset, value, 8);
}
void ElfImage::patch_word(uint64_t offset, uint64_t value) {
    patch(offset, value, m_class == ElfClass::elf64 ? 8 : 4);
}
void ElfImage::patch_dynamic(uint64_t tag, uint64_t value) {
    uint64_t word = m_class == ElfClass::elf64 ? 8 : 4;
    patch_word(m_layout.dynamic_entry(tag) + word, value);
}
void ElfImage::truncate(uint64_t size) {
    m_bytes.resize(std::min<uint64_t>(size, m_bytes.size()));
}

ElfImage build_elf_image(const ElfSpec& spec) {
    const bool is64 = spec.elf_class == ElfClass::elf64;
    const uint64_t word = is64 ? 8 : 4;
    const bool dynamic = spec.dynamic && spec.program_headers;
    Buffer out(spec.elf_class, spec.byte_order);
    ElfLayout layout;
    layout.ehdr_size = is64 ? 64 : 52;
    layout.phentsize = is64 ? 56 : 32;
    layout.dynamic_entry_size = 2 * word;
    layout.sym_entry_size = is64 ? 24 : 16;
    layout.base_address = spec.base_address;
    const uint64_t base = spec.base_address;

    Normalized norm = normalize(spec);
    StringPool strings;
    if (dynamic) {
        for (const auto& name : spec.needed)
            strings.add(name);
        if (!spec.soname.empty())
            strings.add(spec.soname);
        if (spec.rpath)
            strings.add(*spec.rpath);
        if (spec.runpath)
            strings.add(*spec.runpath);
        for (const auto& need : spec.version_needs) {
            strings.add(need.file);
            for (const auto& version : need.versions)
                strings.add(version.name);
        }
        for (const auto& def : norm.defs) {
            strings.add(def.name);
            for (const auto& parent : def.parents)
                strings.add(parent);
        }
        for (const auto& symbol : norm.symbols)
            strings.add(symbol.name);
    }
    const bool versioned = !norm.defs.empty() || !spec.version_needs.empty();
    const uint64_t nsyms = 1 + norm.symbols.size();
    const bool has_symbols = dynamic && (spec.sysv_hash || spec.gnu_hash);
    const uint64_t sysv_buckets = std::max<uint64_t>(1, nsyms / 2);
    const uint64_t sysv_size = (2 + sysv_buckets + nsyms) * 4;
    const uint64_t gnu_size = 16 + word + norm.gnu_buckets * 4 + (nsyms - norm.symoffset) * 4;

    // Layout, in file order.
    if (spec.program_headers) {
        layout.phnum = (spec.separate_code ? 2U : 1U) + (spec.interpreter.empty() ? 0U : 1U) +
                       (dynamic ? 2U : 0U) + (dynamic && spec.trailing_metadata ? 1U : 0U);
    }
    layout.phoff = layout.phnum == 0 ? 0 : layout.ehdr_size;
    uint64_t cursor = layout.ehdr_size + layout.phnum * layout.phentsize;
    auto take = [&](uint64_t size, uint64_t alignment = 8) {
        uint64_t at = align_up(cursor, alignment);
        cursor = at + size;
        return at;
    };
    if (!spec.interpreter.empty() && spec.program_headers) {
        layout.interp_offset = take(spec.interpreter.size() + 1);
    }
    if (dynamic) {
        if (!spec.trailing_metadata) {
            if (spec.sysv_hash)
                layout.hash_offset = take(sysv_size);
            if (spec.gnu_hash)
                layout.gnu_hash_offset = take(gnu_size);
        }
        if (has_symbols)
            layout.dynsym_offset = take(nsyms * layout.sym_entry_size);
        if (!spec.trailing_metadata)
            layout.dynstr_offset = take(strings.data.size());
        if (has_symbols && versioned)
            layout.versym_offset = take(nsyms * 2);
        for (const auto& need : spec.version_needs) {
            layout.verneed_entries.push_back(take(16, 4));
            for (size_t i = 0; i < need.versions.size(); ++i) {
                layout.vernaux_entries.push_back(take(16, 4));
            }
        }
        for (const auto& def : norm.defs) {
            layout.verdef_entries.push_back(take(20, 4));
            for (size_t i = 0; i < 1 + def.parents.size(); ++i) {
                layout.verdaux_entries.push_back(take(8, 4));
            }
        }
    }
    size_t data_relocations = 0;
    size_t plt_relocations = 0;
    if (dynamic && has_symbols && is64) {
        for (const auto& symbol : norm.symbols) {
            data_relocations += symbol.relocation == Relocation::data ? 1 : 0;
            plt_relocations += symbol.relocation == Relocation::plt ? 1 : 0;
        }
        if (data_relocations != 0)
            layout.rela_offset = take(data_relocations * 24);
        if (plt_relocations != 0)
            layout.jmprel_offset = take(plt_relocations * 24);
    }
    const uint64_t meta_end = std::max(cursor, layout.ehdr_size);
    layout.text_offset = align_up(meta_end, k_page);
    layout.meta_size = spec.separate_code ? meta_end : layout.text_offset + spec.text_size;
    layout.text_size = spec.text_size;
    cursor = layout.text_offset + spec.text_size;

    // The dynamic entries, in the order GNU ld writes them; built twice, since the values depend
    // on the trailing layout, which depends on how many entries there are.
    auto make_entries = [&] {
        std::vector<std::pair<uint64_t, uint64_t>> list;
        for (const auto& name : spec.needed)
            list.emplace_back(k_dt_needed, strings.add(name));
        if (!spec.soname.empty())
            list.emplace_back(k_dt_soname, strings.add(spec.soname));
        if (spec.rpath)
            list.emplace_back(k_dt_rpath, strings.add(*spec.rpath));
        if (spec.runpath)
            list.emplace_back(k_dt_runpath, strings.add(*spec.runpath));
        if (spec.sysv_hash)
            list.emplace_back(k_dt_hash, base + layout.hash_offset);
        if (spec.gnu_hash)
            list.emplace_back(k_dt_gnu_hash, base + layout.gnu_hash_offset);
        list.emplace_back(k_dt_strtab, base + layout.dynstr_offset);
        if (has_symbols)
            list.emplace_back(k_dt_symtab, base + layout.dynsym_offset);
        list.emplace_back(k_dt_strsz, strings.data.size());
        if (has_symbols)
            list.emplace_back(k_dt_syment, layout.sym_entry_size);
        if (layout.versym_offset != 0)
            list.emplace_back(k_dt_versym, base + layout.versym_offset);
        if (!spec.version_needs.empty()) {
            list.emplace_back(k_dt_verneed, base + layout.verneed_entries.front());
            list.emplace_back(k_dt_verneednum, spec.version_needs.size());
        }
        if (!norm.defs.empty()) {
            list.emplace_back(k_dt_verdef, base + layout.verdef_entries.front());
            list.emplace_back(k_dt_verdefnum, norm.defs.size());
        }
        if (layout.rela_offset != 0) {
            list.emplace_back(k_dt_rela, base + layout.rela_offset);
            list.emplace_back(k_dt_relasz, data_relocations * 24);
            list.emplace_back(k_dt_relaent, 24);
        }
        if (layout.jmprel_offset != 0) {
            list.emplace_back(k_dt_pltrelsz, plt_relocations * 24);
            list.emplace_back(k_dt_pltrel, k_dt_rela);
            list.emplace_back(k_dt_jmprel, base + layout.jmprel_offset);
        }
        if (spec.flags != 0)
            list.emplace_back(k_dt_flags, spec.flags);
        if (spec.flags_1 != 0)
            list.emplace_back(k_dt_flags_1, spec.flags_1);
        list.emplace_back(k_dt_null, 0);
        return list;
    };
    std::vector<std::pair<uint64_t, uint64_t>> entries;
    uint64_t data_offset = 0;
    uint64_t trailing_offset = 0;
    if (dynamic) {
        data_offset = align_up(cursor, k_page);
        layout.dynamic_offset = data_offset;
        cursor = data_offset + make_entries().size() * layout.dynamic_entry_size;
        if (spec.trailing_metadata) {
            trailing_offset = align_up(cursor, k_page);
            cursor = trailing_offset;
            if (spec.gnu_hash)
                layout.gnu_hash_offset = take(gnu_size);
            if (spec.sysv_hash)
                layout.hash_offset = take(sysv_size);
            layout.dynstr_offset = take(strings.data.size());
        }
        layout.dynstr_size = strings.data.size();
        layout.string_index = strings.index;
        entries = make_entries();
        for (size_t i = 0; i < entries.size(); ++i) {
            uint64_t at = data_offset + i * layout.dynamic_entry_size;
            out.word(at, entries[i].first);
            out.word(at + word, entries[i].second);
            layout.dynamic_entries.emplace_back(entries[i].first, at);
        }
    }
    layout.file_size = std::max(cursor, layout.text_offset + spec.text_size);
    out.resize(layout.file_size);

    // ELF header.
    out.text(0,
             "\x7f"
             "ELF");
    out.u8(4, is64 ? 2 : 1);
    out.u8(5, spec.byte_order == ByteOrder::little ? 1 : 2);
    out.u8(6, 1);
    out.u8(7, spec.os_abi);
    out.u16(0x10, spec.type);
    out.u16(0x12, spec.machine);
    out.u32(0x14, 1);
    out.word(is64 ? 0x20 : 0x1c, layout.phoff);
    const uint64_t sizes_at = is64 ? 0x34 : 0x28;
    out.u16(sizes_at, layout.ehdr_size);
    out.u16(sizes_at + 2, layout.phentsize);
    out.u16(sizes_at + 4, layout.phnum);
    out.u16(sizes_at + 6, is64 ? 64 : 40);

    // Program headers.
    size_t phdr_index = 0;
    auto segment = [&](uint32_t type, uint32_t flags, uint64_t offset, uint64_t size,
                       uint64_t alignment) {
        uint64_t at = layout.phdr(phdr_index++);
        out.u32(at, type);
        if (is64) {
            out.u32(at + 4, flags);
            for (uint64_t field : {offset, base + offset, base + offset, size, size, alignment}) {
                at += 8;
                out.word(at, field);
            }
        } else {
            uint64_t fields[] = {offset, base + offset, base + offset, size,
                                 size,   flags,         alignment};
            for (uint64_t field : fields) {
                at += 4;
                out.word(at, field);
            }
        }
        return layout.phdr(phdr_index - 1);
    };
    if (spec.program_headers) {
        if (!spec.interpreter.empty()) {
            layout.interp_phdr =
                segment(k_pt_interp, k_pf_r, layout.interp_offset, spec.interpreter.size() + 1, 1);
            out.text(layout.interp_offset, spec.interpreter);
        }
        layout.meta_phdr = segment(k_pt_load, spec.separate_code ? k_pf_r : k_pf_r | k_pf_x, 0,
                                   layout.meta_size, k_page);
        if (spec.separate_code) {
            layout.text_phdr =
                segment(k_pt_load, k_pf_r | k_pf_x, layout.text_offset, spec.text_size, k_page);
        }
        if (dynamic) {
            uint64_t dynamic_size = entries.size() * layout.dynamic_entry_size;
            layout.data_phdr =
                segment(k_pt_load, k_pf_r | k_pf_w, data_offset, dynamic_size, k_page);
            if (spec.trailing_metadata) {
                layout.trailing_phdr = segment(k_pt_load, k_pf_r, trailing_offset,
                                               layout.file_size - trailing_offset, k_page);
            }
            layout.dynamic_phdr =
                segment(k_pt_dynamic, k_pf_r | k_pf_w, data_offset, dynamic_size, word);
        }
    }
    if (!dynamic)
        return ElfImage(out.take(), std::move(layout), spec.elf_class, spec.byte_order);

    out.text(layout.dynstr_offset, strings.data);

    // Version needs: each entry followed by its auxiliary entries.
    size_t aux_at = 0;
    for (size_t i = 0; i < spec.version_needs.size(); ++i) {
        const auto& need = spec.version_needs[i];
        uint64_t at = layout.verneed_entries[i];
        bool last = i + 1 == spec.version_needs.size();
        out.u16(at, 1);
        out.u16(at + 2, need.versions.size());
        out.u32(at + 4, strings.add(need.file));
        out.u32(at + 8, need.versions.empty() ? 0 : 16);
        out.u32(at + 12, last ? 0 : 16 + 16 * need.versions.size());
        for (size_t j = 0; j < need.versions.size(); ++j) {
            const auto& version = need.versions[j];
            uint64_t aux = layout.vernaux_entries[aux_at++];
            out.u32(aux, elf_hash(version.name));
            out.u16(aux + 4, version.weak ? 2 : 0);
            out.u16(aux + 6, version.index);
            out.u32(aux + 8, strings.add(version.name));
            out.u32(aux + 12, j + 1 == need.versions.size() ? 0 : 16);
        }
    }
    // Version definitions: each entry followed by its name and parents.
    aux_at = 0;
    for (size_t i = 0; i < norm.defs.size(); ++i) {
        const auto& def = norm.defs[i];
        uint64_t at = layout.verdef_entries[i];
        size_t names = 1 + def.parents.size();
        out.u16(at, 1);
        out.u16(at + 2, def.flags);
        out.u16(at + 4, def.index);
        out.u16(at + 6, names);
        out.u32(at + 8, elf_hash(def.name));
        out.u32(at + 12, 20);
        out.u32(at + 16, i + 1 == norm.defs.size() ? 0 : 20 + 8 * names);
        for (size_t j = 0; j < names; ++j) {
            uint64_t aux = layout.verdaux_entries[aux_at++];
            out.u32(aux, strings.add(j == 0 ? def.name : def.parents[j - 1]));
            out.u32(aux + 4, j + 1 == names ? 0 : 8);
        }
    }
    if (!has_symbols)
        return ElfImage(out.take(), std::move(layout), spec.elf_class, spec.byte_order);

    // Symbols, their versions and the hash tables over them.
    layout.symbol_names.emplace_back();
    for (size_t i = 1; i < nsyms; ++i) {
        const auto& symbol = norm.symbols[i - 1];
        layout.symbol_names.push_back(symbol.name);
        uint64_t at = layout.dynsym_offset + i * layout.sym_entry_size;
        uint64_t info = (uint64_t{symbol.binding} << 4) | (symbol.type & 0xfU);
        uint64_t shndx = symbol.defined ? k_defined_section : 0;
        uint64_t value = symbol.defined ? base + layout.text_offset : 0;
        out.u32(at, strings.add(symbol.name));
        if (is64) {
            out.u8(at + 4, info);
            out.u16(at + 6, shndx);
            out.word(at + 8, value);
        } else {
            out.word(at + 4, value);
            out.u8(at + 12, info);
            out.u16(at + 14, shndx);
        }
        if (layout.versym_offset != 0) {
            out.u16(layout.versym_offset + i * 2,
                    symbol.version_index | (symbol.hidden ? 0x8000U : 0U));
        }
    }
    // Relocations naming the symbols, in symbol order: r_offset, r_info (index << 32 | type),
    // r_addend. GLOB_DAT is 6 and JUMP_SLOT 7 on x86_64.
    uint64_t next_rela = layout.rela_offset;
    uint64_t next_plt = layout.jmprel_offset;
    for (size_t i = 1; i < nsyms && (next_rela != 0 || next_plt != 0); ++i) {
        const auto& symbol = norm.symbols[i - 1];
        if (symbol.relocation == Relocation::none)
            continue;
        uint64_t& at = symbol.relocation == Relocation::plt ? next_plt : next_rela;
        out.word(at, base + layout.text_offset);
        out.word(at + 8, (uint64_t{i} << 32) | (symbol.relocation == Relocation::plt ? 7U : 6U));
        out.word(at + 16, 0);
        at += 24;
    }
    if (spec.sysv_hash) {
        uint64_t at = layout.hash_offset;
        out.u32(at, sysv_buckets);
        out.u32(at + 4, nsyms);
        std::vector<uint32_t> buckets(sysv_buckets, 0);
        for (uint32_t i = 1; i < nsyms; ++i) {
            uint64_t bucket = elf_hash(layout.symbol_names[i]) % sysv_buckets;
            out.u32(at + 8 + (sysv_buckets + i) * 4, buckets[bucket]);
            buckets[bucket] = i;
        }
        for (uint64_t b = 0; b < sysv_buckets; ++b)
            out.u32(at + 8 + b * 4, buckets[b]);
    }
    if (spec.gnu_hash) {
        uint64_t at = layout.gnu_hash_offset;
        const uint64_t buckets = norm.gnu_buckets;
        out.u32(at, buckets);
        out.u32(at + 4, norm.symoffset);
        out.u32(at + 8, 1);
        out.u32(at + 12, 6);
        out.word(at + 16, ~uint64_t{0});  // a bloom filter that lets every name through
        const uint64_t bucket_at = at + 16 + word;
        const uint64_t chain_at = bucket_at + buckets * 4;
        for (uint64_t i = norm.symoffset; i < nsyms; ++i) {
            uint32_t hash = gnu_hash(layout.symbol_names[i]);
            uint64_t bucket = hash % buckets;
            bool first =
                i == norm.symoffset || gnu_hash(layout.symbol_names[i - 1]) % buckets != bucket;
            bool last = i + 1 == nsyms || gnu_hash(layout.symbol_names[i + 1]) % buckets != bucket;
            if (first)
                out.u32(bucket_at + bucket * 4, i);
            out.u32(chain_at + (i - norm.symoffset) * 4, last ? (hash | 1U) : (hash & ~1U));
        }
    }
    return ElfImage(out.take(), std::move(layout), spec.elf_class, spec.byte_order);
}

std::vector<std::byte> build_elf(const ElfSpec& spec, ElfLayout* layout) {
    ElfImage image = build_elf_image(spec);
    if (layout != nullptr)
        *layout = image.layout();
    return std::move(image.bytes());
}

util::Result<size_t> MemoryStream::read(std::span<std::byte> out) {
    size_t n = std::min({out.size(), m_chunk, m_bytes.size() - m_position});
    if (n != 0) {
        std::copy_n(m_bytes.begin() + static_cast<std::ptrdiff_t>(m_position), n, out.begin());
    }
    m_position += n;
    return n;
}

std::vector<std::byte> read_host_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw std::runtime_error("cannot read " + path);
    std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::vector<std::byte> bytes(chars.size());
    std::transform(chars.begin(), chars.end(), bytes.begin(), [](char c) { return std::byte(c); });
    return bytes;
}

std::vector<std::byte> compile_c(const std::string& dir, const std::string& output,
                                 std::string_view source, const std::string& flags) {
    const std::string base = dir + "/" + output;
    {
        std::ofstream out(base + ".c", std::ios::binary | std::ios::trunc);
        out << source;
        if (!out)
            throw std::runtime_error("cannot write " + base + ".c");
    }
    const std::string log = base + ".log";
    const std::string command =
        "gcc " + flags + " -o '" + base + "' '" + base + ".c' >'" + log + "' 2>&1";
    if (std::system(command.c_str()) != 0) {
        std::string message = "gcc failed: " + command + "\n";
        for (std::byte b : read_host_file(log))
            message.push_back(static_cast<char>(b));
        throw std::runtime_error(message);
    }
    return read_host_file(base);
}

}  // namespace rootlock::testing
