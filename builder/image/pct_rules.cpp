// pct's rules for a template: OS detection and the Debian/Ubuntu release checks modelled on
// pve-container's Setup.pm, plus the per-entry limits of its tar extraction.
#include "image/pct_rules.hpp"

#include <array>
#include <utility>

#include <fmt/format.h>

namespace rootlock::image {

namespace {

// The default map of an unprivileged container is u:0:100000:65536 (PVE::LXC::parse_id_maps).
constexpr uint32_t k_max_mapped_id = 65535;

// Setup/Debian.pm: a release below the minimum dies, one above the maximum only warns.
constexpr int k_debian_minimum = 4;
constexpr int k_debian_maximum = 14;
// Setup/Ubuntu.pm dies for an unknown release older than this major (systemd not cgroup v2 ready).
constexpr int k_ubuntu_minimum_major = 17;

struct NameMap {
    std::string_view from;
    std::string_view to;
};

constexpr std::array<std::string_view, 12> k_plugins = {
    "alpine", "archlinux", "centos",    "debian",   "devuan", "fedora",
    "gentoo", "nixos",     "openeuler", "opensuse", "ubuntu", "unmanaged"};

constexpr std::array<NameMap, 8> k_aliases = {{
    {"arch", "archlinux"},
    {"sles", "opensuse"},
    {"opensuse-leap", "opensuse"},
    {"opensuse-tumbleweed", "opensuse"},
    {"opensuse-slowroll", "opensuse"},
    {"rocky", "centos"},
    {"almalinux", "centos"},
    {"openEuler", "openeuler"},
}};

// Debian.pm's map for testing/unstable values and derivatives that carry no number.
constexpr std::array<NameMap, 8> k_debian_codenames = {{
    {"stretch/sid", "9.1"},
    {"buster/sid", "10"},
    {"bullseye/sid", "11"},
    {"bookworm/sid", "12"},
    {"trixie/sid", "13"},
    {"forky/sid", "14"},
    {"duke/sid", "15"},
    {"kali-rolling", "12"},
}};

// Ubuntu.pm's list of releases it knows.
constexpr std::array<std::string_view, 26> k_ubuntu_known = {
    "12.04", "14.04", "15.04", "15.10", "16.04", "16.10", "17.04", "17.10", "18.04",
    "18.10", "19.04", "19.10", "20.04", "20.10", "21.04", "21.10", "22.04", "22.10",
    "23.04", "23.10", "24.04", "24.10", "25.04", "25.10", "26.04", "26.10"};

// The release files of Setup.pm's fallback detection, in the order it tries them.
struct FallbackFile {
    std::string_view path;
    std::string_view distribution;
};
constexpr std::array<FallbackFile, 12> k_fallback_files = {{
    {"/etc/debian_version", "debian"},
    {"/etc/devuan_version", "devuan"},
    {"/etc/SuSE-brand", "opensuse"},
    {"/etc/SuSE-release", "opensuse"},
    {"/etc/fedora-release", "fedora"},
    {"/etc/centos-release", "centos"},
    {"/etc/redhat-release", "centos"},
    {"/etc/arch-release", "archlinux"},
    {"/etc/alpine-release", "alpine"},
    {"/etc/gentoo-release", "gentoo"},
    {"/etc/openEuler-release", "openeuler"},
    {"/nix/store", "nixos"},
}};

bool is_digit(char c) {
    return c >= '0' && c <= '9';
}
bool is_alnum(char c) {
    return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

char ascii_lower(char c) {
    return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

bool iequals(std::string_view a, std::string_view b) {
    if (a.size() != b.size())
        return false;
    for (size_t i = 0; i < a.size(); ++i) {
        if (ascii_lower(a[i]) != ascii_lower(b[i]))
            return false;
    }
    return true;
}

// Values from the root go into one-line messages: control bytes are shown escaped.
std::string printable(std::string_view text) {
    std::string out;
    for (char c : text) {
        auto byte = static_cast<unsigned char>(c);
        if (byte < 0x20 || byte == 0x7f)
            out += fmt::format("\\x{:02x}", byte);
        else
            out += c;
    }
    return out;
}

// "./dev/x", "dev/x/" and "/dev/x" all name /dev/x.
std::string normalise_path(std::string_view path) {
    while (path.starts_with("./"))
        path.remove_prefix(2);
    if (path == ".")
        path = "";
    while (path.size() > 1 && path.back() == '/')
        path.remove_suffix(1);
    std::string out = path.starts_with('/') ? std::string(path) : "/" + std::string(path);
    return out;
}

// Splits on '\n' as Perl's /m anchors see lines; a '\r' stays part of its line.
std::vector<std::string_view> split_lines(std::string_view text) {
    std::vector<std::string_view> lines;
    size_t start = 0;
    while (start < text.size()) {
        size_t end = text.find('\n', start);
        if (end == std::string_view::npos)
            end = text.size();
        lines.push_back(text.substr(start, end - start));
        start = end + 1;
    }
    return lines;
}

// Parses a double-quoted os-release value after its opening quote; nullopt when unterminated.
std::optional<std::string> parse_double_quoted(std::string_view rest) {
    std::string value;
    for (size_t i = 0; i < rest.size(); ++i) {
        char c = rest[i];
        if (c == '"')
            return value;
        if (c != '\\') {
            value += c;
            continue;
        }
        if (i + 1 >= rest.size())
            return std::nullopt;
        char next = rest[++i];
        switch (next) {
            case 'n':
                value += '\n';
                break;
            case 't':
                value += '\t';
                break;
            case '"':
            case '\'':
            case '`':
            case '$':
            case '\\':
                value += next;
                break;
            default:
                value += '\\';
                value += next;
        }
    }
    return std::nullopt;
}

class Checker {
  public:
    explicit Checker(const PctInput& input) : m_input(input) {}

    std::vector<PctFinding> run() {
        check_os();
        if (m_input.sh_machine.empty())
            fatal("/bin/sh",
                  "missing or not ELF: pct reads the container's architecture from its ELF "
                  "header");
        auto machine_id = read("/etc/machine-id");
        if (machine_id && !machine_id->empty())
            note("/etc/machine-id", "not empty: pct deletes it at create; ship it empty");
        for (const auto& entry : m_input.entries)
            check_entry(entry);
        return std::move(m_findings);
    }

  private:
    void fatal(std::string path, std::string problem) {
        m_findings.push_back({std::move(path), std::move(problem), true});
    }
    void note(std::string path, std::string problem) {
        m_findings.push_back({std::move(path), std::move(problem), false});
    }

    std::optional<std::string> read(std::string_view path) const {
        if (!m_input.read_small_file)
            return std::nullopt;
        return m_input.read_small_file(path);
    }

    bool is_directory(std::string_view path) const {
        for (const auto& entry : m_input.entries) {
            if (entry.kind == 'd' && normalise_path(entry.path) == path)
                return true;
        }
        return false;
    }

    static bool has_ubuntu_id(std::string_view lsb) {
        for (auto line : split_lines(lsb)) {
            if (iequals(line, "DISTRIB_ID=Ubuntu"))
                return true;
        }
        return false;
    }

    // Setup.pm's fallback: which release file names the distribution, and which file it was.
    std::optional<FallbackFile> detect_by_files() const {
        auto lsb = read("/etc/lsb-release");
        if (lsb && has_ubuntu_id(*lsb))
            return FallbackFile{"/etc/lsb-release", "ubuntu"};
        for (const auto& candidate : k_fallback_files) {
            bool present = candidate.distribution == "nixos" ? is_directory(candidate.path)
                                                             : read(candidate.path).has_value();
            if (present)
                return candidate;
        }
        return std::nullopt;
    }

    void check_os() {
        std::string os_path = "/etc/os-release";
        auto text = read(os_path);
        if (!text) {
            os_path = "/usr/lib/os-release";
            text = read(os_path);
        }
        if (!text) {
            note("/etc/os-release",
                 "missing (and no /usr/lib/os-release): pct will treat the container as "
                 "unmanaged");
            return;
        }
        auto id = os_release_value(*text, "ID");
        // Perl's truth: an empty ID and "0" both fall through to the release files.
        bool has_id = id && !id->empty() && *id != "0";
        std::optional<std::string> distribution;
        if (has_id)
            distribution = pct_distribution_for_id(*id);
        if (!distribution) {
            auto fallback = detect_by_files();
            std::string what = has_id ? "ID=" + printable(*id) + " is not a distribution pct knows"
                                      : std::string("no ID");
            if (!fallback) {
                fatal(os_path, has_id ? what
                                      : what +
                                            ", and none of the release files pct's fallback "
                                            "detection looks for");
                return;
            }
            note(os_path, fmt::format("{}; pct detects {} from {}", what, fallback->distribution,
                                      fallback->path));
            distribution = std::string(fallback->distribution);
        }
        if (*distribution == "debian")
            check_debian();
        else if (*distribution == "ubuntu")
            check_ubuntu();
    }

    void check_debian() {
        const std::string path = "/etc/debian_version";
        auto text = read(path);
        if (!text) {
            fatal(path, "missing: pct's Debian setup reads the release from it");
            return;
        }
        if (text->empty()) {
            fatal(path, "empty: pct's Debian setup reads the release from it");
            return;
        }
        std::string_view line = *text;
        line = line.substr(0, line.find('\n'));
        std::string_view version = line;
        for (const auto& codename : k_debian_codenames) {
            if (codename.from == line)
                version = codename.to;
        }
        size_t digits = 0;
        while (digits < version.size() && is_digit(version[digits]))
            ++digits;
        if (digits == 0) {
            fatal(path, fmt::format("release \"{}\" is not a number pct's Debian setup can read",
                                    printable(line)));
            return;
        }
        // Perl's int(): leading zeros do not count; a major of more than seven digits is read
        // as its first seven, which is newer than tested all the same.
        size_t first = 0;
        while (first + 1 < digits && version[first] == '0')
            ++first;
        int major = 0;
        for (size_t i = first; i < digits && i < first + 7; ++i)
            major = major * 10 + (version[i] - '0');
        if (major < k_debian_minimum) {
            fatal(path, fmt::format("Debian {} is older than pct's minimum ({})", major,
                                    k_debian_minimum));
        } else if (major > k_debian_maximum) {
            note(path, fmt::format("Debian {} is newer than pct's tested maximum ({}); pct warns",
                                   major, k_debian_maximum));
        }
    }

    void check_ubuntu() {
        const std::string path = "/etc/lsb-release";
        auto text = read(path);
        if (!text) {
            fatal(path, "missing: pct's Ubuntu setup reads the release from it");
            return;
        }
        if (!has_ubuntu_id(*text)) {
            fatal(path, "no DISTRIB_ID=Ubuntu line: pct's Ubuntu setup refuses the container");
            return;
        }
        std::optional<std::string_view> release;
        constexpr std::string_view key = "DISTRIB_RELEASE=";
        for (auto line : split_lines(*text)) {
            if (line.size() < key.size() || !iequals(line.substr(0, key.size()), key))
                continue;
            auto value = line.substr(key.size());
            size_t dot = value.find('.');
            auto all_digits = [](std::string_view part) {
                if (part.empty())
                    return false;
                for (char c : part) {
                    if (!is_digit(c))
                        return false;
                }
                return true;
            };
            if (dot != std::string_view::npos && all_digits(value.substr(0, dot)) &&
                all_digits(value.substr(dot + 1))) {
                release = value;
                break;
            }
        }
        if (!release) {
            fatal(path,
                  "no DISTRIB_RELEASE=NN.NN line: pct's Ubuntu setup cannot read the release");
            return;
        }
        for (auto known : k_ubuntu_known) {
            if (known == *release)
                return;
        }
        std::string_view major_text = release->substr(0, release->find('.'));
        // Leading zeros ("017.04") still compare by value, as Perl's int() does.
        while (major_text.size() > 1 && major_text.front() == '0')
            major_text.remove_prefix(1);
        bool ancient =
            major_text.size() < 2 ||
            (major_text.size() == 2 &&
             (major_text[0] - '0') * 10 + (major_text[1] - '0') < k_ubuntu_minimum_major);
        if (ancient)
            fatal(path, fmt::format("Ubuntu {} is not in pct's list and older than {}.04: pct "
                                    "refuses it",
                                    *release, k_ubuntu_minimum_major));
        else
            note(path, fmt::format("Ubuntu {} is not in pct's list of known releases; pct warns",
                                   *release));
    }

    void check_entry(const RootfsEntryFacts& entry) {
        const std::string path = normalise_path(entry.path);
        if (pct_drops_entry(path)) {
            note(entry.path, "left out: pct extracts nothing below /dev");
            return;
        }
        if (entry.uid > k_max_mapped_id)
            fatal(entry.path,
                  fmt::format("owner {} cannot be mapped in an unprivileged container", entry.uid));
        if (entry.gid > k_max_mapped_id)
            fatal(entry.path,
                  fmt::format("group {} cannot be mapped in an unprivileged container", entry.gid));
        switch (entry.kind) {
            case 'f':
            case 'd':
            case 'l':
            case 'h':
            case 'p':
                break;
            case 'c':
                fatal(entry.path,
                      "character device outside /dev: mknod fails in an unprivileged container");
                break;
            case 'b':
                fatal(entry.path,
                      "block device outside /dev: mknod fails in an unprivileged container");
                break;
            case 's':
                fatal(entry.path, "socket: a tar archive cannot hold one");
                break;
            default:
                fatal(entry.path, fmt::format("unknown entry kind '{}'",
                                              printable(std::string_view(&entry.kind, 1))));
        }
        for (const auto& name : entry.xattr_names) {
            if (!pct_keeps_xattr(name))
                note(entry.path, fmt::format("xattr {} dropped: pct extracts only user.* and "
                                             "security.capability",
                                             printable(name)));
        }
    }

    const PctInput& m_input;
    std::vector<PctFinding> m_findings;
};

}  // namespace

std::optional<std::string> os_release_value(std::string_view text, std::string_view key) {
    std::optional<std::string> value;
    for (auto line : split_lines(text)) {
        size_t pos = 0;
        while (pos < line.size() && (line[pos] == ' ' || line[pos] == '\t' || line[pos] == '\r' ||
                                     line[pos] == '\f' || line[pos] == '\v'))
            ++pos;
        if (!line.substr(pos).starts_with(key) || pos + key.size() >= line.size() ||
            line[pos + key.size()] != '=')
            continue;
        std::string_view content = line.substr(pos + key.size() + 1);
        // Setup.pm tries single quotes, then double quotes, then a bare word; an unterminated
        // quote falls through to the bare word, which is then empty.
        std::optional<std::string> parsed;
        if (content.starts_with('\'')) {
            size_t close = content.find('\'', 1);
            if (close != std::string_view::npos)
                parsed = std::string(content.substr(1, close - 1));
        } else if (content.starts_with('"')) {
            parsed = parse_double_quoted(content.substr(1));
        }
        if (!parsed) {
            size_t end = 0;
            while (end < content.size() && is_alnum(content[end]))
                ++end;
            parsed = std::string(content.substr(0, end));
        }
        value = std::move(parsed);
    }
    return value;
}

std::optional<std::string> pct_distribution_for_id(std::string_view id) {
    for (auto plugin : k_plugins) {
        if (plugin == id)
            return std::string(plugin);
    }
    for (const auto& alias : k_aliases) {
        if (alias.from == id)
            return std::string(alias.to);
    }
    return std::nullopt;
}

bool pct_drops_entry(std::string_view path) {
    return normalise_path(path).starts_with("/dev/");
}

bool pct_keeps_xattr(std::string_view name) {
    return name.starts_with("user.") || name == "security.capability";
}

std::vector<PctFinding> check_pct_rules(const PctInput& input) {
    return Checker(input).run();
}

}  // namespace rootlock::image
