// A wheel (.whl, a zip) read once, front to back: every entry validated, hashed and checked
// against RECORD, ELF objects parsed while streaming, plus a JSON form for the scan cache.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "elf/elf_info.hpp"
#include "python/wheel_filename.hpp"
#include "util/result.hpp"

namespace rootlock::python {

// One regular file of the wheel. Directory entries are validated and then dropped.
struct WheelEntry {
    std::string path;  // as stored in the zip: relative, "/"-separated, no "." or ".." parts
    uint64_t size = 0;
    uint32_t mode = 0644;       // permission bits as stored (0644 when the zip holds none)
    bool executable = false;    // any x bit: pip installs such a file 0755, others 0644
    std::string sha256_base64;  // RECORD's spelling of the bytes' SHA-256
    // Objects starting with the ELF magic: parsed, dynamic symbols included, or the reader's
    // located error when the metadata is unreadable (elf then stays empty).
    std::optional<elf::ElfInfo> elf;
    std::string elf_error;
    // Its device code, read from the fatbin headers as the bytes streamed by: the nvcc names of
    // what can run on a GPU ("sm_75", "sm_90a", "compute_90"), in gpu::SmName order; empty for an
    // object without any. device_code_error says why it could not be read, when it could not.
    std::vector<std::string> architectures;
    std::string device_code_error;
    // The bytes of NAME.data/scripts files (at most k_max_held_script_size), held because
    // installing rewrites a "#!python" first line, which changes their hash and size.
    std::optional<std::string> content;
};

struct WheelScan {
    std::string wheel_sha256;  // hex of the whole file
    uint64_t wheel_size = 0;
    WheelFilename filename;
    std::string dist_info;  // "torch-2.8.0+cu128.dist-info"
    std::string data_dir;   // "torch-2.8.0+cu128.data", or "" when the wheel has none
    // Texts of those dist-info files; entry_points is "" when absent (the others are required).
    std::string metadata, wheel, record, entry_points;
    std::vector<WheelEntry> entries;  // sorted bytewise by path
    // Sonames of its shared objects (DT_SONAME, else the file name of an ET_DYN "*.so*"), and the
    // DT_NEEDED sonames none of them provides; both sorted, unique.
    std::vector<std::string> provides;
    std::vector<std::string> needs;
};

inline constexpr uint64_t k_max_held_script_size = uint64_t{1} << 20;

struct ScanOptions {
    // Zip bomb guard: the declared uncompressed sizes together, and every entry's actual bytes
    // (which may never exceed its declared size). torch wheels hold about 5 GiB.
    uint64_t max_total_size = uint64_t{16} << 30;
    uint64_t max_text_size = uint64_t{64} << 20;  // METADATA, WHEEL, RECORD, entry_points.txt
    // The wheel's file name when the file on disk has another name (a blob in the content
    // store is named by its hash); empty: the base name of the path.
    std::string filename;
};

// Reads the wheel at `host_path`. A wheel that pip would refuse, or that differs from its own
// RECORD, is refused with one line "FILE.whl: problem" (FILE.whl being the file's base name):
// unsafe or non-UTF-8 entry paths, duplicates, symlinks, a missing or misnamed dist-info, a
// missing METADATA/WHEEL/RECORD, Wheel-Version 2+, sizes over ScanOptions, and any file not
// matching its RECORD row (sha256 only) or not listed there. libarchive reads '\' in a zip
// name as '/', so such a name fails as a RECORD mismatch rather than by name;
// an unreadable file or broken zip gives "HOST_PATH: problem", or, when ScanOptions::filename
// names a blob stored under another name, "FILE.whl: problem (the copy at HOST_PATH)". The whole
// file's SHA-256 costs one more sequential read: libarchive seeks to the central directory first,
// so its own reads cannot feed a hash of the file.
util::Result<WheelScan> scan_wheel(const std::string& host_path, const ScanOptions& options = {});

// The symbol versions the wheel's ELF objects need from sonames it does not provide
// ("GLIBC_2.17", "GLIBCXX_3.4.29"), weak ones left out: what its users' base must define. Sorted,
// unique; derived from the entries, so scans read from the cache give it too.
std::vector<std::string> needed_versions(const WheelScan& scan);

// Whether the scan read the entry's device code: an ELF object (parsed or not) whose fatbin
// sections could be read, whatever they hold.
inline bool read_device_code(const WheelEntry& entry) {
    return (entry.elf.has_value() || !entry.elf_error.empty()) && entry.device_code_error.empty();
}

// Every architecture any of the wheel's objects carries, in gpu::SmName order, unique: what the
// lock records for it, so that `diff` can say which GPUs a new build dropped.
std::vector<std::string> wheel_architectures(const WheelScan& scan);

// The entry at `path` (as stored), or nullptr; entries are sorted, so this is a binary search.
const WheelEntry* find_entry(const WheelScan& scan, std::string_view path);

// The scan cache: {"schema": k_scan_schema, ...} with every field, ElfInfo included in full.
// scan_from_json refuses another schema or any field of the wrong shape with one line
// "scan cache: problem" (the caller then rescans the wheel).
inline constexpr int k_scan_schema = 3;  // 3: device code; 2: relocation kinds
std::string scan_to_json(const WheelScan& scan);
util::Result<WheelScan> scan_from_json(std::string_view json);

// Where scans are kept in a cache: CACHE/scans/v2/KK/REST.json under the wheel's sha256, each
// sealed with its own digest (util/sealed_text). v1 held them unsealed.
std::string scan_cache_folder(const std::string& cache_dir);
std::string scan_cache_path(const std::string& cache_dir, const std::string& wheel_sha256);

}  // namespace rootlock::python
