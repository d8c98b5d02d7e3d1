// The section-level ELF writer of section_elf.hpp: written field by field from the gABI tables,
// apart from the reader's own code, so that a shared mistake cannot hide.
#include "support/section_elf.hpp"

#include <stdexcept>

namespace rootlock::testing {

namespace {

class SectionElfWriter {
  public:
    SectionElfWriter(elf::ElfClass elf_class, elf::ByteOrder order)
        : m_wide(elf_class == elf::ElfClass::elf64), m_big(order == elf::ByteOrder::big) {}

    std::vector<std::byte>& bytes() { return m_bytes; }
    uint64_t size() const { return m_bytes.size(); }

    void put(uint64_t value, size_t width) {
        for (size_t i = 0; i < width; ++i) {
            size_t shift = m_big ? (width - 1 - i) * 8 : i * 8;
            m_bytes.push_back(static_cast<std::byte>((value >> shift) & 0xff));
        }
    }
    void word(uint64_t value) { put(value, m_wide ? 8 : 4); }
    void align(uint64_t to) {
        while (to > 1 && m_bytes.size() % to != 0)
            m_bytes.push_back(std::byte{0});
    }
    void append(const std::vector<std::byte>& more) {
        m_bytes.insert(m_bytes.end(), more.begin(), more.end());
    }

  private:
    bool m_wide;
    bool m_big;
    std::vector<std::byte> m_bytes;
};

}  // namespace

void SectionElf::patch(uint64_t offset, uint64_t value, size_t width) {
    if (offset + width > bytes.size())
        throw std::out_of_range("patch past the end of the object");
    for (size_t i = 0; i < width; ++i) {
        size_t shift = byte_order == elf::ByteOrder::big ? (width - 1 - i) * 8 : i * 8;
        bytes[offset + i] = static_cast<std::byte>((value >> shift) & 0xff);
    }
}

void SectionElf::patch_word(uint64_t offset, uint64_t value) {
    patch(offset, value, elf_class == elf::ElfClass::elf64 ? 8 : 4);
}

SectionElf build_section_elf(const SectionElfSpec& spec) {
    const bool wide = spec.elf_class == elf::ElfClass::elf64;
    const uint64_t ehsize = wide ? 64 : 52;
    const uint64_t shentsize = wide ? 64 : 40;
    SectionElfWriter w(spec.elf_class, spec.byte_order);
    SectionElf out;
    out.elf_class = spec.elf_class;
    out.byte_order = spec.byte_order;
    SectionElfLayout& layout = out.layout;

    // The ELF header, with the section fields patched in at the end.
    for (unsigned magic : {0x7fU, 0x45U, 0x4cU, 0x46U})  // "\x7fELF"
        w.put(magic, 1);
    w.put(wide ? 2 : 1, 1);                                       // EI_CLASS
    w.put(spec.byte_order == elf::ByteOrder::little ? 1 : 2, 1);  // EI_DATA
    w.put(1, 1);                                                  // EI_VERSION
    while (w.size() < 16)
        w.put(0, 1);
    w.put(elf::k_type_dyn, 2);
    w.put(wide ? elf::k_machine_x86_64 : elf::k_machine_386, 2);
    w.put(1, 4);  // e_version
    w.word(0);    // e_entry
    w.word(0);    // e_phoff
    layout.shoff_field = w.size();
    w.word(0);    // e_shoff
    w.put(0, 4);  // e_flags
    w.put(ehsize, 2);
    w.put(wide ? 56 : 32, 2);  // e_phentsize
    w.put(0, 2);               // e_phnum
    w.put(shentsize, 2);
    layout.shnum_field = w.size();
    w.put(0, 2);
    layout.strndx_field = w.size();
    w.put(0, 2);

    // Names: "" first, then each section's, then ".shstrtab".
    std::vector<std::byte> names{std::byte{0}};
    std::vector<uint64_t> name_index;
    auto add_name = [&](std::string_view name) {
        name_index.push_back(names.size());
        for (char c : name)
            names.push_back(static_cast<std::byte>(c));
        names.push_back(std::byte{0});
    };
    for (const auto& section : spec.sections)
        add_name(section.name);
    add_name(".shstrtab");

    for (const auto& section : spec.sections) {
        w.align(std::max<uint64_t>(section.align, 1));
        layout.data_offsets.push_back(w.size());
        w.append(section.bytes);
    }
    layout.shstrtab_offset = w.size();
    layout.shstrtab_size = names.size();
    w.append(names);
    w.align(8);
    layout.shoff = w.size();
    layout.shentsize = shentsize;
    layout.shnum = spec.sections.size() + 2;

    auto header = [&](uint64_t name, uint64_t type, uint64_t offset, uint64_t size, uint64_t link,
                      uint64_t align) {
        w.put(name, 4);
        w.put(type, 4);
        w.word(0);  // sh_flags
        w.word(0);  // sh_addr
        w.word(offset);
        w.word(size);
        w.put(link, 4);
        w.put(0, 4);  // sh_info
        w.word(align);
        w.word(0);  // sh_entsize
    };
    const uint64_t strndx = layout.shnum - 1;
    if (spec.extended_numbering)
        header(0, 0, 0, layout.shnum, strndx, 0);
    else
        header(0, 0, 0, 0, 0, 0);
    for (size_t i = 0; i < spec.sections.size(); ++i) {
        const SectionSpec& section = spec.sections[i];
        layout.header_offsets.push_back(w.size());
        header(name_index[i], section.type, layout.data_offsets[i],
               section.declared_size.value_or(section.bytes.size()), 0, section.align);
    }
    layout.shstrtab_header = w.size();
    header(name_index.back(), 3, layout.shstrtab_offset, names.size(), 0, 1);
    layout.file_size = w.size();

    out.bytes = std::move(w.bytes());
    out.patch_word(layout.shoff_field, layout.shoff);
    out.patch(layout.shnum_field, spec.extended_numbering ? 0 : layout.shnum, 2);
    out.patch(layout.strndx_field, spec.extended_numbering ? 0xffff : strndx, 2);
    return out;
}

void append_le(std::vector<std::byte>& out, uint64_t value, size_t width) {
    for (size_t i = 0; i < width; ++i)
        out.push_back(static_cast<std::byte>((value >> (i * 8)) & 0xff));
}

std::vector<std::byte> section_text_bytes(std::string_view text) {
    std::vector<std::byte> out;
    for (char c : text)
        out.push_back(static_cast<std::byte>(c));
    return out;
}

std::vector<std::byte> elf_note(std::string_view owner, uint32_t type,
                                const std::vector<std::byte>& descriptor, elf::ByteOrder order,
                                uint64_t align) {
    SectionElfWriter w(elf::ElfClass::elf64, order);
    w.put(owner.size() + 1, 4);
    w.put(descriptor.size(), 4);
    w.put(type, 4);
    w.append(section_text_bytes(owner));
    w.bytes().push_back(std::byte{0});
    w.align(align);
    w.append(descriptor);
    w.align(align);
    return std::move(w.bytes());
}

}  // namespace rootlock::testing
