// decompress_to_plain_tar: a compressed base tarball turned once into a plain tar in the cache,
// so that its members can be read in any order by offset; written beside the target, renamed.
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>
#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <limits>
#include <optional>
#include <span>
#include <tuple>
#include "fs/archive_reader.hpp"
#include "fs/tree_errors.hpp"
#include "image/tar_index.hpp"
#include "util/atomic_file.hpp"
#include "util/sha256.hpp"

namespace rootlock::image {

namespace {

constexpr size_t k_piece = size_t{1} << 20;  // bytes copied per read

// A temporary file beside the target, removed unless it was renamed into place.
class TempOutput {
  public:
    ~TempOutput() {
        if (m_fd >= 0)
            ::close(m_fd);
        if (!m_path.empty())
            ::unlink(m_path.c_str());
    }
    util::Status create(const std::string& target) {
        const size_t slash = target.rfind('/');
        const std::string dir = slash == std::string::npos ? "." : target.substr(0, slash);
        const std::string base = slash == std::string::npos ? target : target.substr(slash + 1);
        if (dir != "." && !dir.empty()) {
            ROOTLOCK_TRY(made, util::make_directories(dir));
            (void)made;
        }
        std::string pattern =
            (dir.empty() ? std::string() : dir + "/") + "." + base + ".tmp-XXXXXX";
        m_fd = ::mkostemp(pattern.data(), O_CLOEXEC);
        if (m_fd < 0)
            return util::make_io_error(target, fs::errno_text(errno));
        m_path = std::move(pattern);
        return util::ok_status();
    }
    util::Status write(const std::string& target, std::span<const std::byte> bytes) {
        while (!bytes.empty()) {
            const ssize_t n = ::write(m_fd, bytes.data(), bytes.size());
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                return util::make_io_error(target, fs::errno_text(n < 0 ? errno : EIO));
            bytes = bytes.subspan(static_cast<size_t>(n));
        }
        return util::ok_status();
    }
    util::Status commit(const std::string& target) {
        if (::fchmod(m_fd, 0644) != 0 || ::fsync(m_fd) != 0)
            return util::make_io_error(target, fs::errno_text(errno));
        const int fd = m_fd;
        m_fd = -1;
        if (::close(fd) != 0)
            return util::make_io_error(target, fs::errno_text(errno));
        if (::rename(m_path.c_str(), target.c_str()) != 0)
            return util::make_io_error(target, fs::errno_text(errno));
        m_path.clear();
        return util::ok_status();
    }

  private:
    int m_fd = -1;
    std::string m_path;
};

}  // namespace

util::Result<std::string> decompress_to_plain_tar(
    const std::string& compressed_path, const std::string& out_path,
    const std::function<util::Status(const std::string& sha256)>& before_rename) {
    ROOTLOCK_TRY(reader, fs::ArchiveReader::open(compressed_path, fs::ArchiveFormat::raw));
    ROOTLOCK_TRY(entry, reader->next());
    if (!entry)
        return util::make_error(compressed_path, "no data to decompress");
    TempOutput output;
    ROOTLOCK_TRY(created, output.create(out_path));
    (void)created;
    util::Sha256 hash;
    std::vector<std::byte> piece(k_piece);
    while (true) {
        ROOTLOCK_TRY(count, reader->read(piece));
        if (count == 0)
            break;
        const auto bytes = std::span<const std::byte>(piece).first(count);
        hash.update(bytes);
        ROOTLOCK_TRY(written, output.write(out_path, bytes));
        (void)written;
    }
    std::string digest = hash.hex_digest();
    if (before_rename) {
        ROOTLOCK_TRY(recorded, before_rename(digest));
        (void)recorded;
    }
    ROOTLOCK_TRY(committed, output.commit(out_path));
    (void)committed;
    return digest;
}

}  // namespace rootlock::image
