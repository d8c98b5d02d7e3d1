// Reads an ElfInfo from bytes: a random-access ByteSource (file, memory) or a forward-only
// ByteStream (an archive entry). Bounds-checked everywhere; every failure is one located error
// "name@0xOFF: problem". It reads only the headers and dynamic metadata, never whole files.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "elf/elf_info.hpp"
#include "util/byte_source.hpp"
#include "util/result.hpp"

namespace rootlock::elf {

struct ReadOptions {
    bool symbols = false;  // also read the dynamic symbol table (costly on libtorch-sized objects)
    // read_elf_stream only: the most bytes of a stream it may keep in memory. Objects whose
    // metadata needs more fail with a located error rather than growing without bound.
    uint64_t stream_retain_limit = uint64_t{256} << 20;
    // read_elf_stream only: how much of the first PT_LOAD segment it keeps for the tables that
    // linkers put at its start. The segment may also hold the text (-z noseparate-code, common in
    // CUDA libraries) or .rodata and fat binaries (lld), which are skipped past this window.
    uint64_t stream_head_window = uint64_t{64} << 20;
};

// What read_elf_stream kept in memory, for tests and diagnostics: proof that it retained the
// metadata and skipped the rest.
struct StreamStats {
    uint64_t retained_bytes = 0;  // all retained ranges together, at the end
    uint64_t largest_range = 0;   // the largest single retained range
    uint64_t consumed_bytes = 0;  // how far into the stream it read
};

// True when the bytes begin with the ELF magic "\x7fELF".
bool has_elf_magic(std::span<const std::byte> head);

// Parses the object behind `source`. Errors are located at source.name()@offset.
util::Result<ElfInfo> read_elf(const util::ByteSource& source, const ReadOptions& options = {});

// Parses an object read once, front to back, from `stream` of `size` bytes (a tar or zip entry),
// with read_elf's own decoder, so both give the same ElfInfo or the same error. It keeps the ELF
// and program headers, the start of the first PT_LOAD segment (up to options.stream_head_window:
// linkers put .dynsym, .dynstr, .gnu.version* and the hash tables there), PT_INTERP and
// PT_DYNAMIC wherever they are, and reads forward for tables placed after the dynamic section
// (patchelf appends a segment for those it rewrites); the rest is skipped in 1 MiB reads, so
// memory is bounded by the metadata, not the file. A table in a part already skipped fails with
// "name@0xOFF: bytes 0xA-0xB were skipped by the streaming reader ...". The stream is left at an
// unspecified position; the caller drains or discards it.
util::Result<ElfInfo> read_elf_stream(util::ByteStream& stream, uint64_t size,
                                      const std::string& name, const ReadOptions& options = {});
// The same, reporting what it retained in `stats` (filled on success and on failure).
util::Result<ElfInfo> read_elf_stream(util::ByteStream& stream, uint64_t size,
                                      const std::string& name, const ReadOptions& options,
                                      StreamStats& stats);

}  // namespace rootlock::elf
