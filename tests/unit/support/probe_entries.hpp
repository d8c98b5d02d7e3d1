// The entries a probe of "a regular file the listing saw" must classify whatever they have
// become by the time they are opened, written into a test's directory: shared by the tests of
// DirectoryTree's single probes and of the batched header reads.
#pragma once

#include "support/temp_dir.hpp"

namespace rootlock::testing {

// Writes, directly in `root`: libz.so.1 (the host's, a real ELF object), text (100 bytes that
// are not ELF), empty, torn.so (ELF magic and nothing a reader can parse), link.so (a symlink
// to libz.so.1), dir.so (a directory) and fifo.so (a FIFO: opened without O_NONBLOCK, a probe
// would hang). Throws std::runtime_error when the FIFO cannot be made.
void write_probe_entries(const TempDir& root);

}  // namespace rootlock::testing
