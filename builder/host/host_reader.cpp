// HostReader: the host's files through a DirectoryTree for resolution (a host's /lib is a link
// to usr/lib), lstat(2) for what a tree does not model (device numbers), /proc texts read to EOF.
#include "host/host_reader.hpp"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "fs/path_resolve.hpp"
#include "util/atomic_file.hpp"

namespace rootlock::host {

util::Result<HostReader> HostReader::open(const std::string& host_root) {
    ROOTLOCK_TRY(tree, fs::DirectoryTree::create(host_root));
    std::string root = tree->host_root().empty() ? "/" : tree->host_root();
    return HostReader(std::move(root), std::shared_ptr<fs::DirectoryTree>(std::move(tree)));
}

std::string HostReader::on_disk(std::string_view path) const {
    std::string normal = fs::normalize(path);
    return m_tree->host_root().empty() ? normal : m_tree->host_root() + normal;
}

std::optional<std::string> HostReader::resolve(std::string_view path, bool follow_last) const {
    auto resolved = fs::resolve(*m_tree, path, follow_last);
    if (!resolved)
        return std::nullopt;
    return resolved->path;
}

util::Result<std::string> HostReader::read_text(std::string_view path, size_t limit) const {
    auto resolved = resolve(path);
    auto found = resolved ? stat(*resolved) : std::nullopt;
    if (!found)
        return util::make_error(std::string(path), "no such file");
    // Only a regular file: a FIFO planted in a host's /proc would block the read for ever.
    if (found->kind != HostStat::Kind::regular)
        return util::make_error(std::string(path), "not a regular file");
    ROOTLOCK_TRY(text, util::read_host_file_prefix(on_disk(*resolved), limit + 1));
    if (text.size() > limit)
        return util::make_error(std::string(path),
                                "larger than " + std::to_string(limit) + " bytes");
    return std::move(text);
}

std::optional<HostStat> HostReader::stat(std::string_view path) const {
    auto resolved = resolve(path, false);
    if (!resolved)
        return std::nullopt;
    struct stat st {};
    if (::lstat(on_disk(*resolved).c_str(), &st) != 0)
        return std::nullopt;
    HostStat out;
    if (S_ISREG(st.st_mode))
        out.kind = HostStat::Kind::regular;
    else if (S_ISDIR(st.st_mode))
        out.kind = HostStat::Kind::directory;
    else if (S_ISLNK(st.st_mode))
        out.kind = HostStat::Kind::symlink;
    else if (S_ISCHR(st.st_mode))
        out.kind = HostStat::Kind::character;
    else if (S_ISBLK(st.st_mode))
        out.kind = HostStat::Kind::block;
    else if (S_ISSOCK(st.st_mode))
        out.kind = HostStat::Kind::socket;
    out.mode = st.st_mode & 07777;
    out.uid = st.st_uid;
    out.gid = st.st_gid;
    out.size = static_cast<uint64_t>(st.st_size);
    if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) {
        out.major = static_cast<int64_t>(major(st.st_rdev));
        out.minor = static_cast<int64_t>(minor(st.st_rdev));
    }
    return out;
}

std::vector<std::string> HostReader::list(std::string_view path) const {
    std::vector<std::string> names;
    auto resolved = resolve(path);
    if (!resolved)
        return names;
    auto listing = m_tree->list(*resolved);
    if (!listing)
        return names;
    for (const auto& entry : *listing)
        names.push_back(entry.name);
    return names;
}

}  // namespace rootlock::host
