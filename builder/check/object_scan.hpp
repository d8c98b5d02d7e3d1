// Finds the ELF objects a check covers and sorts them into the roles the loader gives them:
// programs (PT_INTERP), Python extension modules (loaded by an interpreter), and libraries.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "elf/elf_info.hpp"
#include "fs/file_tree.hpp"
#include "loader/target.hpp"

namespace rootlock::check {

enum class Role : uint8_t { program, extension, library };

struct ScannedObject {
    std::string path;  // canonical
    std::shared_ptr<const elf::ElfInfo> info;
    Role role = Role::library;
    int environment = -1;  // index of the Python environment holding it, -1 if none
};

struct Scan {
    std::vector<ScannedObject> objects;                            // sorted by path
    std::vector<std::pair<std::string, std::string>> bad_objects;  // path, problem
    std::map<std::string, std::vector<std::string>> by_soname;     // soname -> paths
    std::map<std::string, std::vector<std::string>> by_filename;   // file name -> paths
    size_t foreign = 0;  // objects of another class or machine, not checked
    // Those objects by soname and by file name -> (path, "x86_64 ELF64"): ld.so skips such a
    // file as if it were absent, so a missing library may name them as the copy it passed over.
    std::map<std::string, std::vector<std::pair<std::string, std::string>>> foreign_by_name;
};

// `site_dirs` are the site-packages directories (canonical) of the Python environments found,
// in environment order; an object below one is in that environment.
Scan scan_objects(const fs::FileTree& tree, const std::vector<std::string>& paths,
                  const loader::Target& target, const std::vector<std::string>& site_dirs);

// True for a file name CPython imports as an extension module
// ("_C.cpython-311-x86_64-linux-gnu.so", "foo.abi3.so", "bar.so").
bool is_extension_name(std::string_view name);

}  // namespace rootlock::check
