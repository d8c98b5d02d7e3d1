// Tests for the ld.so.cache reader, writer and lookup, refereed by the real ldconfig (caches it
// builds from temporary roots of generated libraries) and, as root, by the real ld.so in a chroot.
#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "loader/ld_so_cache.hpp"
#include "support/cache_entry_printer.hpp"
#include "support/elf_writer.hpp"
#include "support/temp_dir.hpp"

using namespace rootlock;
using namespace rootlock::loader;
using rootlock::testing::TempDir;

namespace {

constexpr const char* k_ldconfig = "/sbin/ldconfig";
constexpr const char* k_multiarch = "/lib/x86_64-linux-gnu";
constexpr uint64_t k_ext = k_hwcap_extension;

bool have_ldconfig() {
    if (::access(k_ldconfig, X_OK) == 0)
        return true;
    MESSAGE("no ", k_ldconfig, " on this machine: the ldconfig referee checks are skipped");
    return false;
}

// The real ldconfig over `root`: it writes ROOT/etc/ld.so.cache (and the soname links).
void run_ldconfig(const TempDir& root, const std::string& extra = "") {
    root.make_dirs("etc");
    std::string command =
        std::string(k_ldconfig) + " -r '" + root.path() + "' " + extra + " 2>/dev/null";
    REQUIRE(std::system(command.c_str()) == 0);
}

std::string run_output(const std::string& command) {
    std::string out;
    FILE* pipe = ::popen(command.c_str(), "r");
    REQUIRE(pipe != nullptr);
    char buffer[4096];
    size_t n = 0;
    while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0)
        out.append(buffer, n);
    ::pclose(pipe);
    return out;
}

std::vector<std::byte> read_bytes(const std::string& host_path) {
    std::ifstream in(host_path, std::ios::binary);
    std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::vector<std::byte> out(chars.size());
    std::transform(chars.begin(), chars.end(), out.begin(),
                   [](char c) { return static_cast<std::byte>(c); });
    return out;
}

void write_bytes(const TempDir& root, std::string_view relative,
                 const std::vector<std::byte>& bytes) {
    std::string text(bytes.size(), '\0');
    std::transform(bytes.begin(), bytes.end(), text.begin(),
                   [](std::byte b) { return static_cast<char>(b); });
    root.write_file(relative, text);
}

// A generated shared object with `soname`, for the x86_64 target unless `spec` says otherwise.
void add_library(const TempDir& root, std::string_view relative, const std::string& soname,
                 testing::ElfSpec spec = {}) {
    spec.soname = soname;
    if (spec.needed.empty())
        spec.needed = {"libc.so.6"};
    write_bytes(root, relative, testing::build_elf(spec));
}

LdSoCache parse_file(const std::string& host_path) {
    auto bytes = read_bytes(host_path);
    auto parsed = parse_ld_so_cache(bytes, "/etc/ld.so.cache");
    if (!parsed.ok())
        FAIL(parsed.error().text());
    return std::move(parsed).value();
}

// A root exercising every ordering rule ldconfig has: glibc-hwcaps, legacy tls, two directories
// with one soname, i386 and x32 objects beside x86_64 ones, version-aware soname order, a dev link.
void populate_mixed_root(const TempDir& root) {
    const std::string lib = "lib/x86_64-linux-gnu/";
    add_library(root, lib + "libfoo.so.1.2", "libfoo.so.1");
    root.make_symlink(lib + "libfoo.so.1", "libfoo.so.1.2");
    root.make_symlink(lib + "libfoo.so", "libfoo.so.1");
    add_library(root, lib + "glibc-hwcaps/x86-64-v3/libfoo.so.1.2", "libfoo.so.1");
    add_library(root, lib + "glibc-hwcaps/x86-64-v2/libfoo.so.1", "libfoo.so.1");
    add_library(root, lib + "tls/libfoo.so.1", "libfoo.so.1");
    add_library(root, "opt/a/libbar.so.3", "libbar.so.3");
    add_library(root, lib + "libbar.so.3", "libbar.so.3");
    add_library(root, lib + "libv.so.9", "libv.so.9");
    add_library(root, lib + "libv.so.10", "libv.so.10");
    add_library(root, lib + "libv2.so.1", "libv2.so.1");
    testing::ElfSpec i386;
    i386.elf_class = elf::ElfClass::elf32;
    i386.machine = elf::k_machine_386;
    add_library(root, "usr/lib32/libfoo.so.1", "libfoo.so.1", i386);
    i386.needed = {"libplain.so.1"};
    add_library(root, "usr/lib32/libplain.so.2", "libplain.so.2", i386);
    testing::ElfSpec x32;
    x32.elf_class = elf::ElfClass::elf32;
    add_library(root, "usr/libx32/libfoo.so.1", "libfoo.so.1", x32);
    testing::ElfSpec arm;
    arm.machine = elf::k_machine_aarch64;
    add_library(root, lib + "libarm.so.1", "libarm.so.1", arm);
    root.write_file("etc/ld.so.conf", "/opt/a\n/usr/lib32\n/usr/libx32\n");
}

// The parse of the cache ldconfig builds for populate_mixed_root, worked out from glibc's rules.
std::vector<CacheEntry> mixed_root_entries() {
    const std::string lib = "/lib/x86_64-linux-gnu/";
    return {
        {"libv2.so.1", lib + "libv2.so.1", 0x0303, 0, ""},
        {"libv.so.10", lib + "libv.so.10", 0x0303, 0, ""},
        {"libv.so.9", lib + "libv.so.9", 0x0303, 0, ""},
        {"libplain.so.2", "/usr/lib32/libplain.so.2", 0x0001, 0, ""},
        // Flags descending first: x32 (0x0803), x86_64 (0x0303), i386 (0x0003).
        {"libfoo.so.1", "/usr/libx32/libfoo.so.1", 0x0803, 0, ""},
        {"libfoo.so.1", lib + "glibc-hwcaps/x86-64-v2/libfoo.so.1", 0x0303, k_ext | 0, "x86-64-v2"},
        {"libfoo.so.1", lib + "glibc-hwcaps/x86-64-v3/libfoo.so.1.2", 0x0303, k_ext | 1,
         "x86-64-v3"},
        {"libfoo.so.1", lib + "tls/libfoo.so.1", 0x0303, k_hwcap_tls, ""},
        {"libfoo.so.1", lib + "libfoo.so.1", 0x0303, 0, ""},
        {"libfoo.so.1", "/usr/lib32/libfoo.so.1", 0x0003, 0, ""},
        {"libfoo.so", lib + "libfoo.so", 0x0303, 0, ""},
        {"libbar.so.3", "/opt/a/libbar.so.3", 0x0303, 0, ""},
        {"libbar.so.3", lib + "libbar.so.3", 0x0303, 0, ""},
    };
}

// A small valid cache for the malformed-input table: one glibc-hwcaps entry and a plain one.
std::vector<std::byte> sample_cache() {
    std::vector<CacheEntry> entries = {
        {"libz.so.1", "/lib/glibc-hwcaps/x86-64-v3/libz.so.1", 0x0303, k_ext, "x86-64-v3"},
        {"libz.so.1", "/lib/libz.so.1", 0x0303, 0, ""},
    };
    return write_ld_so_cache(entries, CacheWriteOptions{"gen"});
}

void put_u32(std::vector<std::byte>& bytes, size_t offset, uint32_t value) {
    for (size_t i = 0; i < 4; ++i)
        bytes[offset + i] = static_cast<std::byte>(value >> (8 * i));
}

std::vector<std::byte> text_bytes(std::string_view text) {
    std::vector<std::byte> out;
    for (char c : text)
        out.push_back(static_cast<std::byte>(c));
    return out;
}

// An old-format ("ld.so-1.7.0") cache of one entry, strings counted from the end of the table.
std::vector<std::byte> old_format_cache() {
    auto bytes = text_bytes(std::string("ld.so-1.7.0") + '\0');
    bytes.resize(16);
    put_u32(bytes, 12, 1);
    bytes.resize(28);
    put_u32(bytes, 16, 0x0303);
    put_u32(bytes, 20, 0);
    put_u32(bytes, 24, 10);
    auto strings = text_bytes(std::string("libz.so.1") + '\0' + "/lib/libz.so.1" + '\0');
    bytes.insert(bytes.end(), strings.begin(), strings.end());
    return bytes;
}

}  // namespace

TEST_SUITE("rootlock::loader") {
    TEST_CASE("parse_ld_so_cache reads the cache the real ldconfig writes") {
        if (!have_ldconfig())
            return;
        TempDir root;
        populate_mixed_root(root);
        run_ldconfig(root);
        LdSoCache cache = parse_file(root / "etc/ld.so.cache");
        const auto expected = mixed_root_entries();
        CHECK(cache.entries.size() == expected.size());
        for (size_t i = 0; i < std::min(cache.entries.size(), expected.size()); ++i) {
            CAPTURE(i);
            CHECK(cache.entries[i] == expected[i]);
        }
        CHECK(cache.generator.starts_with("ldconfig ("));
        CHECK(cache.generator.find(" release version ") != std::string::npos);
    }

    TEST_CASE("an entry with a hwcaps index but no subdirectory is written so it reads back") {
        // Reader and writer speak one format: the writer gives such an entry no index (there is
        // no name to index), rather than a bit that points into a section it leaves out.
        CacheEntry odd{"libodd.so.1", "/usr/lib/libodd.so.1", 0x0303, loader::k_hwcap_extension | 3,
                       ""};
        CacheEntry plain{"libc.so.6", "/usr/lib/libc.so.6", 0x0303, 0, ""};
        auto bytes = write_ld_so_cache({odd, plain}, CacheWriteOptions{"gen"});
        auto parsed = parse_ld_so_cache(bytes, "/etc/ld.so.cache");
        REQUIRE(parsed.ok());
        REQUIRE(parsed->entries.size() == 2);
        for (const auto& entry : parsed->entries) {
            CHECK(entry.hwcap == 0);
            CHECK(entry.hwcaps_subdir.empty());
        }
    }

    TEST_CASE("write_ld_so_cache reproduces the real ldconfig's bytes") {
        if (!have_ldconfig())
            return;
        TempDir root;
        populate_mixed_root(root);
        run_ldconfig(root);
        auto real = read_bytes(root / "etc/ld.so.cache");
        LdSoCache cache = parse_file(root / "etc/ld.so.cache");
        CacheWriteOptions options{cache.generator};
        CHECK(write_ld_so_cache(cache.entries, options) == real);
        // The writer sorts: any input order gives the same file.
        // (Entries it compares equal, the two libbar.so.3, must keep their order.)
        std::vector<CacheEntry> shuffled = cache.entries;
        std::rotate(shuffled.begin(), shuffled.begin() + 3, shuffled.end());
        std::swap(shuffled[0], shuffled[5]);
        CHECK(write_ld_so_cache(shuffled, options) == real);
    }

    TEST_CASE("write_ld_so_cache matches ldconfig for a root without glibc-hwcaps") {
        if (!have_ldconfig())
            return;
        TempDir root;
        add_library(root, "lib/x86_64-linux-gnu/libz.so.1", "libz.so.1");
        add_library(root, "usr/local/lib/libz.so.1", "libz.so.1");
        add_library(root, "usr/local/lib/libzz.so.1", "libzz.so.1");
        root.write_file("etc/ld.so.conf", "/usr/local/lib\n");
        run_ldconfig(root);
        auto real = read_bytes(root / "etc/ld.so.cache");
        LdSoCache cache = parse_file(root / "etc/ld.so.cache");
        CHECK(cache.entries.size() == 3);
        CHECK(write_ld_so_cache(cache.entries, CacheWriteOptions{cache.generator}) == real);
    }

    TEST_CASE("parse_ld_so_cache finds the new cache behind an old-format header") {
        if (!have_ldconfig())
            return;
        TempDir root;
        add_library(root, "lib/x86_64-linux-gnu/libz.so.1", "libz.so.1");
        add_library(root, "lib/x86_64-linux-gnu/libm.so.6", "libm.so.6");
        run_ldconfig(root, "-c compat -C /etc/compat.cache");
        run_ldconfig(root);
        LdSoCache compat = parse_file(root / "etc/compat.cache");
        LdSoCache plain = parse_file(root / "etc/ld.so.cache");
        CHECK(compat.entries == plain.entries);
        CHECK(compat.generator == plain.generator);
    }

    TEST_CASE("parse_ld_so_cache reads the old format alone") {
        auto parsed = parse_ld_so_cache(old_format_cache(), "old");
        REQUIRE(parsed.ok());
        REQUIRE(parsed->entries.size() == 1);
        CHECK(parsed->entries[0] == CacheEntry{"libz.so.1", "/lib/libz.so.1", 0x0303, 0, ""});
        CHECK(parsed->generator.empty());
    }

    TEST_CASE("write_ld_so_cache round-trips through parse_ld_so_cache") {
        std::vector<CacheEntry> entries = {
            {"libb.so.1", "/b/libb.so.1", 0x0303, 0, ""},
            {"liba.so.1", "/x/glibc-hwcaps/x86-64-v2/liba.so.1", 0x0303, k_ext, "x86-64-v2"},
            {"liba.so.1", "/a/liba.so.1", 0x0303, 0, ""},
        };
        auto parsed = parse_ld_so_cache(write_ld_so_cache(entries, {}), "c");
        REQUIRE(parsed.ok());
        CHECK(parsed->generator == "rootlock");
        CHECK(parsed->entries == entries);

        auto empty = parse_ld_so_cache(write_ld_so_cache({}, {}), "c");
        REQUIRE(empty.ok());
        CHECK(empty->entries.empty());
    }

    TEST_CASE("cache_libcmp compares digit runs by value, as ldconfig sorts") {
        struct Row {
            const char* left;
            const char* right;
            int sign;
        };
        const Row rows[] = {
            {"libx.so.10", "libx.so.9", 1},
            {"libx.so.1", "libx.so.01", 0},
            {"libx.so.1", "libx.so.1", 0},
            {"libx.so", "libx.so.1", -1},
            {"lib1.so", "liba.so", 1},
            {"liba.so", "lib1.so", -1},
            {"libb.so", "liba.so", 1},
            {"libx.so.1.2", "libx.so.1.10", -1},
            {"libx.so.99999999999", "libx.so.100000000000", -1},
        };
        for (const auto& row : rows) {
            CAPTURE(row.left);
            CAPTURE(row.right);
            int c = cache_libcmp(row.left, row.right);
            CHECK((c > 0) - (c < 0) == row.sign);
        }
    }

    TEST_CASE("the conf directory listed first wins, in the cache and at run time") {
        if (!have_ldconfig())
            return;
        for (const char* conf : {"/opt/b\n/opt/a\n", "/opt/a\n/opt/b\n"}) {
            TempDir root;
            add_library(root, "opt/a/libfoo.so.1", "libfoo.so.1");
            add_library(root, "opt/b/libfoo.so.1", "libfoo.so.1");
            root.write_file("etc/ld.so.conf", conf);
            run_ldconfig(root);
            CacheIndex index(parse_file(root / "etc/ld.so.cache"), CacheLookupTarget{});
            const CacheEntry* found = index.lookup("libfoo.so.1");
            REQUIRE(found != nullptr);
            CHECK(found->path == std::string(conf).substr(0, 6) + "/libfoo.so.1");
            CHECK(index.all("libfoo.so.1").size() == 2);
        }
    }

    TEST_CASE("CacheIndex agrees with the real ld.so in a chroot") {
        // ld.so itself is the referee: it lists what it loads for a library needing libz.so.1.
        const std::string host = k_multiarch;
        const char* needed[] = {"ld-linux-x86-64.so.2", "libc.so.6", "libm.so.6", "libz.so.1",
                                "libpng16.so.16"};
        bool available = have_ldconfig() && ::geteuid() == 0;
        for (const char* name : needed)
            available = available && ::access((host + "/" + name).c_str(), R_OK) == 0;
        if (!available) {
            MESSAGE("needs root, ldconfig and the host's libpng16: the chroot check is skipped");
            return;
        }
        TempDir root;
        auto copy = [&](const std::string& name, const std::string& relative) {
            std::filesystem::create_directories(
                std::filesystem::path(root / relative).parent_path());
            std::filesystem::copy_file(host + "/" + name, root / relative);
        };
        copy("ld-linux-x86-64.so.2", "lib64/ld-linux-x86-64.so.2");
        copy("libc.so.6", "lib/x86_64-linux-gnu/libc.so.6");
        copy("libm.so.6", "lib/x86_64-linux-gnu/libm.so.6");
        copy("libpng16.so.16", "usr/lib/x86_64-linux-gnu/libpng16.so.16");
        copy("libz.so.1", "opt/a/glibc-hwcaps/x86-64-v2/libz.so.1");
        copy("libz.so.1", "opt/b/libz.so.1");
        copy("libz.so.1", "opt/c/libz.so.1");
        root.write_file("etc/ld.so.conf", "/opt/c\n/opt/b\n/opt/a\n");
        run_ldconfig(root);

        const std::string chroot = "chroot '" + root.path() + "' /lib64/ld-linux-x86-64.so.2 ";
        // "  x86-64-v2 (supported, searched)" lines, highest priority first.
        CacheLookupTarget target;
        std::istringstream help(run_output(chroot + "--help"));
        for (std::string line; std::getline(help, line);) {
            if (line.find("(supported, searched)") == std::string::npos)
                continue;
            std::istringstream words(line);
            std::string word;
            words >> word;
            if (word.starts_with("x86-64-v"))
                target.hwcaps_supported.push_back(word);
        }
        CacheIndex index(parse_file(root / "etc/ld.so.cache"), target);
        const auto& levels = target.hwcaps_supported;
        if (std::find(levels.begin(), levels.end(), "x86-64-v2") != levels.end()) {
            // The glibc-hwcaps entry of the last conf directory beats the plain earlier ones.
            CHECK(index.lookup("libz.so.1")->path == "/opt/a/glibc-hwcaps/x86-64-v2/libz.so.1");
        }
        std::string listing =
            run_output(chroot + "--list /usr/lib/x86_64-linux-gnu/libpng16.so.16");
        for (const char* soname : {"libz.so.1", "libm.so.6", "libc.so.6"}) {
            CAPTURE(soname);
            const CacheEntry* found = index.lookup(soname);
            REQUIRE(found != nullptr);
            CHECK(listing.find(std::string(soname) + " => " + found->path + " (") !=
                  std::string::npos);
        }
        // Without x86-64-v2 the plain entry of the first conf directory wins.
        CacheIndex baseline(parse_file(root / "etc/ld.so.cache"), CacheLookupTarget{});
        CHECK(baseline.lookup("libz.so.1")->path == "/opt/c/libz.so.1");
    }

    TEST_CASE("CacheIndex prefers the best supported glibc-hwcaps entry, then the plain one") {
        LdSoCache cache;
        cache.entries = {
            {"libz.so.1", "/l/glibc-hwcaps/x86-64-v2/libz.so.1", 0x0303, k_ext | 0, "x86-64-v2"},
            {"libz.so.1", "/l/glibc-hwcaps/x86-64-v3/libz.so.1", 0x0303, k_ext | 1, "x86-64-v3"},
            {"libz.so.1", "/l/libz.so.1", 0x0303, 0, ""},
            {"libz.so.1", "/m/libz.so.1", 0x0303, 0, ""},
        };
        auto path_for = [&](std::vector<std::string> supported) {
            CacheIndex index(cache, CacheLookupTarget{k_cache_flags_x86_64, std::move(supported)});
            const CacheEntry* found = index.lookup("libz.so.1");
            return found == nullptr ? std::string("(none)") : found->path;
        };
        CHECK(path_for({"x86-64-v3", "x86-64-v2"}) == "/l/glibc-hwcaps/x86-64-v3/libz.so.1");
        CHECK(path_for({"x86-64-v2"}) == "/l/glibc-hwcaps/x86-64-v2/libz.so.1");
        CHECK(path_for({"x86-64-v4"}) == "/l/libz.so.1");
        CHECK(path_for({}) == "/l/libz.so.1");
    }

    TEST_CASE("CacheIndex applies flags, legacy hwcaps, ISA levels and soname equivalence") {
        LdSoCache cache;
        cache.entries = {
            {"libq.so.1", "/l/haswell/libq.so.1", 0x0303, 1ULL << 50, ""},
            {"libq.so.1", "/l/x86_64/libq.so.1", 0x0303, 1ULL << 1, ""},
            {"libq.so.1", "/l/tls/libq.so.1", 0x0303, k_hwcap_tls, ""},
            {"libq.so.1", "/l/libq.so.1", 0x0303, 0, ""},
            {"libr.so.01", "/l/libr.so.01", 0x0303, 0, ""},
            {"libs.so.1", "/l/glibc-hwcaps/v/libs.so.1", 0x0303, k_ext | (3ULL << 32), "x86-64-v3"},
            {"libs.so.1", "/lib32/libs.so.1", 0x0003, 0, ""},
            {"libs.so.1", "/lib32/plain/libs.so.1", 0x0001, 0, ""},
        };
        CacheIndex x86_64(cache, CacheLookupTarget{k_cache_flags_x86_64, {"x86-64-v3"}});
        CHECK(x86_64.lookup("libq.so.1")->path == "/l/tls/libq.so.1");
        CHECK(x86_64.lookup("libr.so.1")->path == "/l/libr.so.01");
        CHECK(x86_64.lookup("libs.so.1")->path == "/l/glibc-hwcaps/v/libs.so.1");
        CHECK(x86_64.lookup("libmissing.so.1") == nullptr);
        CHECK(x86_64.all("libq.so.1").size() == 4);
        CHECK(x86_64.all("libmissing.so.1").empty());

        CacheLookupTarget cpu{k_cache_flags_x86_64, {"x86-64-v3"}};
        cpu.legacy_hwcap = 1ULL << 1;
        cpu.legacy_platform = 1ULL << 50;
        cpu.isa_levels = 0x7;  // levels 0..2: the level-3 glibc-hwcaps entry is refused
        CacheIndex haswell(cache, cpu);
        CHECK(haswell.lookup("libq.so.1")->path == "/l/haswell/libq.so.1");
        CHECK(haswell.lookup("libs.so.1") == nullptr);

        CacheIndex i386(cache, CacheLookupTarget{k_cache_flags_i386, {}});
        CHECK(i386.lookup("libs.so.1")->path == "/lib32/libs.so.1");
        CHECK(i386.lookup("libq.so.1") == nullptr);
        cache.entries.erase(cache.entries.begin() + 6);
        CacheIndex plain_elf(cache, CacheLookupTarget{k_cache_flags_i386, {}});
        CHECK(plain_elf.lookup("libs.so.1")->path == "/lib32/plain/libs.so.1");
    }

    TEST_CASE("parse_ld_so_cache rejects malformed caches with one located error") {
        // sample_cache(): header 0x0..0x30, entries 0x30 (the glibc-hwcaps one) and 0x48,
        // strings 0x60..0x9f, extension directory 0xa0 (sections at 0xa8 and 0xb8), the hwcaps
        // index array at 0xc8, the generator "gen" at 0xcc (end 0xcf).
        const auto sample = sample_cache();
        REQUIRE(sample.size() == 0xcf);
        REQUIRE(parse_ld_so_cache(sample, "/etc/ld.so.cache").ok());
        struct Row {
            const char* what;
            std::vector<std::byte> bytes;
            const char* error;
        };
        auto patched = [&](size_t offset, uint32_t value) {
            auto bytes = sample;
            put_u32(bytes, offset, value);
            return bytes;
        };
        auto truncated = [&](size_t size) {
            return std::vector<std::byte>(sample.begin(), sample.begin() + static_cast<long>(size));
        };
        auto with_byte = [&](size_t offset, uint8_t value) {
            auto bytes = sample;
            bytes[offset] = std::byte{value};
            return bytes;
        };
        auto old_patched = [&](size_t offset, uint32_t value) {
            auto bytes = old_format_cache();
            put_u32(bytes, offset, value);
            return bytes;
        };
        // A NUL at which no string starts: the offset of an empty name.
        const auto first_nul = static_cast<uint32_t>(
            std::find(sample.begin() + 0x60, sample.end(), std::byte{0}) - sample.begin());
        const Row rows[] = {
            {"empty file", {}, "/etc/ld.so.cache@0x0: empty file"},
            {"truncated magic", text_bytes("glibc-ld.so.ca"),
             "/etc/ld.so.cache@0x0: truncated magic"},
            {"truncated version", text_bytes("glibc-ld.so.cache1"),
             "/etc/ld.so.cache@0x0: truncated magic"},
            {"unknown magic",
             text_bytes("\x7f"
                        "ELF\2\1\1"),
             "/etc/ld.so.cache@0x0: unknown magic (not an ld.so.cache file)"},
            {"unknown version", with_byte(19, '0'),
             "/etc/ld.so.cache@0x11: unsupported cache version \"1.0\""},
            {"truncated header", truncated(30),
             "/etc/ld.so.cache@0x0: header truncated: needs 48 bytes, file has 30"},
            {"big-endian", with_byte(28, 3),
             "/etc/ld.so.cache@0x1c: big-endian cache; only little-endian caches are read"},
            {"invalid flag", with_byte(28, 1),
             "/etc/ld.so.cache@0x1c: cache flags mark the file invalid"},
            {"absurd nlibs", patched(20, 1000000),
             "/etc/ld.so.cache@0x14: 1000000 entries need 0x16e3600 bytes from 0x30, past the "
             "end of the file (0xcf bytes)"},
            {"string table past the end", patched(24, 0x1000),
             "/etc/ld.so.cache@0x18: string table of 0x1000 bytes from 0x60 runs past the end of "
             "the file (0xcf bytes)"},
            {"soname past the end", patched(0x34, 0x1000),
             "/etc/ld.so.cache@0x34: entry 0: soname offset 0x1000 is past the end of the file "
             "(0xcf bytes)"},
            {"path past the end", patched(0x50, 0xcf),
             "/etc/ld.so.cache@0x50: entry 1: path offset 0xcf is past the end of the file (0xcf "
             "bytes)"},
            {"unterminated string", patched(0x4c, 0xcc),
             "/etc/ld.so.cache@0xcc: entry 1: soname is not NUL-terminated"},
            {"misaligned extension", patched(32, 0xa1),
             "/etc/ld.so.cache@0x20: extension offset 0xa1 is not a multiple of 4"},
            {"extension past the end", patched(32, 0xcc),
             "/etc/ld.so.cache@0x20: extension directory at 0xcc runs past the end of the file "
             "(0xcf bytes)"},
            {"bad extension magic", patched(0xa0, 0x12345678),
             "/etc/ld.so.cache@0xa0: bad extension magic 0x12345678"},
            {"absurd section count", patched(0xa4, 100),
             "/etc/ld.so.cache@0xa4: 100 extension sections run past the end of the file (0xcf "
             "bytes)"},
            {"section past the end", patched(0xb0, 0x100),
             "/etc/ld.so.cache@0xa8: extension section 0 (tag 0): 0x3 bytes at 0x100 run past "
             "the end of the file (0xcf bytes)"},
            {"hwcaps section not in 4-byte units", patched(0xc4, 3),
             "/etc/ld.so.cache@0xb8: glibc-hwcaps section (0x3 bytes at 0xc8) is not made of "
             "aligned 4-byte indices"},
            {"hwcaps name past the end", patched(0xc8, 0x200),
             "/etc/ld.so.cache@0xc8: glibc-hwcaps name 0 offset 0x200 is past the end of the "
             "file (0xcf bytes)"},
            {"hwcaps name empty", patched(0xc8, first_nul),
             "/etc/ld.so.cache@0xc8: glibc-hwcaps name 0 is empty (ldconfig never writes one, "
             "and ld.so would never search it)"},
            {"hwcaps index out of range", patched(0x40, 5),
             "/etc/ld.so.cache@0x40: entry 0: glibc-hwcaps index 5 is out of range (1 "
             "subdirectories)"},
            {"hwcaps entry without the section", patched(0xa4, 1),
             "/etc/ld.so.cache@0x40: entry 0: glibc-hwcaps index 0 is out of range (0 "
             "subdirectories)"},
            {"truncated old header", text_bytes(std::string("ld.so-1.7.0") + '\0' + "\1"),
             "/etc/ld.so.cache@0x0: old-format header truncated: needs 16 bytes, file has 13"},
            {"absurd old nlibs", old_patched(12, 5),
             "/etc/ld.so.cache@0xc: old-format table of 5 entries runs past the end of the file "
             "(0x35 bytes)"},
            {"old soname past the end", old_patched(20, 0x40),
             "/etc/ld.so.cache@0x14: entry 0: soname offset 0x5c is past the end of the file "
             "(0x35 bytes)"},
        };
        for (const auto& row : rows) {
            CAPTURE(row.what);
            auto parsed = parse_ld_so_cache(row.bytes, "/etc/ld.so.cache");
            REQUIRE_FALSE(parsed.ok());
            CHECK(parsed.error().text() == row.error);
        }
    }
}
