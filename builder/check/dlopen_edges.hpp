// Runtime dlopen edges that no DT_NEEDED entry shows (cuda-wheels.md section 7): cuDNN opening
// its sub-libraries and NVRTC, NVRTC its builtins, torch the driver. Each is followed as its
// consumer's own dlopen call would resolve it, so a miss is a soft requirement, not a guess.
#pragma once

#include <compare>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "loader/session.hpp"

namespace rootlock::check {

// What a consumer's dlopen names.
enum class DlopenTarget : uint8_t {
    exact,          // `name` as written
    nvrtc,          // libnvrtc.so.<CUDA major of the process> (see cuda_major_for_nvrtc)
    nvrtc_builtins  // libnvrtc-builtins.so.<the consumer's soname major>.<any minor beside it>
};

// One row of the table: a consumer, matched by a glob over its SONAME (its file name when it
// has none), and what it opens.
struct DlopenEdge {
    std::string_view consumer;
    std::string_view name;  // for `exact`; otherwise a description
    DlopenTarget target = DlopenTarget::exact;
    bool optional = false;  // opened only for some features or configurations
};

std::span<const DlopenEdge> known_dlopen_edges();

struct DlopenFinding {
    std::string consumer;  // canonical path of the object that calls dlopen
    std::string name;      // the name it passes (a glob when no candidate name exists)
    std::string provider;  // canonical path of what answers; empty when nothing or the host does
    std::string via;       // via_name(): "runpath", "already-loaded", "host-provided", ...
    bool optional = false;
    // Nothing answers: a `missing-dlopen` warning. False for host-provided names (libcuda.so.1).
    bool missing = false;
    // DT_NEEDED names of the opened object (and of what it pulls in) that nothing answers:
    // that dlopen fails as a whole. Sorted, unique.
    std::vector<std::string> missing_dependencies;

    auto operator<=>(const DlopenFinding&) const = default;
};

// The CUDA major whose libnvrtc cuDNN opens. cuDNN 9 for CUDA 12 and for CUDA 13 share a path
// and a soname (cuda-wheels.md section 1), so the install cannot tell; the process can. The
// first answer of: the CUDA-family libraries `consumer` itself needs (DT_NEEDED, as loaded),
// then the session's first libcudart, then its first libcublas/libcublasLt. 0 when none says.
int cuda_major_for_nvrtc(const loader::LoadSession& session, int consumer);

// Follows every known dlopen edge of the objects of `session` from index `first` on, and of
// whatever those edges load, each opened as its consumer opens it (dlopen_from), in a copy of
// the session, so the caller's is untouched. Consumers in index order, edges in table order.
// An nvrtc edge whose CUDA major nothing tells is skipped: without a CUDA runtime in the
// process, cuDNN fails before it needs NVRTC, and that missing runtime is reported anyway.
std::vector<DlopenFinding> follow_dlopen_edges(const loader::LoadSession& session, size_t first);

// The same in `session` itself, for a caller that wants the objects the edges loaded (their
// own requests, symbols, CUDA majors) in its session.
std::vector<DlopenFinding> follow_dlopen_edges_in(loader::LoadSession& session, size_t first);

}  // namespace rootlock::check
