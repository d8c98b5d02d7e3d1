// The section header table and .shstrtab read in small chunks (find_section), and ELF notes
// (read_notes); see elf_sections.hpp. The only reader of section headers in rootlock.
#include "elf/elf_sections.hpp"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "elf/elf_decode.hpp"

namespace rootlock::elf {

using util::Result;

namespace {

// Section header numbering escapes (gABI): e_shnum 0 with a table moves the count into section
// 0's sh_size, e_shstrndx SHN_XINDEX moves the index into its sh_link.
constexpr uint16_t k_section_shn_undef = 0;
constexpr uint16_t k_section_shn_xindex = 0xffff;

// Where the section table's fields are in the ELF header, by class.
struct SectionHeaderFields {
    size_t shoff;
    size_t shentsize;
    size_t shnum;
    size_t shstrndx;
};
constexpr SectionHeaderFields k_section_fields64{0x28, 0x3a, 0x3c, 0x3e};
constexpr SectionHeaderFields k_section_fields32{0x20, 0x2e, 0x30, 0x32};

// One decoded section header.
struct SectionHeaderRecord {
    uint32_t name = 0;
    uint32_t type = 0;
    uint64_t offset = 0;
    uint64_t size = 0;
    uint32_t link = 0;
    uint64_t align = 0;
};

SectionHeaderRecord decode_section_header(const detail::Codec& codec, const std::byte* p) {
    SectionHeaderRecord record;
    record.name = codec.u32(p);
    record.type = codec.u32(p + 4);
    if (codec.is64()) {
        record.offset = codec.u64(p + 24);
        record.size = codec.u64(p + 32);
        record.link = codec.u32(p + 40);
        record.align = codec.u64(p + 48);
    } else {
        record.offset = codec.u32(p + 16);
        record.size = codec.u32(p + 20);
        record.link = codec.u32(p + 24);
        record.align = codec.u32(p + 32);
    }
    return record;
}

util::Error section_error(const util::ByteSource& source, uint64_t offset, std::string message) {
    return util::make_error(util::at_offset(source.name(), offset), std::move(message));
}

// The file bytes a section occupies; fails when they leave the file.
Result<SectionRange> section_range(const util::ByteSource& source, const detail::Codec& codec,
                                   const SectionHeaderRecord& record, uint64_t header_offset,
                                   std::string_view what) {
    SectionRange range;
    range.offset = record.offset;
    range.size = record.type == k_sht_nobits ? 0 : record.size;
    range.type = record.type;
    range.align = record.align;
    range.header_offset = header_offset;
    range.byte_order = codec.order();
    const uint64_t size = source.size();
    if (range.offset > size || range.size > size - range.offset) {
        return section_error(source, header_offset,
                             fmt::format("{} ({} bytes at 0x{:x}) runs past the end of the file "
                                         "({} bytes)",
                                         what, range.size, range.offset, size));
    }
    return range;
}

}  // namespace

Result<std::vector<std::optional<SectionRange>>> find_sections(
    const util::ByteSource& source, std::span<const std::string_view> names) {
    std::vector<std::optional<SectionRange>> found(names.size());
    ROOTLOCK_TRY(headers, detail::decode_headers(source));
    const detail::Codec& codec = headers.codec;
    const uint64_t file_size = source.size();

    std::array<std::byte, 64> ehdr{};
    if (auto status = source.read_at(0, std::span(ehdr.data(), codec.ehdr_size())); !status)
        return status.error();
    const SectionHeaderFields& fields = codec.is64() ? k_section_fields64 : k_section_fields32;
    const uint64_t shoff = codec.word(&ehdr[fields.shoff]);
    if (shoff == 0)
        return found;  // no section header table (gABI: e_shoff is zero)
    const uint64_t entry_size = codec.shdr_size();
    if (shoff < codec.ehdr_size())
        return section_error(source, shoff, "section header table overlaps the ELF header");
    uint64_t count = codec.u16(&ehdr[fields.shnum]);
    uint64_t strndx = codec.u16(&ehdr[fields.shstrndx]);
    auto past_end = [&](uint64_t entries) {
        return section_error(source, shoff,
                             fmt::format("section header table ({} entries) runs past the end of "
                                         "the file ({} bytes)",
                                         entries, file_size));
    };
    if (shoff > file_size || entry_size > file_size - shoff)
        return past_end(std::max<uint64_t>(count, 1));
    if (count == 0 || strndx == k_section_shn_xindex) {
        // decode_headers checks e_shentsize only when e_shnum is not 0.
        if (uint16_t shentsize = codec.u16(&ehdr[fields.shentsize]); shentsize != entry_size) {
            return section_error(
                source, fields.shentsize,
                fmt::format("section header entry size {} is not {}", shentsize, entry_size));
        }
        std::array<std::byte, 64> first{};
        if (auto status = source.read_at(shoff, std::span(first.data(), entry_size)); !status)
            return status.error();
        SectionHeaderRecord zero = decode_section_header(codec, first.data());
        if (count == 0)
            count = zero.size;
        if (strndx == k_section_shn_xindex)
            strndx = zero.link;
        if (count == 0)
            return found;
    }
    if (count > (file_size - shoff) / entry_size)
        return past_end(count);
    if (strndx == k_section_shn_undef)
        return found;  // sections without names: none can be the one asked for
    if (strndx >= count) {
        return section_error(source, fields.shstrndx,
                             fmt::format("section name string table index {} is out of range ({} "
                                         "sections)",
                                         strndx, count));
    }

    const uint64_t table_end = shoff + count * entry_size;
    detail::ChunkReader table(source, table_end);
    const uint64_t strtab_header = shoff + strndx * entry_size;
    ROOTLOCK_TRY(strtab_bytes, table.at(strtab_header, entry_size));
    ROOTLOCK_TRY(strtab, section_range(source, codec, decode_section_header(codec, strtab_bytes),
                                       strtab_header, "section name string table"));
    detail::ChunkReader strings(source, strtab.offset + strtab.size);

    size_t longest = 0;
    for (std::string_view name : names)
        longest = std::max(longest, name.size());
    size_t missing = names.size();
    // Section 0 is reserved (SHT_NULL): it names nothing.
    for (uint64_t index = 1; index < count && missing > 0; ++index) {
        const uint64_t header_offset = shoff + index * entry_size;
        ROOTLOCK_TRY(bytes, table.at(header_offset, entry_size));
        const SectionHeaderRecord record = decode_section_header(codec, bytes);
        if (record.name >= strtab.size) {
            return section_error(source, header_offset,
                                 fmt::format("section {} name index 0x{:x} is past the end of the "
                                             "section name string table ({} bytes)",
                                             index, record.name, strtab.size));
        }
        // A match needs the name and its NUL inside the table; fewer bytes cannot match.
        const uint64_t available = std::min<uint64_t>(longest + 1, strtab.size - record.name);
        ROOTLOCK_TRY(text, strings.at(strtab.offset + record.name, available));
        const std::string_view here(reinterpret_cast<const char*>(text),
                                    static_cast<size_t>(available));
        for (size_t i = 0; i < names.size(); ++i) {
            const std::string_view name = names[i];
            if (found[i] || here.size() <= name.size() || here[name.size()] != '\0' ||
                here.substr(0, name.size()) != name) {
                continue;
            }
            ROOTLOCK_TRY(range, section_range(source, codec, record, header_offset,
                                              fmt::format("section {}", name)));
            found[i] = range;
            --missing;
        }
    }
    return found;
}

std::optional<SectionTablePlace> section_table_place(std::span<const std::byte> header) {
    if (header.size() < 6 || header[0] != std::byte{0x7f} || header[1] != std::byte{'E'} ||
        header[2] != std::byte{'L'} || header[3] != std::byte{'F'})
        return std::nullopt;
    const auto elf_class = std::to_integer<int>(header[4]);
    const auto data = std::to_integer<int>(header[5]);
    if ((elf_class != 1 && elf_class != 2) || (data != 1 && data != 2))
        return std::nullopt;
    const detail::Codec codec(elf_class == 2 ? ElfClass::elf64 : ElfClass::elf32,
                              data == 1 ? ByteOrder::little : ByteOrder::big);
    if (header.size() < codec.ehdr_size())
        return std::nullopt;
    const SectionHeaderFields& fields = codec.is64() ? k_section_fields64 : k_section_fields32;
    SectionTablePlace place;
    place.offset = codec.word(&header[fields.shoff]);
    place.entry_size = codec.u16(&header[fields.shentsize]);
    place.count = codec.u16(&header[fields.shnum]);
    if (place.offset == 0)
        return std::nullopt;
    return place;
}

Result<std::optional<SectionRange>> find_section(const util::ByteSource& source,
                                                 std::string_view name) {
    ROOTLOCK_TRY(found, find_sections(source, std::span(&name, 1)));
    return found.front();
}

namespace {

constexpr uint64_t k_note_header_size = 12;

uint64_t note_align_up(uint64_t value, uint64_t align) {
    return (value + align - 1) & ~(align - 1);
}

}  // namespace

Result<std::vector<ElfNote>> read_notes(const util::ByteSource& source, const SectionRange& section,
                                        NoteReading reading) {
    std::vector<ElfNote> notes;
    if (section.size > k_max_note_section) {
        return section_error(source, section.header_offset,
                             fmt::format("note section ({} bytes at 0x{:x}) is larger than {} "
                                         "bytes",
                                         section.size, section.offset, k_max_note_section));
    }
    if (section.offset > source.size() || section.size > source.size() - section.offset) {
        return section_error(source, section.header_offset,
                             fmt::format("note section ({} bytes at 0x{:x}) runs past the end of "
                                         "the file ({} bytes)",
                                         section.size, section.offset, source.size()));
    }
    std::vector<std::byte> bytes(static_cast<size_t>(section.size));
    if (auto status = source.read_at(section.offset, bytes); !status)
        return status.error();
    const detail::Codec codec(ElfClass::elf64, section.byte_order);
    const uint64_t align = section.align == 8 ? 8 : 4;
    const uint64_t size = section.size;
    uint64_t pos = 0;
    while (pos < size) {
        const uint64_t left = size - pos;
        const uint64_t at = section.offset + pos;
        if (left < k_note_header_size) {
            return section_error(source, at,
                                 fmt::format("note header (12 bytes) runs past the end of the "
                                             "note section ({} bytes left)",
                                             left));
        }
        const std::byte* p = bytes.data() + pos;
        const uint32_t namesz = codec.u32(p);
        const uint32_t descsz = codec.u32(p + 4);
        ElfNote note;
        note.type = codec.u32(p + 8);
        note.offset = at;
        if (namesz > left - k_note_header_size) {
            return section_error(source, at,
                                 fmt::format("note name ({} bytes) runs past the end of the note "
                                             "section ({} bytes left)",
                                             namesz, left - k_note_header_size));
        }
        const char* name = reinterpret_cast<const char*>(p + k_note_header_size);
        size_t name_length = namesz;
        while (name_length > 0 && name[name_length - 1] == '\0')
            --name_length;
        note.owner.assign(name, name_length);
        // Both u32, so none of this wraps in 64 bits.
        const uint64_t desc_start = note_align_up(k_note_header_size + namesz, align);
        const uint64_t desc_left = desc_start < left ? left - desc_start : 0;
        uint64_t desc_size = descsz;
        if (desc_size > desc_left) {
            if (reading == NoteReading::strict) {
                return section_error(source, at,
                                     fmt::format("note descriptor ({} bytes) runs past the end "
                                                 "of the note section ({} bytes left)",
                                                 descsz, desc_left));
            }
            desc_size = desc_left;
        }
        const std::byte* desc = p + std::min(desc_start, left);
        note.descriptor.assign(desc, desc + desc_size);
        notes.push_back(std::move(note));
        // The last note's padding may be missing: the section ends where its descriptor does.
        pos += std::min(left, note_align_up(desc_start + descsz, align));
    }
    return notes;
}

}  // namespace rootlock::elf
