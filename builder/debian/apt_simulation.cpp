// `apt-get --simulate` output: the "Inst" lines that name each package apt would unpack, read
// into a sorted, unique package set; everything else apt prints (Conf, Remv, notes) is ignored.
#include "debian/apt_simulation.hpp"

#include <algorithm>
#include <optional>
#include <tuple>
#include <utility>

#include "debian/deb_version.hpp"
#include "debian/text_checks.hpp"

namespace rootlock::debian {

namespace {

// "NAME[:ARCH] [OLD] (VERSION ORIGIN... [ARCH]) [BREAKS]" after "Inst "; nullopt when the line
// has another shape. Origins ("Debian:12.15/oldstable", several after ", ") are not kept.
std::optional<SimulatedInstall> parse_inst(std::string_view rest) {
    const size_t name_end = rest.find(' ');
    if (name_end == std::string_view::npos)
        return std::nullopt;
    std::string_view name = rest.substr(0, name_end);
    if (const size_t colon = name.find(':'); colon != std::string_view::npos)
        name = name.substr(0, colon);  // "libc6:i386": the architecture also stands in brackets
    if (!is_package_name(name))
        return std::nullopt;
    rest = trim_blanks(rest.substr(name_end));
    if (!rest.empty() && rest.front() == '[') {  // the version being upgraded from
        const size_t close = rest.find(']');
        if (close == std::string_view::npos)
            return std::nullopt;
        rest = trim_blanks(rest.substr(close + 1));
    }
    if (rest.empty() || rest.front() != '(')
        return std::nullopt;
    const size_t close = rest.find(')');
    if (close == std::string_view::npos)
        return std::nullopt;
    const auto words = split_blanks(rest.substr(1, close - 1));
    if (words.size() < 2)
        return std::nullopt;
    const std::string_view arch = words.back();
    if (arch.size() < 3 || arch.front() != '[' || arch.back() != ']')
        return std::nullopt;
    const std::string_view architecture = arch.substr(1, arch.size() - 2);
    if (!is_architecture_name(architecture) || !parse_deb_version(words.front()).ok())
        return std::nullopt;
    return SimulatedInstall{std::string(name), std::string(words.front()),
                            std::string(architecture)};
}

}  // namespace

util::Result<std::vector<SimulatedInstall>> parse_apt_simulation(std::string_view output) {
    std::vector<SimulatedInstall> installs;
    for (std::string_view line : split_lines(output)) {
        if (!line.empty() && line.back() == '\r')
            line.remove_suffix(1);
        if (line.substr(0, 5) != "Inst ")
            continue;
        auto install = parse_inst(line.substr(5));
        if (!install)
            return util::make_error("apt", "unexpected line " + util::quote(line));
        installs.push_back(std::move(*install));
    }
    std::sort(installs.begin(), installs.end(), [](const auto& a, const auto& b) {
        return std::tie(a.name, a.architecture, a.version) <
               std::tie(b.name, b.architecture, b.version);
    });
    installs.erase(std::unique(installs.begin(), installs.end()), installs.end());
    for (size_t i = 1; i < installs.size(); ++i) {
        const SimulatedInstall& a = installs[i - 1];
        const SimulatedInstall& b = installs[i];
        if (a.name == b.name && a.architecture == b.architecture) {
            return util::make_error("apt", util::quote(a.name) + " (" + a.architecture +
                                               ") is installed at both " + util::quote(a.version) +
                                               " and " + util::quote(b.version));
        }
    }
    return installs;
}

}  // namespace rootlock::debian
