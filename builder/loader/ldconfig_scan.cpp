// ldconfig's directory scan over a FileTree, after glibc 2.36's elf/ldconfig.c (add_dir_1,
// add_glibc_hwcaps_subdirectories, search_dir) and elf/readelflib.c with the x86 wrapper.
#include "loader/ldconfig_scan.hpp"

#include <algorithm>
#include <array>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "fs/path_resolve.hpp"
#include "loader/ld_so_conf.hpp"

namespace rootlock::loader {

namespace {

struct NamedBit {
    std::string_view name;
    int bit;
};

// x86's legacy hwcap names (_dl_string_hwcap; all three are in HWCAP_IMPORTANT, so ldconfig
// descends into them) and platforms (_dl_string_platform, from bit 48). Observed with Debian
// 12's ldconfig: sse2 -> 0x1, x86_64 -> 0x2, avx512_1 -> 0x4, i686 -> 1 << 49, xeon_phi -> 1 << 51.
constexpr std::array<NamedBit, 7> k_x86_hwcaps = {{{"sse2", 0},
                                                   {"x86_64", 1},
                                                   {"avx512_1", 2},
                                                   {"i586", 48},
                                                   {"i686", 49},
                                                   {"haswell", 50},
                                                   {"xeon_phi", 51}}};
constexpr int k_tls_bit = 63;

bool is_x86(uint16_t machine) {
    return machine == elf::k_machine_x86_64 || machine == elf::k_machine_386;
}

// The bit a directory name stands for, or -1 (is_hwcap_platform and path_hwcap).
int hwcap_bit(std::string_view name, uint16_t machine) {
    if (name == "tls")
        return k_tls_bit;
    if (is_x86(machine)) {
        for (const auto& entry : k_x86_hwcaps) {
            if (entry.name == name)
                return entry.bit;
        }
    }
    return -1;
}

// readlib.c's known interpreters and libraries: seeing one makes a plain ELF object libc6.
constexpr std::array<std::string_view, 4> k_libc6_interpreters = {
    "/lib/ld-linux.so.2", "/libx32/ld-linux-x32.so.2", "/lib64/ld-linux-x86-64.so.2",
    "/lib/ld-linux-x86-64.so.2"};
constexpr std::array<std::string_view, 2> k_libc6_libraries = {"libc.so.6", "libm.so.6"};

int32_t generic_flags(const elf::ElfInfo& info) {
    auto known = [](const auto& list, std::string_view name) {
        return std::find(list.begin(), list.end(), name) != list.end();
    };
    if (known(k_libc6_interpreters, info.interpreter))
        return k_cache_flag_elf_libc6;
    for (const auto& needed : info.needed) {
        if (known(k_libc6_libraries, needed))
            return k_cache_flag_elf_libc6;
    }
    return k_cache_flag_elf;
}

// Temporary files prelink leaves behind ("x.#prelink#" and "x.#prelink#.XXXXXX").
bool is_prelink_temporary(std::string_view name) {
    constexpr std::string_view k_suffix = ".#prelink#";
    if (name.ends_with(k_suffix))
        return true;
    return name.size() >= k_suffix.size() + 7 &&
           name.substr(name.size() - k_suffix.size() - 7, k_suffix.size() + 1) == ".#prelink#.";
}

struct ScanDirectory {
    std::string path;       // as spelled by the conf (the cache's paths begin with it)
    std::string canonical;  // resolved inside the root: ldconfig's (dev, inode) identity
    std::string hwcaps;     // the glibc-hwcaps subdirectory name, or empty
};

// One library of a directory (ldconfig's dlib_entry), keyed by soname.
struct DirectoryLibrary {
    std::string name;
    std::string soname;
    int32_t flags = 0;
    bool is_link = false;
};

class Scanner {
  public:
    Scanner(const fs::FileTree& tree, const ScanOptions& options)
        : m_tree(tree), m_options(options) {}

    // add_dir_1: a conf or built-in directory, then its glibc-hwcaps subdirectories.
    void add_directory(const std::string& path);
    void scan_all();
    std::vector<CacheEntry> take() { return std::move(m_entries); }

  private:
    bool add_single(ScanDirectory directory);
    void scan(const ScanDirectory& directory);
    void keep(std::vector<DirectoryLibrary>& libraries, DirectoryLibrary library);

    const fs::FileTree& m_tree;
    const ScanOptions& m_options;
    std::vector<ScanDirectory> m_directories;
    std::set<std::string> m_seen;
    std::vector<CacheEntry> m_entries;
};

bool Scanner::add_single(ScanDirectory directory) {
    if (!m_seen.insert(directory.canonical).second)
        return false;
    m_directories.push_back(std::move(directory));
    return true;
}

void Scanner::add_directory(const std::string& path) {
    auto resolved = fs::resolve(m_tree, path);
    if (!resolved)
        return;  // ldconfig: "Can't stat"
    if (!add_single(ScanDirectory{path, resolved->path, ""}))
        return;
    auto hwcaps = fs::resolve(m_tree, resolved->path + "/glibc-hwcaps");
    if (!hwcaps || hwcaps->stat.kind != fs::NodeKind::directory)
        return;
    auto listing = m_tree.list(hwcaps->path);
    if (!listing.ok())
        return;
    for (const auto& entry : *listing) {
        // Hidden names, regular files and names with ':' (ld.so cannot look them up) are skipped.
        if (entry.name.front() == '.' || entry.kind == fs::NodeKind::regular ||
            entry.name.find(':') != std::string::npos) {
            continue;
        }
        auto sub = fs::resolve(m_tree, hwcaps->path + "/" + entry.name);
        if (!sub || sub->stat.kind != fs::NodeKind::directory)
            continue;
        add_single(ScanDirectory{path + "/glibc-hwcaps/" + entry.name, sub->path, entry.name});
    }
}

void Scanner::scan_all() {
    // Legacy hwcap subdirectories found while scanning join the end of the list.
    for (size_t i = 0; i < m_directories.size(); ++i) {
        ScanDirectory directory = m_directories[i];
        scan(directory);
    }
}

void Scanner::keep(std::vector<DirectoryLibrary>& libraries, DirectoryLibrary library) {
    for (auto& known : libraries) {
        if (known.soname != library.soname)
            continue;
        // A file beats a link; otherwise the newer-looking name wins. The cache entry is the
        // same either way outside glibc-hwcaps (dir/soname); the name matters for links.
        if ((!library.is_link && known.is_link) ||
            (library.is_link == known.is_link && cache_libcmp(known.name, library.name) < 0)) {
            if (known.flags != library.flags) {
                bool known_libc = known.flags == k_cache_flag_elf_libc6;
                if ((known.flags == k_cache_flag_elf && library.flags == k_cache_flag_elf_libc6) ||
                    (known_libc && library.flags == k_cache_flag_elf)) {
                    known.flags = library.flags;
                }
            }
            known.name = std::move(library.name);
            known.is_link = library.is_link;
        }
        return;
    }
    libraries.push_back(std::move(library));
}

void Scanner::scan(const ScanDirectory& directory) {
    auto listing = m_tree.list(directory.canonical);
    if (!listing.ok())
        return;  // ldconfig: "Can't open directory"
    const bool in_hwcaps = !directory.hwcaps.empty();
    const uint16_t machine = m_options.machine;
    std::vector<DirectoryLibrary> libraries;
    for (const auto& entry : *listing) {
        if (entry.kind == fs::NodeKind::other)
            continue;
        bool dso = looks_like_dso(entry.name);
        bool platform = hwcap_bit(entry.name, machine) >= 0;
        // In a glibc-hwcaps subdirectory a link of any name is looked at (ldconfig's test).
        if (!dso && (entry.kind == fs::NodeKind::regular || (!in_hwcaps && !platform)))
            continue;
        if (is_prelink_temporary(entry.name))
            continue;

        std::string target = directory.canonical + "/" + entry.name;
        fs::NodeKind kind = entry.kind;
        bool is_link = entry.kind == fs::NodeKind::symlink;
        if (is_link) {
            auto resolved = fs::resolve(m_tree, target);
            if (!resolved)
                continue;  // dangling: skipped (ldconfig deletes it)
            target = resolved->path;
            kind = resolved->stat.kind;
        }
        if (!in_hwcaps && kind == fs::NodeKind::directory && platform) {
            add_single(ScanDirectory{directory.path + "/" + entry.name, target, ""});
            continue;
        }
        if (entry.kind != fs::NodeKind::regular && !is_link)
            continue;

        fs::ElfProbe probe = m_tree.probe_elf(target);
        if (probe.outcome != fs::ElfProbe::Outcome::elf || !probe.info)
            continue;
        auto flags = ldconfig_flags(*probe.info, machine);
        if (!flags)
            continue;
        std::string soname = probe.info->soname.empty() ? entry.name : probe.info->soname;
        // A link counts as one only when it is named after the soname or is the "lib.so" link
        // for ld(1); a link named so gets its own entry under its name.
        if (is_link && entry.name != soname &&
            !(entry.name.ends_with(".so") && soname.starts_with(entry.name))) {
            is_link = false;
        }
        if (is_link)
            soname = entry.name;
        keep(libraries, DirectoryLibrary{entry.name, soname, *flags, is_link});
    }
    // ldconfig prepends to its list, so it adds the libraries in reverse; the order only
    // survives the sort among entries it compares equal.
    const uint64_t hwcap =
        in_hwcaps ? k_hwcap_extension : legacy_path_hwcap(directory.path, machine);
    for (auto it = libraries.rbegin(); it != libraries.rend(); ++it) {
        // Outside glibc-hwcaps the cache names the soname link ldconfig maintains; inside, the
        // file itself (no links are made there).
        const std::string& file = in_hwcaps ? it->name : it->soname;
        m_entries.push_back(CacheEntry{it->soname, directory.path + "/" + file, it->flags, hwcap,
                                       directory.hwcaps});
    }
}

}  // namespace

bool looks_like_dso(std::string_view name) {
    return ((name.starts_with("lib") || name.starts_with("ld-")) &&
            name.find(".so") != std::string_view::npos) ||
           name.starts_with("ld.so.") || name.starts_with("ld64.so.");
}

std::optional<int32_t> ldconfig_flags(const elf::ElfInfo& info, uint16_t ldconfig_machine) {
    if (info.type != elf::k_type_dyn || !info.has_dynamic)
        return std::nullopt;
    if (info.byte_order != elf::ByteOrder::little)
        return std::nullopt;
    const bool elf64 = info.elf_class == elf::ElfClass::elf64;
    if (is_x86(ldconfig_machine)) {
        if (info.machine == elf::k_machine_x86_64) {
            return elf64 ? k_cache_flags_x86_64
                         : k_cache_flag_elf_libc6 | k_cache_flag_x8664_libx32;
        }
        if (info.machine == elf::k_machine_386 && !elf64)
            return generic_flags(info);
        return std::nullopt;
    }
    if (ldconfig_machine == elf::k_machine_aarch64) {
        if (info.machine == elf::k_machine_aarch64 && elf64)
            return k_cache_flags_aarch64;
        return std::nullopt;
    }
    return std::nullopt;
}

uint64_t legacy_path_hwcap(std::string_view path, uint16_t ldconfig_machine) {
    uint64_t hwcap = 0;
    while (true) {
        size_t slash = path.rfind('/');
        if (slash == std::string_view::npos)
            break;
        int bit = hwcap_bit(path.substr(slash + 1), ldconfig_machine);
        if (bit < 0)
            break;
        hwcap += uint64_t{1} << bit;  // ldconfig adds; "tls/tls" would wrap as it does there
        path = path.substr(0, slash);
    }
    return hwcap;
}

util::Result<LdSoCache> simulate_ldconfig(const fs::FileTree& tree, const ScanOptions& options) {
    const bool supported =
        (options.machine == elf::k_machine_x86_64 && options.elf_class == elf::ElfClass::elf64) ||
        (options.machine == elf::k_machine_386 && options.elf_class == elf::ElfClass::elf32) ||
        (options.machine == elf::k_machine_aarch64 && options.elf_class == elf::ElfClass::elf64);
    if (!supported) {
        return util::make_error(tree.describe(), fmt::format("no ldconfig model for {} {}",
                                                             elf::machine_name(options.machine),
                                                             elf::class_name(options.elf_class)));
    }
    auto conf = read_ld_so_conf(tree, options.conf_path);
    if (!conf.ok())
        return conf.error();

    Scanner scanner(tree, options);
    for (const auto& directory : conf->directories)
        scanner.add_directory(directory);
    for (const auto& directory : options.system_directories)
        scanner.add_directory(directory);
    scanner.scan_all();

    LdSoCache cache;
    cache.entries = scanner.take();
    cache.generator = options.generator;
    sort_cache_entries(cache.entries);
    assign_hwcaps_indices(cache.entries);
    return cache;
}

}  // namespace rootlock::loader
