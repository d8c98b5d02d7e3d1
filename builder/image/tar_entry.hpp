// TarEntry: one member of an image as rootlock writes it (the writer, the frame plan and the
// OCI layers all speak of members this way).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace rootlock::image {

enum class EntryKind { regular, directory, symlink, hardlink };

struct TarEntry {
    std::string path;  // canonical absolute path inside the image: "/", "/etc", "/opt/venv/bin/x"
    EntryKind kind = EntryKind::regular;
    uint32_t mode = 0644;  // permission bits incl. setuid/setgid/sticky (07777)
    uint32_t uid = 0, gid = 0;
    int64_t mtime = 0;        // seconds; the caller clamps
    uint64_t size = 0;        // regular files only
    std::string link_target;  // symlink text, or the hard link's target PATH (canonical absolute)
    std::vector<std::pair<std::string, std::string>> xattrs;  // name -> raw value, sorted by name
};

}  // namespace rootlock::image
