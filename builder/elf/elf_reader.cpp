// The ELF reader's driver: read_elf and phase 2 (PT_INTERP, the dynamic section, its strings and
// tags), handing version and symbol tables to elf_versions.cpp and elf_symbols.cpp.
#include "elf/elf_reader.hpp"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "elf/elf_decode.hpp"

namespace rootlock::elf {

namespace detail {

using util::Result;
using util::Status;

namespace {

Result<std::string> read_interp(const Context& context, const Segment& segment) {
    if (segment.filesz > k_max_interp) {
        return context.fail(segment.header_offset,
                            fmt::format("PT_INTERP is longer than {} bytes ({} bytes)",
                                        k_max_interp, segment.filesz));
    }
    uint64_t size = context.size();
    if (segment.offset > size || segment.filesz > size - segment.offset) {
        return context.fail(segment.header_offset,
                            fmt::format("PT_INTERP segment ({} bytes at 0x{:x}) runs past the end "
                                        "of the file ({} bytes)",
                                        segment.filesz, segment.offset, size));
    }
    ROOTLOCK_TRY(bytes, context.read(segment.offset, segment.filesz));
    auto nul = std::find(bytes.begin(), bytes.end(), std::byte{0});
    if (nul == bytes.end())
        return context.fail(segment.offset, "PT_INTERP is not NUL-terminated");
    std::string text;
    text.reserve(static_cast<size_t>(nul - bytes.begin()));
    for (auto it = bytes.begin(); it != nul; ++it)
        text.push_back(static_cast<char>(*it));
    return text;
}

Result<DynamicTable> read_dynamic(const Context& context, const Segment& segment) {
    uint64_t size = context.size();
    if (segment.offset > size || segment.filesz > size - segment.offset) {
        return context.fail(segment.header_offset,
                            fmt::format("PT_DYNAMIC segment ({} bytes at 0x{:x}) runs past the "
                                        "end of the file ({} bytes)",
                                        segment.filesz, segment.offset, size));
    }
    const Codec& codec = context.codec();
    const size_t entry_size = codec.dyn_size();
    const uint64_t count = segment.filesz / entry_size;
    // Entries are read in chunks up to DT_NULL; a huge p_filesz costs nothing beyond it.
    ChunkReader reader(context.source(), segment.offset + count * entry_size);
    DynamicTable table;
    table.offset = segment.offset;
    for (uint64_t i = 0; i < count; ++i) {
        uint64_t offset = segment.offset + i * entry_size;
        ROOTLOCK_TRY(p, reader.at(offset, entry_size));
        DynEntry entry{codec.word(p), codec.word(p + codec.word_size()), offset};
        if (entry.tag == k_dt_null)
            return table;
        table.entries.push_back(entry);
    }
    return context.fail(segment.offset, "dynamic section has no DT_NULL terminator");
}

bool uses_strings(uint64_t tag, const ReadOptions& options) {
    switch (tag) {
        case k_dt_needed:
        case k_dt_soname:
        case k_dt_rpath:
        case k_dt_runpath:
        case k_dt_verneed:
        case k_dt_verdef:
            return true;
        case k_dt_symtab:
            return options.symbols;
        default:
            return false;
    }
}

Result<StringTable> read_strings(const Context& context, const DynamicTable& dynamic,
                                 const ReadOptions& options) {
    auto user =
        std::find_if(dynamic.entries.begin(), dynamic.entries.end(),
                     [&](const DynEntry& entry) { return uses_strings(entry.tag, options); });
    if (user == dynamic.entries.end())
        return StringTable();
    const DynEntry* strtab = dynamic.last(k_dt_strtab);
    if (strtab == nullptr) {
        return context.fail(user->offset,
                            fmt::format("{} needs the dynamic string table, but there is no "
                                        "DT_STRTAB",
                                        tag_name(user->tag)));
    }
    const DynEntry* strsz = dynamic.last(k_dt_strsz);
    if (strsz == nullptr)
        return context.fail(strtab->offset, "DT_STRTAB without DT_STRSZ");
    ROOTLOCK_TRY(placement, context.place(strtab->value, strtab->offset, "DT_STRTAB"));
    if (auto status =
            context.check_fits(placement, strsz->value, strtab->offset, "dynamic string table");
        !status) {
        return status.error();
    }
    ROOTLOCK_TRY(bytes, context.read(placement.offset, strsz->value));
    return StringTable(&context, placement.offset, std::move(bytes));
}

// glibc splits DT_RPATH/DT_RUNPATH on ':' and keeps empty elements (they mean the cwd).
std::vector<std::string> split_path(std::string_view text) {
    std::vector<std::string> parts;
    size_t start = 0;
    while (true) {
        size_t colon = text.find(':', start);
        if (colon == std::string_view::npos) {
            parts.emplace_back(text.substr(start));
            return parts;
        }
        parts.emplace_back(text.substr(start, colon - start));
        start = colon + 1;
    }
}

Status read_tags(const DynamicTable& dynamic, const StringTable& strings, ElfInfo& info) {
    for (const auto& entry : dynamic.entries) {
        if (entry.tag != k_dt_needed)
            continue;
        ROOTLOCK_TRY(name, strings.get(entry.value, entry.offset, "DT_NEEDED"));
        info.needed.emplace_back(name);
    }
    if (const DynEntry* soname = dynamic.last(k_dt_soname)) {
        ROOTLOCK_TRY(name, strings.get(soname->value, soname->offset, "DT_SONAME"));
        info.soname = name;
    }
    if (const DynEntry* rpath = dynamic.last(k_dt_rpath)) {
        ROOTLOCK_TRY(text, strings.get(rpath->value, rpath->offset, "DT_RPATH"));
        info.rpath = split_path(text);
    }
    if (const DynEntry* runpath = dynamic.last(k_dt_runpath)) {
        ROOTLOCK_TRY(text, strings.get(runpath->value, runpath->offset, "DT_RUNPATH"));
        info.runpath = split_path(text);
    }
    if (const DynEntry* flags = dynamic.last(k_dt_flags)) {
        info.flags = static_cast<uint32_t>(flags->value);
    }
    if (const DynEntry* flags_1 = dynamic.last(k_dt_flags_1)) {
        info.flags_1 = static_cast<uint32_t>(flags_1->value);
    }
    return util::ok_status();
}

}  // namespace

Result<ElfInfo> decode_object(const util::ByteSource& source, const Headers& headers,
                              const ReadOptions& options) {
    Context context(source, headers);
    ElfInfo info;
    info.elf_class = headers.codec.elf_class();
    info.byte_order = headers.codec.order();
    info.os_abi = headers.os_abi;
    info.type = headers.type;
    info.machine = headers.machine;
    info.symbols_read = options.symbols;

    if (const Segment* interp = headers.interp()) {
        ROOTLOCK_TRY(text, read_interp(context, *interp));
        info.interpreter = std::move(text);
    }
    const Segment* dynamic_segment = headers.dynamic();
    if (dynamic_segment == nullptr)
        return info;
    info.has_dynamic = true;

    ROOTLOCK_TRY(dynamic, read_dynamic(context, *dynamic_segment));
    ROOTLOCK_TRY(strings, read_strings(context, dynamic, options));
    if (auto status = read_tags(dynamic, strings, info); !status)
        return status.error();
    if (auto status = read_version_needs(context, dynamic, strings, info); !status) {
        return status.error();
    }
    if (auto status = read_version_defs(context, dynamic, strings, info); !status) {
        return status.error();
    }
    if (options.symbols) {
        VersionIndex versions = index_versions(info);
        if (auto status = read_symbols(context, dynamic, strings, versions, info); !status) {
            return status.error();
        }
        read_relocation_kinds(context, dynamic, info);
    }
    return info;
}

}  // namespace detail

bool has_elf_magic(std::span<const std::byte> head) {
    static constexpr std::array<std::byte, 4> k_magic{std::byte{0x7f}, std::byte{'E'},
                                                      std::byte{'L'}, std::byte{'F'}};
    return head.size() >= k_magic.size() &&
           std::equal(k_magic.begin(), k_magic.end(), head.begin());
}

util::Result<ElfInfo> read_elf(const util::ByteSource& source, const ReadOptions& options) {
    ROOTLOCK_TRY(headers, detail::decode_headers(source));
    return detail::decode_object(source, headers, options);
}

}  // namespace rootlock::elf
