// The CUDA and driver rules of `check`: the closure's CUDA majors against the declared toolkit,
// the host driver against the CUDA majors it must run, driver libraries baked into the image, and
// CUDA stub directories on a search path (cuda-wheels.md sections 3 and 8, failure modes C1-C4).
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "check/problem.hpp"
#include "elf/elf_info.hpp"
#include "fs/file_tree.hpp"
#include "util/result.hpp"

namespace rootlock::check {

// A host driver as declared: a branch ("580") or a full release ("580.65.06").
struct DriverVersion {
    std::string text;        // as declared
    std::vector<int> parts;  // one to three numbers; parts[0] is the branch
    int branch() const { return parts.front(); }
    bool full() const { return parts.size() > 1; }
};

// What the user declared about CUDA; an empty string declared nothing.
struct CudaTarget {
    std::string cuda;               // "13.0"
    std::optional<int> cuda_major;  // 13
    std::optional<DriverVersion> driver;
};

// CUDA major -> canonical paths of the CUDA-family libraries of that major in loaded closures.
using CudaMajors = std::map<int, std::set<std::string>>;

// The oldest driver branch that runs a CUDA major: 13 -> 580, 12 -> 525, 11 -> 450.
std::optional<int> minimum_driver_branch(int cuda_major);

// "570" or "570.133.07": one to three dot-separated decimal numbers.
util::Result<DriverVersion> parse_driver_version(std::string_view text);
// "13.0" -> 13: MAJOR.MINOR, both decimal numbers.
util::Result<int> parse_cuda_major(std::string_view text);
// Both declarations at once (CheckOptions.cuda and .driver), empty ones left undeclared. A CUDA
// major without a known minimum driver is refused: nothing could be said about the driver.
util::Result<CudaTarget> parse_cuda_target(std::string_view cuda, std::string_view driver);

// `cuda-major-mismatch` for each found major that is not the declared one, and `driver-too-old`
// when the declared driver's branch is older than the highest found major needs (the declared
// major's when none was found).
std::vector<Problem> cuda_target_problems(const CudaMajors& majors_found, const CudaTarget& target);

// True for the file name of a library the host's driver provides ("libcuda.so.1",
// "libnvidia-ml.so.580.65.06", "libcuda.so"), whatever its version suffix.
bool is_driver_library_name(std::string_view name);

// `driver-library-in-image` for every driver library among `paths` (canonical paths inside
// `tree`; other names are skipped). Symlinks are followed inside the tree and reported once, at
// the file they lead to; dangling ones load nothing and are skipped. A library under a `stubs`
// directory or with no version is a stub; one whose version is exactly the declared driver is
// the host's own and fine.
std::vector<Problem> driver_library_problems(const fs::FileTree& tree,
                                             const std::vector<std::string>& paths,
                                             const std::optional<DriverVersion>& driver);

// An ELF object as the caller scanned it: its canonical path and its metadata.
using ScannedElf = std::pair<std::string, const elf::ElfInfo*>;

// `stubs-on-search-path` for every directory whose last component is `stubs` (as written or
// once resolved in the tree) on a search path: ld.so.conf and its includes (source "FILE:LINE"),
// `ld_library_path` (source "LD_LIBRARY_PATH"), and the DT_RPATH/DT_RUNPATH of each object
// (source "<path> DT_RUNPATH", $ORIGIN expanded). Fails only when ld.so.conf cannot be read.
util::Result<std::vector<Problem>> stubs_path_problems(
    const fs::FileTree& tree, const std::vector<std::string>& ld_library_path,
    const std::vector<ScannedElf>& objects);

}  // namespace rootlock::check
