// The fatbin readers and the compat note over a whole ELF object: sections found by name, fatbin
// headers walked, coverage decided for a few GPUs, the forward-compatibility note's JSON, and the
// streaming scanner fed the same bytes in chunks, which must agree with read_fatbin wherever that
// reads the object and the fatbin sections start 8-byte aligned in the file (as every linker
// places them; the scanner looks for containers at aligned file offsets).
#include <array>
#include <cstring>
#include <string>
#include <vector>

#include "elf/elf_sections.hpp"
#include "fuzz_common.hpp"
#include "gpu/arch_coverage.hpp"
#include "gpu/compat_note.hpp"
#include "gpu/fatbin.hpp"
#include "gpu/fatbin_stream.hpp"

namespace {

using namespace rootlock;

// What a summary promises whatever the bytes: entries inside the file, PTX and cubin entries
// with an nvcc architecture number, and verdicts that name an entry the rules let run.
void check_summary(const gpu::FatbinSummary& summary, uint64_t file_size) {
    for (const gpu::FatbinEntry& entry : summary.entries) {
        if (entry.offset + entry.header_size + entry.payload_size > file_size)
            fuzz::fail("a fatbin entry beyond the end of the file");
        if (entry.kind != gpu::FatbinKind::other && (entry.sm < 10 || entry.sm > 999))
            fuzz::fail("a fatbin entry with an SM outside 10..999");
    }
    for (gpu::ComputeCapability gpu :
         {gpu::ComputeCapability{7, 5}, gpu::ComputeCapability{8, 6}, gpu::ComputeCapability{9, 0},
          gpu::ComputeCapability{10, 3}, gpu::ComputeCapability{12, 0}}) {
        const gpu::CoverageVerdict verdict = gpu::cover(summary, gpu);
        if (verdict.message.empty())
            fuzz::fail("a coverage verdict without a message");
        if (verdict.coverage == gpu::Coverage::none) {
            if (verdict.decided_by)
                fuzz::fail("a `none` verdict naming an entry");
            continue;
        }
        if (!verdict.decided_by || !gpu::runs_on(*verdict.decided_by, gpu))
            fuzz::fail("a verdict naming code that does not run", verdict.message);
        if (!verdict.entry || *verdict.entry >= summary.entries.size() ||
            summary.entries[*verdict.entry].name() != *verdict.decided_by) {
            fuzz::fail("a verdict whose entry index is wrong", verdict.message);
        }
    }
}

// Everything both readers must agree on, as one comparable text.
std::string describe(const gpu::FatbinSummary& summary) {
    std::string out = std::to_string(summary.containers) + " " +
                      std::to_string(summary.embedded_containers) + " " +
                      std::to_string(summary.any_compressed) + "\n";
    for (const gpu::FatbinEntry& e : summary.entries) {
        out += std::to_string(e.offset) + " " + std::to_string(e.raw_kind) + " " +
               std::to_string(e.sm) + " " + std::to_string(e.kernels) + " " +
               std::to_string(e.payload_size) + "\n";
    }
    if (summary.relocatable)
        out += "relocatable " + std::to_string(summary.relocatable->entries);
    return out;
}

bool fatbin_sections_aligned(const util::ByteSource& source) {
    const std::array<std::string_view, 2> names{".nv_fatbin", "__nv_relfatbin"};
    auto sections = elf::find_sections(source, names);
    if (!sections.ok())
        return false;
    for (const auto& section : *sections) {
        if (section && section->offset % 8 != 0)
            return false;
    }
    return true;
}

void check_stream(const std::vector<std::byte>& bytes, size_t chunk,
                  const util::Result<std::optional<gpu::FatbinSummary>>& reference,
                  const util::ByteSource& source) {
    gpu::FatbinStreamScanner scanner("fuzz.so", bytes.size());
    for (size_t at = 0; at < bytes.size(); at += chunk)
        scanner.feed(std::span(bytes).subspan(at, std::min(chunk, bytes.size() - at)));
    auto streamed = scanner.finish();
    if (streamed.ok() && streamed->has_value())
        check_summary(**streamed, bytes.size());
    if (!reference.ok() || !fatbin_sections_aligned(source))
        return;
    if (!streamed.ok()) {
        if (streamed.error().text().find("containers overlap") == std::string::npos)
            fuzz::fail("the streaming scanner failed where read_fatbin read",
                       streamed.error().text());
        return;
    }
    if (reference->has_value() != streamed->has_value())
        fuzz::fail("the streaming scanner and read_fatbin disagree on device code being there");
    if (reference->has_value() && describe(**reference) != describe(**streamed))
        fuzz::fail("the streaming scanner and read_fatbin disagree", describe(**streamed));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::vector<std::byte> bytes(size);
    if (size != 0)
        std::memcpy(bytes.data(), data, size);
    util::MemorySource source("fuzz.so", bytes);
    auto summary = gpu::read_fatbin(source);
    if (fuzz::check(summary) && summary->has_value())
        check_summary(**summary, size);
    check_stream(bytes, size == 0 ? 1 : 1 + std::to_integer<size_t>(bytes[size - 1]) % 97, summary,
                 source);
    fuzz::check(gpu::read_compat_note(source));
    return 0;
}
