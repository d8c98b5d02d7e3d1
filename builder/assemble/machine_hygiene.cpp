// The fixed machine files of every image (see machine_hygiene.hpp for why each is there).
#include "assemble/machine_hygiene.hpp"

#include <string>
#include <utility>

namespace rootlock::assemble {

util::Status add_fixed_machine_files(fs::OverlayTree& tree) {
    const std::pair<const char*, const char*> k_files[] = {
        {"/etc/hostname", "localhost\n"},
        {"/etc/hosts",
         "127.0.0.1\tlocalhost\n::1\t\tlocalhost ip6-localhost ip6-loopback\n"
         "ff02::1\t\tip6-allnodes\nff02::2\t\tip6-allrouters\n"},
        {"/etc/resolv.conf", ""},
        {"/etc/machine-id", ""},
    };
    for (const auto& [path, content] : k_files) {
        auto added = tree.add_file(path, content);
        if (!added.ok())
            return added.error();
    }
    return util::ok_status();
}

}  // namespace rootlock::assemble
