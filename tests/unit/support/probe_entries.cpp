// write_probe_entries(); see probe_entries.hpp.
#include "support/probe_entries.hpp"

#include <sys/stat.h>

#include <filesystem>
#include <stdexcept>
#include <string>

namespace rootlock::testing {

void write_probe_entries(const TempDir& root) {
    std::filesystem::copy_file("/lib/x86_64-linux-gnu/libz.so.1", root / "libz.so.1");
    root.write_file("text", std::string(100, 'x'));
    root.write_file("empty", "");
    // ELF magic with nothing after it: parsed, and refused with the reader's reason.
    root.write_file("torn.so", std::string("\x7f"
                                           "ELF\x02\x01\x01",
                                           7) +
                                   std::string(57, '\0'));
    root.make_symlink("link.so", "libz.so.1");
    root.make_dirs("dir.so");
    if (::mkfifo((root / "fifo.so").c_str(), 0644) != 0)
        throw std::runtime_error("mkfifo " + (root / "fifo.so") + " failed");
}

}  // namespace rootlock::testing
