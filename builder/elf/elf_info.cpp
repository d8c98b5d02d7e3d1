// Small queries over ElfInfo and the names reports use for machines and classes.
#include "elf/elf_info.hpp"

#include <fmt/format.h>

namespace rootlock::elf {

bool ElfInfo::defines_version(const std::string& version) const {
    for (const auto& def : version_defs) {
        if (!def.is_base() && def.name == version)
            return true;
    }
    return false;
}

std::string machine_name(uint16_t machine) {
    switch (machine) {
        case k_machine_x86_64:
            return "x86_64";
        case k_machine_aarch64:
            return "aarch64";
        case k_machine_386:
            return "i386";
        case k_machine_arm:
            return "arm";
        case k_machine_riscv:
            return "riscv";
        case k_machine_ppc64:
            return "ppc64";
        case k_machine_s390:
            return "s390";
        default:
            return fmt::format("machine {}", machine);
    }
}

std::string class_name(ElfClass elf_class) {
    return elf_class == ElfClass::elf32 ? "ELFCLASS32" : "ELFCLASS64";
}

}  // namespace rootlock::elf
