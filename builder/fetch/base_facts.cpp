// Reads the target facts from a base root with the same loader model the checker uses, so the
// glibc a lock is made for is the one the base's Python really binds to.
#include "fetch/base_facts.hpp"

#include <charconv>

#include "loader/root_model.hpp"
#include "loader/session.hpp"
#include "loader/target.hpp"

namespace rootlock::fetch {

namespace {

std::optional<int> to_int(std::string_view text) {
    int value = 0;
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size() || text.empty())
        return std::nullopt;
    return value;
}

// Wheel tags know these architectures (PEP 600 manylinux); others get no binary wheels.
bool has_wheel_tags(std::string_view arch) {
    return arch == "x86_64" || arch == "aarch64" || arch == "i686" || arch == "ppc64le" ||
           arch == "s390x" || arch == "armv7l";
}

}  // namespace

std::pair<int, int> highest_glibc(const std::vector<std::string>& version_names) {
    std::pair<int, int> best{0, 0};
    for (const auto& name : version_names) {
        std::string_view text(name);
        if (text.substr(0, 6) != "GLIBC_")
            continue;
        text.remove_prefix(6);
        const size_t dot = text.find('.');
        if (dot == std::string_view::npos)
            continue;
        std::string_view minor_text = text.substr(dot + 1);
        // "GLIBC_2.2.5": the third number does not change the manylinux level.
        const size_t second_dot = minor_text.find('.');
        if (second_dot != std::string_view::npos)
            minor_text = minor_text.substr(0, second_dot);
        auto major = to_int(text.substr(0, dot));
        auto minor = to_int(minor_text);
        if (major && minor && std::pair{*major, *minor} > best)
            best = {*major, *minor};
    }
    return best;
}

std::string dpkg_upstream_version(std::string_view status_text, std::string_view package) {
    // Paragraphs separated by blank lines; fields "Package:", "Status:", "Version:".
    size_t start = 0;
    while (start < status_text.size()) {
        size_t end = status_text.find("\n\n", start);
        if (end == std::string_view::npos)
            end = status_text.size();
        std::string_view paragraph = status_text.substr(start, end - start);
        start = end + 2;
        std::string_view name, status, version;
        size_t line_start = 0;
        while (line_start < paragraph.size()) {
            size_t line_end = paragraph.find('\n', line_start);
            if (line_end == std::string_view::npos)
                line_end = paragraph.size();
            std::string_view line = paragraph.substr(line_start, line_end - line_start);
            line_start = line_end + 1;
            auto field = [&](std::string_view key) -> std::optional<std::string_view> {
                if (line.substr(0, key.size()) != key)
                    return std::nullopt;
                std::string_view value = line.substr(key.size());
                while (!value.empty() && value.front() == ' ')
                    value.remove_prefix(1);
                return value;
            };
            if (auto v = field("Package:"))
                name = *v;
            else if (auto s = field("Status:"))
                status = *s;
            else if (auto w = field("Version:"))
                version = *w;
        }
        if (name != package || status.find("installed") == std::string_view::npos ||
            status.find("not-installed") != std::string_view::npos)
            continue;
        if (const size_t colon = version.find(':'); colon != std::string_view::npos)
            version.remove_prefix(colon + 1);
        const size_t end_of_upstream = version.find_first_of("-+~");
        return std::string(version.substr(0, end_of_upstream));
    }
    return "";
}

util::Result<BaseFacts> read_base_facts(const fs::FileTree& tree, const std::string& python_version,
                                        const std::string& base) {
    BaseFacts facts;
    auto target = loader::detect_target(tree, {});
    if (!target.ok())
        return util::make_error(base, target.error().text());
    facts.arch = elf::machine_name(target->machine);
    if (target->machine == elf::k_machine_386)
        facts.arch = "i686";
    if (!has_wheel_tags(facts.arch))
        return util::make_error(base,
                                "architecture " + facts.arch + " has no manylinux wheel tags");

    facts.python_interpreter = "/usr/bin/python" + python_version;
    auto model = loader::open_root_model(tree, {});
    if (!model.ok())
        return util::make_error(base, model.error().text());
    loader::LoadSession session(*model->context);
    if (!session.load_main(facts.python_interpreter, true)) {
        return util::make_error(base, "no Python " + python_version + " interpreter at " +
                                          facts.python_interpreter +
                                          " (the recipe's [python] version must be the base's)");
    }
    const int libc = session.find_by_name("libc.so.6");
    if (libc < 0 || !session.objects()[static_cast<size_t>(libc)].info)
        return util::make_error(base, facts.python_interpreter + " does not load libc.so.6 here");
    std::vector<std::string> names;
    for (const auto& def : session.objects()[static_cast<size_t>(libc)].info->version_defs)
        names.push_back(def.name);
    auto [major, minor] = highest_glibc(names);
    if (major == 0)
        return util::make_error(base, "libc.so.6 defines no GLIBC_2.N versions");
    facts.glibc_major = major;
    facts.glibc_minor = minor;

    auto status = tree.read_file("/var/lib/dpkg/status");
    if (status.ok())
        facts.python_full = dpkg_upstream_version(*status, "python" + python_version);
    return facts;
}

}  // namespace rootlock::fetch
