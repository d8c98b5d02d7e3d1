// Phase 1 of the ELF reader (e_ident, ELF header, program headers) and the shared helpers every
// phase uses: address placement, bounds checks with located errors, chunked and string reads.
#include "elf/elf_decode.hpp"

#include <algorithm>
#include <array>
#include <cstring>

#include <fmt/format.h>

namespace rootlock::elf::detail {

using util::Error;
using util::Result;
using util::Status;

const Segment* Headers::interp() const {
    for (const auto& segment : segments) {
        if (segment.type == k_pt_interp)
            return &segment;
    }
    return nullptr;
}

const Segment* Headers::dynamic() const {
    const Segment* found = nullptr;
    for (const auto& segment : segments) {
        if (segment.type == k_pt_dynamic)
            found = &segment;
    }
    return found;
}

const DynEntry* DynamicTable::last(uint64_t tag) const {
    const DynEntry* found = nullptr;
    for (const auto& entry : entries) {
        if (entry.tag == tag)
            found = &entry;
    }
    return found;
}

std::string tag_name(uint64_t tag) {
    switch (tag) {
        case k_dt_needed:
            return "DT_NEEDED";
        case k_dt_hash:
            return "DT_HASH";
        case k_dt_strtab:
            return "DT_STRTAB";
        case k_dt_symtab:
            return "DT_SYMTAB";
        case k_dt_strsz:
            return "DT_STRSZ";
        case k_dt_syment:
            return "DT_SYMENT";
        case k_dt_soname:
            return "DT_SONAME";
        case k_dt_rpath:
            return "DT_RPATH";
        case k_dt_runpath:
            return "DT_RUNPATH";
        case k_dt_flags:
            return "DT_FLAGS";
        case k_dt_gnu_hash:
            return "DT_GNU_HASH";
        case k_dt_versym:
            return "DT_VERSYM";
        case k_dt_flags_1:
            return "DT_FLAGS_1";
        case k_dt_verdef:
            return "DT_VERDEF";
        case k_dt_verdefnum:
            return "DT_VERDEFNUM";
        case k_dt_verneed:
            return "DT_VERNEED";
        case k_dt_verneednum:
            return "DT_VERNEEDNUM";
        default:
            return fmt::format("dynamic tag 0x{:x}", tag);
    }
}

Context::Context(const util::ByteSource& source, const Headers& headers)
    : m_source(source), m_headers(headers) {}

Error Context::fail(uint64_t offset, std::string message) const {
    return util::make_error(util::at_offset(m_source.name(), offset), std::move(message));
}

Result<Context::Placement> Context::place(uint64_t vaddr, uint64_t where,
                                          std::string_view what) const {
    for (const auto& segment : m_headers.segments) {
        if (segment.type != k_pt_load || vaddr < segment.vaddr)
            continue;
        uint64_t delta = vaddr - segment.vaddr;
        if (delta >= segment.filesz)
            continue;
        uint64_t offset = 0;
        if (__builtin_add_overflow(segment.offset, delta, &offset))
            continue;
        uint64_t limit = 0;
        if (__builtin_add_overflow(segment.offset, segment.filesz, &limit))
            limit = ~uint64_t{0};
        return Placement{vaddr, offset, limit, &segment};
    }
    return fail(where, fmt::format("{} address 0x{:x} is not in any PT_LOAD segment", what, vaddr));
}

Status Context::check_fits(const Placement& placement, uint64_t length, uint64_t where,
                           std::string_view what) const {
    uint64_t size = m_source.size();
    if (placement.offset > size || length > size - placement.offset) {
        return fail(where, fmt::format("{} ({} bytes at 0x{:x}) runs past the end of the file ({} "
                                       "bytes)",
                                       what, length, placement.offset, size));
    }
    if (length > placement.limit - placement.offset) {
        return fail(where, fmt::format("{} ({} bytes at 0x{:x}) runs past the end of its PT_LOAD "
                                       "segment",
                                       what, length, placement.offset));
    }
    return util::ok_status();
}

Result<util::ByteBuffer> Context::read(uint64_t offset, uint64_t length) const {
    util::ByteBuffer bytes(static_cast<size_t>(length));
    if (auto status = m_source.read_at(offset, bytes); !status)
        return status.error();
    return bytes;
}

Result<const std::byte*> ChunkReader::at(uint64_t offset, size_t length) {
    if (offset >= m_base && offset - m_base <= m_bytes.size() &&
        length <= m_bytes.size() - (offset - m_base)) {
        return m_bytes.data() + (offset - m_base);
    }
    uint64_t end = std::max(offset + length, std::min(m_limit, offset + k_chunk));
    m_bytes.resize(static_cast<size_t>(end - offset));
    m_base = offset;
    if (auto status = m_source.read_at(offset, m_bytes); !status) {
        m_bytes.clear();
        return status.error();
    }
    return m_bytes.data();
}

Result<std::string_view> StringTable::get(uint64_t index, uint64_t where,
                                          std::string_view what) const {
    if (index >= m_bytes.size()) {
        return m_context->fail(
            where,
            fmt::format("{} string index 0x{:x} is past the end of the string table", what, index));
    }
    const std::byte* begin = m_bytes.data() + index;
    const void* nul = std::memchr(begin, 0, m_bytes.size() - static_cast<size_t>(index));
    if (nul == nullptr) {
        return m_context->fail(m_offset + index,
                               "unterminated string at the end of the dynamic string table");
    }
    size_t length = static_cast<size_t>(static_cast<const std::byte*>(nul) - begin);
    return std::string_view(reinterpret_cast<const char*>(begin), length);
}

namespace {

// Field offsets inside the ELF header that differ between the classes.
struct HeaderFields {
    uint64_t phoff;
    uint64_t ehsize;
    uint64_t phentsize;
    uint64_t phnum;
    uint64_t shentsize;
    uint64_t shnum;
};

constexpr HeaderFields k_fields64{0x20, 0x34, 0x36, 0x38, 0x3a, 0x3c};
constexpr HeaderFields k_fields32{0x1c, 0x28, 0x2a, 0x2c, 0x2e, 0x30};

Segment decode_segment(const Codec& codec, const std::byte* p, uint64_t header_offset) {
    Segment segment;
    segment.header_offset = header_offset;
    segment.type = codec.u32(p);
    if (codec.is64()) {
        segment.flags = codec.u32(p + 4);
        segment.offset = codec.u64(p + 8);
        segment.vaddr = codec.u64(p + 16);
        segment.filesz = codec.u64(p + 32);
        segment.memsz = codec.u64(p + 40);
    } else {
        segment.offset = codec.u32(p + 4);
        segment.vaddr = codec.u32(p + 8);
        segment.filesz = codec.u32(p + 16);
        segment.memsz = codec.u32(p + 20);
        segment.flags = codec.u32(p + 24);
    }
    return segment;
}

}  // namespace

Result<Headers> decode_headers(const util::ByteSource& source) {
    const uint64_t size = source.size();
    auto fail = [&](uint64_t offset, std::string message) {
        return util::make_error(util::at_offset(source.name(), offset), std::move(message));
    };
    if (size < k_ident_size) {
        return fail(0, fmt::format("file too short for an ELF header ({} bytes)", size));
    }
    std::array<std::byte, 64> ehdr{};
    if (auto status = source.read_at(0, std::span(ehdr.data(), std::min<uint64_t>(size, 64)));
        !status) {
        return status.error();
    }
    if (!has_elf_magic(ehdr))
        return fail(0, "not an ELF file (bad magic)");
    auto ident = [&](size_t index) { return std::to_integer<unsigned>(ehdr[index]); };
    if (ident(4) != 1 && ident(4) != 2) {
        return fail(4, fmt::format("unsupported ELF class {}", ident(4)));
    }
    if (ident(5) != 1 && ident(5) != 2) {
        return fail(5, fmt::format("unsupported ELF data encoding {}", ident(5)));
    }
    if (ident(6) != 1) {
        return fail(6, fmt::format("unsupported ELF identification version {}", ident(6)));
    }

    Headers headers;
    headers.codec = Codec(ident(4) == 1 ? ElfClass::elf32 : ElfClass::elf64,
                          ident(5) == 1 ? ByteOrder::little : ByteOrder::big);
    const Codec& codec = headers.codec;
    if (size < codec.ehdr_size()) {
        return fail(0, fmt::format("file too short for an ELF header ({} bytes)", size));
    }
    const HeaderFields& fields = codec.is64() ? k_fields64 : k_fields32;
    headers.os_abi = static_cast<uint8_t>(ident(7));
    headers.type = codec.u16(&ehdr[0x10]);
    headers.machine = codec.u16(&ehdr[0x12]);
    if (uint32_t version = codec.u32(&ehdr[0x14]); version != 1) {
        return fail(0x14, fmt::format("unsupported ELF version {}", version));
    }
    if (uint16_t ehsize = codec.u16(&ehdr[fields.ehsize]); ehsize != codec.ehdr_size()) {
        return fail(fields.ehsize,
                    fmt::format("ELF header size {} is not {}", ehsize, codec.ehdr_size()));
    }
    headers.phoff = codec.word(&ehdr[fields.phoff]);
    headers.phnum = codec.u16(&ehdr[fields.phnum]);
    uint16_t phentsize = codec.u16(&ehdr[fields.phentsize]);
    if (headers.phnum != 0 && phentsize != codec.phdr_size()) {
        return fail(fields.phentsize, fmt::format("program header entry size {} is not {}",
                                                  phentsize, codec.phdr_size()));
    }
    uint16_t shentsize = codec.u16(&ehdr[fields.shentsize]);
    if (codec.u16(&ehdr[fields.shnum]) != 0 && shentsize != codec.shdr_size()) {
        return fail(fields.shentsize, fmt::format("section header entry size {} is not {}",
                                                  shentsize, codec.shdr_size()));
    }
    if (headers.phnum == 0xffff) {
        // PN_XNUM moves the real count into section header 0; ld.so does not support it either.
        return fail(fields.phnum, "extended program header numbering (PN_XNUM) is not supported");
    }
    if (headers.phnum == 0)
        return headers;

    if (headers.phoff < codec.ehdr_size()) {
        return fail(headers.phoff, "program header table overlaps the ELF header");
    }
    uint64_t table_size = uint64_t{headers.phnum} * codec.phdr_size();
    if (headers.phoff > size || table_size > size - headers.phoff) {
        return fail(headers.phoff,
                    fmt::format("program header table ({} entries) runs past the end of the file "
                                "({} bytes)",
                                headers.phnum, size));
    }
    std::vector<std::byte> table(static_cast<size_t>(table_size));
    if (auto status = source.read_at(headers.phoff, table); !status)
        return status.error();
    headers.segments.reserve(headers.phnum);
    for (size_t i = 0; i < headers.phnum; ++i) {
        size_t at = i * codec.phdr_size();
        headers.segments.push_back(decode_segment(codec, table.data() + at, headers.phoff + at));
    }
    return headers;
}

}  // namespace rootlock::elf::detail
