// Tests for simulate_ldconfig: small in-memory roots for each rule, and a root on disk whose real
// ldconfig cache (entries and bytes) the simulation must reproduce exactly.
#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "fs/directory_tree.hpp"
#include "fs/memory_tree.hpp"
#include "loader/ldconfig_scan.hpp"
#include "support/cache_entry_printer.hpp"
#include "support/elf_writer.hpp"
#include "support/temp_dir.hpp"

namespace ROOTLOCK_UNIT_ID {

using namespace rootlock;
using namespace rootlock::loader;
using rootlock::fs::MemoryTree;
using rootlock::testing::TempDir;

namespace {

constexpr uint64_t k_ext = k_hwcap_extension;

std::string library_bytes(const std::string& soname, testing::ElfSpec spec = {}) {
    spec.soname = soname;
    if (spec.needed.empty())
        spec.needed = {"libc.so.6"};
    auto bytes = testing::build_elf(spec);
    std::string text(bytes.size(), '\0');
    std::transform(bytes.begin(), bytes.end(), text.begin(),
                   [](std::byte b) { return static_cast<char>(b); });
    return text;
}

LdSoCache simulate_ok(const fs::FileTree& tree, const ScanOptions& options = {}) {
    auto result = simulate_ldconfig(tree, options);
    if (!result.ok())
        FAIL(result.error().text());
    return std::move(result).value();
}

using Entries = std::vector<CacheEntry>;

// The root for the referee test: merged /usr, Debian's conf layout with an include glob, two
// directories sharing a soname, glibc-hwcaps and legacy hwcap subdirectories, dev and soname
// links, and files ldconfig must pass over.
void populate_root(const TempDir& root) {
    root.make_dirs("usr/lib/x86_64-linux-gnu");
    root.make_symlink("lib", "usr/lib");
    const std::string multiarch = "usr/lib/x86_64-linux-gnu/";
    root.write_file("etc/ld.so.conf", "include /etc/ld.so.conf.d/*.conf\n");
    root.write_file("etc/ld.so.conf.d/libc.conf", "/usr/local/lib\n");
    root.write_file("etc/ld.so.conf.d/x86_64-linux-gnu.conf",
                    "/usr/local/lib/x86_64-linux-gnu\n/lib/x86_64-linux-gnu\n"
                    "/usr/lib/x86_64-linux-gnu\n");
    root.write_file("etc/ld.so.conf.d/zz-opt.conf", "/opt/b\n/opt/a\n/opt/x86_64\n/missing\n");

    root.write_file(multiarch + "libfoo.so.1.2.3", library_bytes("libfoo.so.1"));
    root.make_symlink(multiarch + "libfoo.so.1", "libfoo.so.1.2.3");
    root.make_symlink(multiarch + "libfoo.so", "libfoo.so.1");
    root.write_file(multiarch + "glibc-hwcaps/x86-64-v3/libfoo.so.1.2.3",
                    library_bytes("libfoo.so.1"));
    root.write_file(multiarch + "glibc-hwcaps/x86-64-v4/libfoo.so.1", library_bytes("libfoo.so.1"));
    root.write_file(multiarch + "tls/libfoo.so.1", library_bytes("libfoo.so.1"));
    root.write_file(multiarch + "haswell/x86_64/libfoo.so.1", library_bytes("libfoo.so.1"));
    root.write_file(multiarch + "libnosoname.so.4", library_bytes(""));
    root.write_file(multiarch + "libc.so", "/* GNU ld script */\nGROUP ( libc.so.6 )\n");
    testing::ElfSpec exec;
    exec.type = elf::k_type_exec;
    root.write_file(multiarch + "libexec.so.1", library_bytes("libexec.so.1", exec));
    testing::ElfSpec arm;
    arm.machine = elf::k_machine_aarch64;
    root.write_file(multiarch + "libarm.so.1", library_bytes("libarm.so.1", arm));
    root.write_file(multiarch + "notalib.txt", "text");
    root.make_symlink(multiarch + "other", "libfoo.so.1.2.3");

    root.write_file("usr/local/lib/libz.so.1", library_bytes("libz.so.1"));
    root.write_file("opt/a/libz.so.1", library_bytes("libz.so.1"));
    root.write_file("opt/b/libz.so.1.0", library_bytes("libz.so.1"));
    root.make_symlink("opt/b/libz.so.1", "libz.so.1.0");
    root.write_file("opt/x86_64/libq.so.2", library_bytes("libq.so.2"));
    root.make_dirs("usr/local/lib/x86_64-linux-gnu");
}

std::vector<std::byte> read_bytes(const std::string& host_path) {
    std::ifstream in(host_path, std::ios::binary);
    std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::vector<std::byte> out(chars.size());
    std::transform(chars.begin(), chars.end(), out.begin(),
                   [](char c) { return static_cast<std::byte>(c); });
    return out;
}

}  // namespace

TEST_SUITE("rootlock::loader") {
    TEST_CASE("simulate_ldconfig reproduces the real ldconfig's cache for the same root") {
        if (::access("/sbin/ldconfig", X_OK) != 0) {
            MESSAGE("no /sbin/ldconfig: the ldconfig referee check is skipped");
            return;
        }
        TempDir root;
        populate_root(root);
        // ldconfig creates soname links as it goes; the second run sees the root the simulation
        // sees, so its cache is the one to match.
        std::string command = "/sbin/ldconfig -r '" + root.path() + "' 2>/dev/null";
        REQUIRE(std::system(command.c_str()) == 0);
        REQUIRE(std::system(command.c_str()) == 0);
        auto real_bytes = read_bytes(root / "etc/ld.so.cache");
        auto real = parse_ld_so_cache(real_bytes, "/etc/ld.so.cache");
        REQUIRE(real.ok());
        std::filesystem::remove(root / "etc/ld.so.cache");

        auto tree = fs::DirectoryTree::create(root.path());
        REQUIRE(tree.ok());
        ScanOptions options;
        options.generator = real->generator;
        LdSoCache simulated = simulate_ok(**tree, options);
        CHECK(simulated.entries.size() == real->entries.size());
        for (size_t i = 0; i < std::min(simulated.entries.size(), real->entries.size()); ++i) {
            CAPTURE(i);
            CHECK(simulated.entries[i] == real->entries[i]);
        }
        CHECK(write_ld_so_cache(simulated.entries, CacheWriteOptions{simulated.generator}) ==
              real_bytes);
    }

    TEST_CASE("simulate_ldconfig keys by SONAME and points at the soname link") {
        MemoryTree tree;
        tree.add_file("/etc/ld.so.conf", "/opt/b\n/opt/a\n");
        tree.add_file("/opt/a/libz.so.1.2.13", library_bytes("libz.so.1"));
        tree.add_file("/opt/b/libz.so.1", library_bytes("libz.so.1"));
        tree.add_file("/opt/b/libplain.so", library_bytes(""));
        tree.add_file("/opt/b/libzz.so.1", "");  // empty: ldconfig passes over it
        LdSoCache cache = simulate_ok(tree);
        CHECK(cache.entries == Entries{
                                   {"libz.so.1", "/opt/b/libz.so.1", 0x0303, 0, ""},
                                   {"libz.so.1", "/opt/a/libz.so.1", 0x0303, 0, ""},
                                   {"libplain.so", "/opt/b/libplain.so", 0x0303, 0, ""},
                               });
        CHECK(cache.generator.empty());
    }

    TEST_CASE("simulate_ldconfig scans a directory reached twice only under its first name") {
        MemoryTree tree;
        tree.add_dir("/usr/lib/x86_64-linux-gnu");
        tree.add_symlink("/lib", "usr/lib");
        tree.add_file("/usr/lib/x86_64-linux-gnu/libz.so.1", library_bytes("libz.so.1"));
        tree.add_file("/usr/lib/x86_64-linux-gnu/glibc-hwcaps/x86-64-v2/libz.so.1.2",
                      library_bytes("libz.so.1"));
        tree.add_file("/usr/lib/x86_64-linux-gnu/glibc-hwcaps/.hidden/libz.so.1",
                      library_bytes("libz.so.1"));
        tree.add_file("/usr/lib/x86_64-linux-gnu/glibc-hwcaps/file", "x");
        LdSoCache cache = simulate_ok(tree);
        CHECK(cache.entries ==
              Entries{
                  {"libz.so.1", "/lib/x86_64-linux-gnu/glibc-hwcaps/x86-64-v2/libz.so.1.2", 0x0303,
                   k_ext | 0, "x86-64-v2"},
                  {"libz.so.1", "/lib/x86_64-linux-gnu/libz.so.1", 0x0303, 0, ""},
              });
    }

    TEST_CASE("simulate_ldconfig models the target's ldconfig, not the host's") {
        MemoryTree tree;
        testing::ElfSpec arm;
        arm.machine = elf::k_machine_aarch64;
        tree.add_file("/lib/aarch64-linux-gnu/libz.so.1", library_bytes("libz.so.1", arm));
        tree.add_file("/lib/aarch64-linux-gnu/libx.so.1", library_bytes("libx.so.1"));
        tree.add_dir("/lib/aarch64-linux-gnu/x86_64");  // a hwcap name only on x86
        tree.add_file("/lib/aarch64-linux-gnu/x86_64/liby.so.1", library_bytes("liby.so.1", arm));
        ScanOptions options;
        options.machine = elf::k_machine_aarch64;
        options.system_directories = {"/lib/aarch64-linux-gnu"};
        CHECK(simulate_ok(tree, options).entries ==
              Entries{{"libz.so.1", "/lib/aarch64-linux-gnu/libz.so.1", 0x0a03, 0, ""}});

        options.machine = elf::k_machine_riscv;
        auto unsupported = simulate_ldconfig(tree, options);
        REQUIRE_FALSE(unsupported.ok());
        CHECK(unsupported.error().text() == "memory: no ldconfig model for riscv ELFCLASS64");
    }

    TEST_CASE("simulate_ldconfig passes conf errors on and is empty for an empty root") {
        MemoryTree empty;
        CHECK(simulate_ok(empty).entries.empty());
        MemoryTree tree;
        tree.add_file("/etc/ld.so.conf", "include \n");
        auto result = simulate_ldconfig(tree, {});
        REQUIRE_FALSE(result.ok());
        CHECK(result.error().text() == "/etc/ld.so.conf:1: include without a pattern");
    }

    TEST_CASE("ldconfig_flags classifies objects as x86 and aarch64 ldconfig do") {
        struct Row {
            const char* what;
            elf::ElfClass elf_class;
            uint16_t machine;
            uint16_t type;
            std::vector<std::string> needed;
            std::string interpreter;
            uint16_t ldconfig_machine;
            std::optional<int32_t> flags;
        };
        using elf::ElfClass;
        const uint16_t x86 = elf::k_machine_x86_64;
        const uint16_t arm64 = elf::k_machine_aarch64;
        const uint16_t i386 = elf::k_machine_386;
        const uint16_t dyn = elf::k_type_dyn;
        const Row rows[] = {
            {"x86_64", ElfClass::elf64, x86, dyn, {}, "", x86, 0x0303},
            {"x32", ElfClass::elf32, x86, dyn, {}, "", x86, 0x0803},
            {"i386 needing libc", ElfClass::elf32, i386, dyn, {"libc.so.6"}, "", x86, 0x0003},
            {"i386 needing libm",
             ElfClass::elf32,
             i386,
             dyn,
             {"libx.so", "libm.so.6"},
             "",
             x86,
             0x0003},
            {"i386 with the loader",
             ElfClass::elf32,
             i386,
             dyn,
             {},
             "/lib/ld-linux.so.2",
             x86,
             0x0003},
            {"plain i386", ElfClass::elf32, i386, dyn, {"libx.so.1"}, "", x86, 0x0001},
            {"i386 on i386", ElfClass::elf32, i386, dyn, {"libc.so.6"}, "", i386, 0x0003},
            {"executable", ElfClass::elf64, x86, elf::k_type_exec, {}, "", x86, std::nullopt},
            {"aarch64 on x86", ElfClass::elf64, arm64, dyn, {}, "", x86, std::nullopt},
            {"aarch64", ElfClass::elf64, arm64, dyn, {}, "", arm64, 0x0a03},
            {"x86_64 on aarch64", ElfClass::elf64, x86, dyn, {}, "", arm64, std::nullopt},
        };
        for (const auto& row : rows) {
            CAPTURE(row.what);
            elf::ElfInfo info;
            info.elf_class = row.elf_class;
            info.machine = row.machine;
            info.type = row.type;
            info.has_dynamic = true;
            info.needed = row.needed;
            info.interpreter = row.interpreter;
            CHECK(ldconfig_flags(info, row.ldconfig_machine) == row.flags);
        }
        elf::ElfInfo static_object;
        static_object.machine = x86;
        static_object.type = dyn;
        CHECK(ldconfig_flags(static_object, x86) == std::nullopt);
    }

    TEST_CASE("looks_like_dso and legacy_path_hwcap follow ldconfig") {
        CHECK(looks_like_dso("libz.so.1"));
        CHECK(looks_like_dso("libz.so"));
        CHECK(looks_like_dso("ld-linux-x86-64.so.2"));
        CHECK(looks_like_dso("ld.so.1"));
        CHECK(looks_like_dso("ld64.so.2"));
        CHECK(looks_like_dso("libfoo-1.0.sox"));
        CHECK_FALSE(looks_like_dso("libz.a"));
        CHECK_FALSE(looks_like_dso("foo.so.1"));
        CHECK_FALSE(looks_like_dso("ld.so"));

        const uint16_t x86 = elf::k_machine_x86_64;
        CHECK(legacy_path_hwcap("/lib/x86_64-linux-gnu", x86) == 0);
        CHECK(legacy_path_hwcap("/lib/x86_64-linux-gnu/tls", x86) == k_hwcap_tls);
        CHECK(legacy_path_hwcap("/lib/tls/x86_64", x86) == (k_hwcap_tls | 2));
        CHECK(legacy_path_hwcap("/opt/haswell/avx512_1", x86) == ((1ULL << 50) | 4));
        CHECK(legacy_path_hwcap("/opt/sse2/lib", x86) == 0);
        CHECK(legacy_path_hwcap("/opt/x86_64", elf::k_machine_aarch64) == 0);
        CHECK(legacy_path_hwcap("/opt/tls", elf::k_machine_aarch64) == k_hwcap_tls);
    }
}

}  // namespace ROOTLOCK_UNIT_ID
