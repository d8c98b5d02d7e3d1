// The host helpers several unit tests need: a whole file read, a shell command run, files
// counted, compressible bytes made. Tests that
// ask real tools (gzip, zstd, skopeo, umoci) go through these rather than copies of their own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

namespace rootlock::testing {

// The file's bytes as text; "" when it cannot be read (the comparison then fails visibly).
// (support/elf_writer's read_host_file gives bytes and throws.)
std::string read_host_text(const std::string& path);

// stdout and stderr of `command` under /bin/sh, and its wait status (-1: popen failed).
std::pair<std::string, int> run_shell(const std::string& command);

// Whether `tool` is on PATH.
bool have_tool(const std::string& tool);

// How many regular files lie below `folder` (0 when it does not exist).
size_t files_under(const std::string& folder);

// `size` bytes that compress somewhat (an LCG over a small alphabet), the same for one seed on
// every run.
std::string pseudo_text(size_t size, uint32_t seed);

}  // namespace rootlock::testing
