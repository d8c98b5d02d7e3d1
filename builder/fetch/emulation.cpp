// binfmt_misc's registration files are read, never written: enabling emulation changes the whole
// machine, which is the user's call (the message gives the commands).
#include "fetch/emulation.hpp"

#include <sys/utsname.h>

#include "util/atomic_file.hpp"

namespace rootlock::fetch {

std::string qemu_cpu(const std::string& debian_architecture) {
    if (debian_architecture == "arm64")
        return "aarch64";
    if (debian_architecture == "armhf" || debian_architecture == "armel")
        return "arm";
    if (debian_architecture == "ppc64el")
        return "ppc64le";
    if (debian_architecture == "amd64")
        return "x86_64";
    return debian_architecture;  // i386, s390x, riscv64 are qemu's names too
}

std::string host_machine() {
    utsname names{};
    if (::uname(&names) != 0)
        return "";
    return names.machine;
}

util::Status check_emulation(const std::string& architecture, const std::string& variant,
                             const std::string& host_machine, const std::string& binfmt_dir) {
    if (variant == "extract")
        return util::ok_status();
    const std::string cpu = qemu_cpu(architecture);
    if (cpu == host_machine || (host_machine == "x86_64" && architecture == "i386") ||
        (host_machine == "aarch64" && (architecture == "armhf" || architecture == "armel")))
        return util::ok_status();
    auto registered = util::read_host_file(binfmt_dir + "/qemu-" + cpu);
    if (registered && registered->rfind("enabled", 0) == 0)
        return util::ok_status();
    std::string why = registered ? "qemu-" + cpu + " is registered with binfmt_misc but disabled"
                                 : "no qemu-" + cpu + " is registered with binfmt_misc";
    return util::make_error(
        "base.debian.arch " + architecture,
        "mmdebstrap's " + variant + " variant runs " + architecture +
            " maintainer scripts, and this " + host_machine + " host cannot run " + architecture +
            " programs (" + why +
            "): apt-get install qemu-user-static binfmt-support arch-test, "
            "then mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc; update-binfmts "
            "--enable qemu-" +
            cpu + " (or set variant = \"extract\", which runs nothing)");
}

}  // namespace rootlock::fetch
