// What Proxmox's `pct create` needs from a rootfs tarball (pve-container's Setup.pm and its
// Debian/Ubuntu plugins, pve-storage's tar flags), checked over facts about the entries before
// the builder writes it, so that a template pct would refuse never leaves the build.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rootlock::image {

// One entry of the rootfs as the builder is about to write it. `path` is absolute inside the
// root ("/etc/os-release", "/" for the root); "./etc/os-release" and "etc/os-release" are read
// the same way, and findings repeat the path as given.
struct RootfsEntryFacts {
    std::string path;
    // 'f' file, 'd' directory, 'l' symlink, 'h' hard link, 'c'/'b' character/block device,
    // 'p' fifo, 's' socket
    char kind = 'f';
    uint32_t uid = 0;
    uint32_t gid = 0;
    uint32_t mode = 0;
    std::vector<std::string> xattr_names;
};

// `fatal`: pct would refuse the template, or extracting it fails; otherwise a note on something
// the builder changes or pct will do differently.
struct PctFinding {
    std::string path;
    std::string problem;
    bool fatal = false;

    bool operator==(const PctFinding&) const = default;
};

struct PctInput {
    std::vector<RootfsEntryFacts> entries;
    // The content of a regular file in the root, following symlinks inside it (Debian's
    // /etc/os-release links to ../usr/lib/os-release); nullopt when it is missing or not a
    // regular file, which is what pct's `-f` tests see. Asked only for /etc/os-release,
    // /usr/lib/os-release, /etc/lsb-release, /etc/machine-id and the release files of pct's
    // fallback detection (/etc/debian_version, ...).
    std::function<std::optional<std::string>(std::string_view path)> read_small_file;
    // The ELF machine of /bin/sh as the loader names it ("x86_64"); "" when /bin/sh is missing
    // or not ELF.
    std::string sh_machine;
};

// Every rule at once: first the root's (OS detection as Setup.pm does it and the release checks
// of the Debian and Ubuntu plugins, /bin/sh, /etc/machine-id), then each entry's in input order.
// The per-entry rules describe what the builder does so that pct accepts the tarball:
// - everything below /dev is left out (pct's `--anchored --exclude ./dev/*` skips it anyway and
//   LXC mounts its own /dev), keeping /dev as an empty directory; one note per entry left out;
// - extended attributes other than user.* and security.capability are dropped (pct's tar
//   extracts only those; POSIX ACLs travel separately), one note per attribute;
// - a uid or gid above 65535 is fatal: the default map of an unprivileged container
//   (u:0:100000:65536) cannot hold it, so extracting the entry fails;
// - character and block devices outside /dev are fatal: mknod fails in an unprivileged
//   container; a socket is fatal: a tar archive cannot hold one. FIFOs are fine: mkfifo needs no
//   privilege.
// Release checks of the other distributions' plugins (CentOS, Alpine, ...) are not modelled.
std::vector<PctFinding> check_pct_rules(const PctInput& input);

// True for an entry the builder leaves out of the tarball: anything below /dev (not /dev itself).
bool pct_drops_entry(std::string_view path);

// True for an extended attribute pct's tar extracts: user.* and security.capability.
bool pct_keeps_xattr(std::string_view name);

// The distribution pct's Setup.pm picks for an os-release ID (aliases resolved: "rocky" ->
// "centos", "sles" -> "opensuse"); nullopt for an ID it has no plugin for.
std::optional<std::string> pct_distribution_for_id(std::string_view id);

// The value of `key` in an os-release file, read the way Setup.pm's parser does: the last
// `KEY=` line wins; 'single' and "double" quotes (with \" \$ \\ \` \' \n \t escapes), and an
// unquoted value is its leading run of letters and digits ("opensuse-leap" gives "opensuse").
std::optional<std::string> os_release_value(std::string_view text, std::string_view key);

}  // namespace rootlock::image
