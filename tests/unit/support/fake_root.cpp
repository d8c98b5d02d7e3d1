// make_fake_root() and friends; see fake_root.hpp.
#include "support/fake_root.hpp"

namespace rootlock::testing {

ElfSpec library_spec(const std::string& soname, std::vector<std::string> needed) {
    ElfSpec spec;
    spec.soname = soname;
    spec.needed = std::move(needed);
    return spec;
}

ElfSpec program_spec(std::vector<std::string> needed) {
    ElfSpec spec;
    spec.type = elf::k_type_dyn;
    spec.interpreter = "/lib64/ld-linux-x86-64.so.2";
    spec.needed = std::move(needed);
    spec.flags_1 = elf::k_df_1_pie;
    return spec;
}

void add_elf(fs::MemoryTree& tree, const std::string& path, const ElfSpec& spec) {
    tree.add_file(path, build_elf(spec), 0755);
}

std::unique_ptr<fs::MemoryTree> make_fake_root() {
    auto tree = std::make_unique<fs::MemoryTree>();
    tree->add_dir("/usr/lib/x86_64-linux-gnu");
    tree->add_dir("/usr/bin");
    tree->add_symlink("/lib", "usr/lib");
    tree->add_symlink("/bin", "usr/bin");
    tree->add_dir("/lib64");
    add_elf(*tree, "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2",
            library_spec("ld-linux-x86-64.so.2"));
    tree->add_symlink("/lib64/ld-linux-x86-64.so.2", "/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2");
    ElfSpec libc = library_spec("libc.so.6", {"ld-linux-x86-64.so.2"});
    libc.version_defs = {{"GLIBC_2.2.5", 2, 0, {}}, {"GLIBC_2.34", 3, 0, {}}};
    add_elf(*tree, "/usr/lib/x86_64-linux-gnu/libc.so.6", libc);
    ElfSpec sh = program_spec({"libc.so.6"});
    sh.version_needs = {{"libc.so.6", {{"GLIBC_2.2.5", 2, false}}}};
    add_elf(*tree, "/usr/bin/sh", sh);
    return tree;
}

}  // namespace rootlock::testing
