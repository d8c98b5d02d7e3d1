// A minimal Debian-shaped root in memory (an interpreter, libc with its versions, /bin/sh) and a
// helper that drops test-writer ELF objects into it, for loader and checker tests.
#pragma once

#include <memory>
#include <string>

#include "fs/memory_tree.hpp"
#include "support/elf_writer.hpp"

namespace rootlock::testing {

// /lib64/ld-linux-x86-64.so.2 -> the interpreter in /lib/x86_64-linux-gnu, libc.so.6 defining
// GLIBC_2.2.5 and GLIBC_2.34, /bin/sh needing libc, and no ld.so.cache.
std::unique_ptr<fs::MemoryTree> make_fake_root();

// An ET_DYN library with `soname`, `needed` and the given search tags, needing nothing versioned.
ElfSpec library_spec(const std::string& soname, std::vector<std::string> needed = {});

// An executable with the Debian x86_64 interpreter.
ElfSpec program_spec(std::vector<std::string> needed);

void add_elf(fs::MemoryTree& tree, const std::string& path, const ElfSpec& spec);

}  // namespace rootlock::testing
