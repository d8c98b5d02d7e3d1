// An index of a zip archive (a wheel) from its central directory, ZIP64 included, and streams
// that inflate any member on demand in bounded pieces, so wheels are never extracted to disk.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "util/byte_source.hpp"
#include "util/result.hpp"

namespace rootlock::fs {

inline constexpr uint16_t k_zip_stored = 0;
inline constexpr uint16_t k_zip_deflated = 8;

// One central directory record, ZIP64 extra fields applied.
struct ZipMember {
    std::string name;                // as stored: "torch/lib/libc10.so", a directory ends with "/"
    uint16_t method = k_zip_stored;  // only stored and deflated can be opened
    uint16_t flags = 0;
    uint32_t crc32 = 0;
    uint64_t compressed_size = 0;
    uint64_t uncompressed_size = 0;
    uint32_t external_attributes = 0;
    // st_mode (type and permission bits) from the high half of the external attributes when
    // the member was made on Unix; 0 when the archive holds none.
    uint32_t unix_mode = 0;
    uint64_t local_header_offset = 0;
};

struct ZipIndex {
    std::string name;  // what errors call the archive (the wheel's file name, say)
    std::shared_ptr<const util::FileSource> file;  // kept open; shared with open streams
    std::vector<ZipMember> members;                // in central directory order
    // Name -> index in `members`; the last record of a name wins, as in Python's zipfile.
    std::map<std::string, size_t, std::less<>> by_name;

    const ZipMember* find(std::string_view name) const;
};

// The central directory is read whole: this bounds the memory a hostile archive can claim.
inline constexpr uint64_t k_max_zip_central_directory = uint64_t{256} << 20;

// Reads the end of central directory record (and the ZIP64 one when a field overflows), then
// every central directory record. `name` is what errors call the archive (empty: host_path).
// Errors read "NAME@0xOFFSET: problem"; a file that cannot be opened gives "NAME: strerror".
util::Result<ZipIndex> index_zip(const std::string& host_path, std::string name = {});

// A stream of the member's uncompressed bytes: reads its local header (whose name must match),
// then copies stored data or inflates deflated data, reading at most 1 MiB of the file at a
// time. At the end it checks the uncompressed size and the CRC-32. Every problem arrives from
// read() as "NAME: MEMBER: problem", e.g. "x.whl: a/b.so: CRC-32 mismatch".
std::unique_ptr<util::ByteStream> open_member(const ZipIndex& index, const ZipMember& member);

}  // namespace rootlock::fs
