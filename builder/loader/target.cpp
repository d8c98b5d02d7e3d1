// Target detection from the root's own binaries and the per-machine facts of Debian's glibc
// (multiarch triplets, interpreters, ld.so.cache flags), plus the hwcaps subdirectory order.
#include "loader/target.hpp"

#include <fmt/format.h>

#include "fs/path_resolve.hpp"

namespace rootlock::loader {

namespace {
// ld.so.cache flag values from glibc's dl-cache.h.
constexpr int32_t k_flag_elf_libc6 = 0x0003;
constexpr int32_t k_flag_x8664_lib64 = 0x0300;
constexpr int32_t k_flag_aarch64_lib64 = 0x0a00;

Target debian_target(std::string triplet, std::string interpreter) {
    Target target;
    target.lib_token = "lib/" + triplet;
    target.interpreter = std::move(interpreter);
    target.default_dirs = {"/lib/" + triplet, "/usr/lib/" + triplet, "/lib", "/usr/lib"};
    return target;
}
}  // namespace

util::Result<Target> target_for_machine(elf::ElfClass elf_class, uint16_t machine) {
    Target target;
    if (machine == elf::k_machine_x86_64 && elf_class == elf::ElfClass::elf64) {
        target = debian_target("x86_64-linux-gnu", "/lib64/ld-linux-x86-64.so.2");
        target.cache_flags = k_flag_elf_libc6 | k_flag_x8664_lib64;
    } else if (machine == elf::k_machine_aarch64 && elf_class == elf::ElfClass::elf64) {
        target = debian_target("aarch64-linux-gnu", "/lib/ld-linux-aarch64.so.1");
        target.cache_flags = k_flag_elf_libc6 | k_flag_aarch64_lib64;
    } else if (machine == elf::k_machine_386 && elf_class == elf::ElfClass::elf32) {
        target = debian_target("i386-linux-gnu", "/lib/ld-linux.so.2");
        target.cache_flags = k_flag_elf_libc6;
    } else {
        return util::make_error("",
                                fmt::format("unsupported target: {} {}", elf::class_name(elf_class),
                                            elf::machine_name(machine)));
    }
    target.elf_class = elf_class;
    target.machine = machine;
    return target;
}

util::Result<Target> detect_target(const fs::FileTree& tree, const TargetOverrides& overrides) {
    static const char* const k_probes[] = {"/bin/sh", "/usr/bin/env", "/lib64/ld-linux-x86-64.so.2",
                                           "/lib/ld-linux-aarch64.so.1", "/lib/ld-linux.so.2"};
    for (const char* probe : k_probes) {
        auto resolved = fs::resolve(tree, probe);
        if (!resolved || resolved->stat.kind != fs::NodeKind::regular)
            continue;
        fs::ElfProbe elf = tree.probe_elf(resolved->path);
        if (elf.outcome != fs::ElfProbe::Outcome::elf)
            continue;
        auto target = target_for_machine(elf.info->elf_class, elf.info->machine);
        if (!target)
            return target.error();
        target->hwcaps = overrides.hwcaps;
        target->platform = overrides.platform;
        return target;
    }
    return util::make_error(tree.describe(),
                            "cannot tell the target machine: no ELF /bin/sh or dynamic loader "
                            "in the root");
}

std::vector<std::string> hwcaps_subdirs(const Target& target) {
    std::vector<std::string> subdirs;
    for (const auto& level : target.hwcaps)
        subdirs.push_back("glibc-hwcaps/" + level);
    // glibc 2.36 still tries the legacy subdirectories made of "tls", the platform and the
    // important hwcap names; they are known only when the platform is named.
    if (target.platform) {
        std::vector<std::string> parts{"tls", *target.platform};
        parts.insert(parts.end(), target.legacy_hwcaps.begin(), target.legacy_hwcaps.end());
        const size_t count = parts.size();
        for (size_t mask = (size_t{1} << count) - 1; mask > 0; --mask) {
            std::string subdir;
            for (size_t bit = 0; bit < count; ++bit) {
                if ((mask & (size_t{1} << (count - 1 - bit))) == 0)
                    continue;
                if (!subdir.empty())
                    subdir += '/';
                subdir += parts[bit];
            }
            subdirs.push_back(subdir);
        }
    }
    return subdirs;
}

}  // namespace rootlock::loader
