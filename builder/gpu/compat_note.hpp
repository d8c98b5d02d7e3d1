// The forward-compatibility note of a cuda-compat libcuda (.note.cuda.fwd_compatibility): which
// host driver branches it may run over, as nvidia-container-toolkit's enable-cuda-compat reads it.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/byte_source.hpp"
#include "util/result.hpp"

namespace rootlock::gpu {

inline constexpr std::string_view k_compat_note_section = ".note.cuda.fwd_compatibility";
inline constexpr std::string_view k_compat_note_owner = "NVIDIA Corporation";

// The note's JSON descriptor, e.g. {"format":1,"CUDA version":"12.9","driver":[535,550,560,565,
// 570,575],"device":[1,2,7,8,9,10,11,12,13,14]} (575.57.08); Orin's has only format and CUDA
// version (gpu-containers.md 4.4). What `device` lists is not documented.
struct CompatNote {
    int format = 0;
    std::string cuda_version;  // "12.9"
    std::vector<int> driver_branches;
    std::vector<int> devices;
};

// The note of the libcuda behind `source`: nullopt when it has no such section, or when the
// section's first note is not NVIDIA's or is empty (the hook ignores those too). The JSON is
// read as Go's encoding/json reads it into the hook's struct: an object, keys matched without
// regard to case ("CUDA Version" is the hook's spelling, "CUDA version" the note's), unknown keys
// ignored, null as absent, integers only in the arrays. A descriptor that runs past its section
// is cut there, as the hook does (Orin's compat libcuda declares two bytes too many). Errors:
// "name@0xOFF: message" at the note for JSON that is not that.
util::Result<std::optional<CompatNote>> read_compat_note(const util::ByteSource& source);

// The descriptor alone (its trailing NULs ignored); errors have no location.
util::Result<CompatNote> parse_compat_note(std::string_view json);

// Whether the enable-cuda-compat hook enables this compat libcuda over a host driver of branch
// `host_branch` (580 for 580.65.06), given the note: the branch must be listed in `driver`. The
// hook also requires the compat library's own release (its file name, libcuda.so.575.57.08) to
// be newer than the host's; that comparison is the caller's, who has both releases.
bool compat_allows(const CompatNote& note, int host_branch);

// The hook's other path, taken when only the host's CUDA version is known: the note's CUDA
// version must be newer ("12.9" over a host at "12.8"; "12.10" is newer than "12.9"). False when
// either is not a version of one to three dot-separated numbers.
bool compat_newer_cuda(const CompatNote& note, std::string_view host_cuda_version);

}  // namespace rootlock::gpu
