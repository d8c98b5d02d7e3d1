// The fatbin reader and the compat note over a whole ELF object: sections found by name, fatbin
// headers walked, coverage decided for a few GPUs, and the forward-compatibility note's JSON.
#include <cstring>
#include <vector>

#include "fuzz_common.hpp"
#include "gpu/arch_coverage.hpp"
#include "gpu/compat_note.hpp"
#include "gpu/fatbin.hpp"

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

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::vector<std::byte> bytes(size);
    if (size != 0)
        std::memcpy(bytes.data(), data, size);
    util::MemorySource source("fuzz.so", std::move(bytes));
    auto summary = gpu::read_fatbin(source);
    if (fuzz::check(summary) && summary->has_value())
        check_summary(**summary, size);
    fuzz::check(gpu::read_compat_note(source));
    return 0;
}
