// An index of an uncompressed tar file (ustar, pax, GNU): every member's metadata and the offset
// of its data, so that the image builder can read any member at any time without extracting.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/byte_source.hpp"
#include "util/result.hpp"

namespace rootlock::image {

// '0' '\0' '7' regular, '1' hardlink, '2' symlink, '3' '4' devices, '5' directory, '6' fifo.
enum class TarMemberType : uint8_t {
    regular,
    hardlink,
    symlink,
    char_device,
    block_device,
    directory,
    fifo
};

// One member, with pax and GNU long-name records already applied to it.
struct TarMember {
    std::string stored_path;  // as the archive spells it ("./etc/passwd", "usr/bin/")
    std::string path;         // canonical: "/etc/passwd", "/usr/bin", "/" for "./"
    TarMemberType type = TarMemberType::regular;
    uint32_t mode = 0;  // permission bits, 07777 at most
    uint64_t uid = 0;
    uint64_t gid = 0;
    int64_t mtime = 0;  // seconds since the epoch (pax allows negative and fractional times)
    uint32_t mtime_nsec = 0;
    uint64_t size = 0;  // data bytes in the archive (0 for everything but regular files and
                        // the rare hard link that carries data)
    // A symlink's text verbatim; a hard link's target member, canonical like `path`.
    std::string link_target;
    uint32_t dev_major = 0;
    uint32_t dev_minor = 0;
    // pax SCHILY.xattr.NAME records (what GNU tar --xattrs writes): name without the prefix,
    // value as raw bytes; sorted by name.
    std::vector<std::pair<std::string, std::string>> xattrs;
    uint64_t header_offset = 0;  // the member's first header block (extended headers included)
    uint64_t data_offset = 0;    // where its `size` data bytes start
};

struct TarIndex {
    std::string name;  // the host path errors are located with
    // Kept open for open_member(); shared so that a stream can outlive the index.
    std::shared_ptr<const util::FileSource> file;
    std::vector<TarMember> members;  // in archive order (mmdebstrap's is not sorted)
    // Canonical path -> index in `members`; the last member of a path wins, as in extraction.
    std::map<std::string, size_t, std::less<>> by_path;

    const TarMember* find(std::string_view canonical_path) const;
};

// Guards against hostile archives: pax and GNU long-name records are read whole into memory.
inline constexpr uint64_t k_max_tar_extended_header = uint64_t{1} << 20;

// Reads every header of the tar file at `host_path`. The archive ends at the first zero block
// or at the end of the file on a block boundary. Checksums are verified; numeric fields may be
// octal or base-256; members whose paths climb out of the root ("..") are refused, as are GNU
// sparse members. The first problem gives one error: "HOST_PATH@0xOFFSET: problem", OFFSET
// being the header (or pax record) at fault.
util::Result<TarIndex> index_tar(const std::string& host_path);

// Exactly `member.size` bytes from `member.data_offset`, read with pread in the caller's pieces;
// errors (a file truncated since it was indexed) arrive from read().
std::unique_ptr<util::ByteStream> open_member(const TarIndex& index, const TarMember& member);

// "./usr//lib/./x/" -> "/usr/lib/x"; an error message for an empty path or one holding "..".
util::Result<std::string> canonical_tar_path(std::string_view stored);

// Decompresses the tarball at `compressed_path` (.tar.zst, .tar.gz, .tar.xz, .tar.bz2, or plain)
// into a plain tar file at `out_path`, in 1 MiB pieces and atomically (a temporary file beside
// it, synced, then renamed). Returns the hex SHA-256 of the plain tar, for the builder's cache;
// `before_rename`, when given, is called with it before the file takes its name (to record it
// first), and its error ends the call with nothing renamed.
util::Result<std::string> decompress_to_plain_tar(
    const std::string& compressed_path, const std::string& out_path,
    const std::function<util::Status(const std::string& sha256)>& before_rename = {});

}  // namespace rootlock::image
