// Unit tests for OverlayTree: added nodes shadowing base ones, merged listings, placement through
// merged-/usr symlinks, ELF probes answered without bytes, and a venv with a wheel discovered.
#include <doctest/doctest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "fs/memory_tree.hpp"
#include "fs/overlay_tree.hpp"
#include "fs/path_resolve.hpp"
#include "python/environment.hpp"
#include "python/wheel_install.hpp"
#include "support/elf_writer.hpp"
#include "support/fake_root.hpp"
#include "util/sha256.hpp"

using rootlock::fs::DirEntry;
using rootlock::fs::ElfProbe;
using rootlock::fs::MemoryTree;
using rootlock::fs::NodeKind;
using rootlock::fs::OverlayTree;
using rootlock::fs::SizedFile;
namespace elf = rootlock::elf;

namespace {

std::shared_ptr<MemoryTree> merged_usr_base() {
    auto base = std::make_shared<MemoryTree>();
    base->add_dir("/usr/lib");
    base->add_dir("/usr/bin");
    base->add_symlink("/lib", "usr/lib");
    base->add_symlink("/bin", "usr/bin");
    base->add_file("/etc/a", "base a");
    base->add_file("/etc/b", "base b");
    base->add_file("/opt/x/y", "deep");
    return base;
}

std::vector<std::string> names(const std::vector<DirEntry>& entries) {
    std::vector<std::string> out;
    for (const auto& entry : entries)
        out.push_back(entry.name);
    return out;
}

std::string as_text(const std::vector<std::byte>& bytes) {
    std::string out(bytes.size(), '\0');
    if (!bytes.empty())
        std::memcpy(out.data(), bytes.data(), bytes.size());
    return out;
}

}  // namespace

TEST_SUITE("rootlock::fs") {
    TEST_CASE("an added file shadows the base file at its path and leaves the base alone") {
        auto base = merged_usr_base();
        OverlayTree tree(base);
        auto where = tree.add_file("/etc/a", "overlay a", 0600);
        REQUIRE(where.ok());
        CHECK(*where == "/etc/a");
        CHECK(tree.read_file("/etc/a").value() == "overlay a");
        CHECK(tree.lstat("/etc/a")->size == 9);
        CHECK(tree.lstat("/etc/a")->mode == 0600);
        CHECK(tree.read_file("/etc/b").value() == "base b");
        CHECK(base->read_file("/etc/a").value() == "base a");
        CHECK(tree.describe() == "memory + overlay");
    }

    TEST_CASE("listing a directory merges both sides bytewise, the added kind winning") {
        OverlayTree tree(merged_usr_base());
        REQUIRE(tree.add_file("/etc/c", "c").ok());
        REQUIRE(tree.add_symlink("/etc/b", "a").ok());
        REQUIRE(tree.add_dir("/etc/D").ok());
        REQUIRE(tree.add_file("/etc/D/deeper/f", "f").ok());
        auto entries = tree.list("/etc");
        REQUIRE(entries.ok());
        CHECK(names(*entries) == std::vector<std::string>{"D", "a", "b", "c"});
        CHECK((*entries)[0].kind == NodeKind::directory);
        CHECK((*entries)[1].kind == NodeKind::regular);
        CHECK((*entries)[2].kind == NodeKind::symlink);
        CHECK(names(*tree.list("/etc/D")) == std::vector<std::string>{"deeper"});
        CHECK(names(*tree.list("/")) ==
              std::vector<std::string>{"bin", "etc", "lib", "opt", "usr"});
        REQUIRE_FALSE(tree.list("/nowhere").ok());
        CHECK(tree.list("/nowhere").error().text() == "/nowhere: no such file or directory");
        CHECK(tree.list("/etc/c").error().text() == "/etc/c: not a directory");
    }

    TEST_CASE("a file added over a base directory hides everything below it") {
        OverlayTree tree(merged_usr_base());
        REQUIRE(tree.add_file("/opt/x", "now a file").ok());
        CHECK(tree.lstat("/opt/x")->kind == NodeKind::regular);
        CHECK_FALSE(tree.lstat("/opt/x/y").has_value());
        CHECK(tree.read_file("/opt/x/y").error().text() == "/opt/x/y: no such file or directory");
        CHECK(tree.list("/opt/x").error().text() == "/opt/x: not a directory");
        CHECK(tree.probe_elf("/opt/x/y").outcome == ElfProbe::Outcome::missing);
        // A symlink replacing the added file keeps the base directory hidden.
        REQUIRE(tree.add_symlink("/opt/x", "/usr").ok());
        CHECK(tree.readlink("/opt/x").value() == "/usr");
        CHECK_FALSE(tree.lstat("/opt/x/y").has_value());
    }

    TEST_CASE("added() lists the added nodes in path order, and shadows_base what they hide") {
        OverlayTree tree(merged_usr_base());
        REQUIRE(tree.add_file("/etc/a", "mine").ok());
        REQUIRE(tree.add_file("/opt/x", "a file over a directory").ok());
        REQUIRE(tree.add_sized_file("/lib/libz.so.1", SizedFile{4096, 0755, nullptr, "", ""}).ok());
        REQUIRE(tree.add_symlink("/srv/link", "/etc/a").ok());
        auto added = tree.added();
        std::vector<std::string> paths;
        for (const auto& node : added)
            paths.push_back(node.path);
        CHECK(paths == std::vector<std::string>{"/etc/a", "/opt/x", "/srv", "/srv/link",
                                                "/usr/lib/libz.so.1"});
        REQUIRE(added[0].content != nullptr);
        CHECK(*added[0].content == "mine");
        CHECK(added[4].content == nullptr);
        CHECK(added[4].size == 4096);
        CHECK(added[4].mode == 0755);
        CHECK(added[3].kind == NodeKind::symlink);
        CHECK(added[3].target == "/etc/a");
        CHECK(tree.shadows_base("/etc/a"));
        CHECK_FALSE(tree.shadows_base("/etc/b"));
        CHECK(tree.shadows_base("/opt/x/y"));  // under an added file
        CHECK_FALSE(tree.shadows_base("/usr/lib"));
    }

    TEST_CASE("adding through merged-/usr symlinks lands in /usr, as extracting would") {
        OverlayTree tree(merged_usr_base());
        auto where = tree.add_file("/lib/x86_64-linux-gnu/libz.so.1", "z");
        REQUIRE(where.ok());
        CHECK(*where == "/usr/lib/x86_64-linux-gnu/libz.so.1");
        CHECK(tree.lstat("/lib")->kind == NodeKind::symlink);
        CHECK(names(*tree.list("/usr/lib")) == std::vector<std::string>{"x86_64-linux-gnu"});
        auto resolved = rootlock::fs::resolve(tree, "/lib/x86_64-linux-gnu/libz.so.1");
        REQUIRE(resolved.has_value());
        CHECK(resolved->path == "/usr/lib/x86_64-linux-gnu/libz.so.1");
        CHECK(tree.add_dir("/bin").value() == "/usr/bin");
        CHECK(tree.add_file("/usr/./lib/../lib/y", "y").value() == "/usr/lib/y");
    }

    TEST_CASE("a dangling link in the parent part creates its target directory") {
        OverlayTree tree(merged_usr_base());
        REQUIRE(tree.add_symlink("/opt/venv/lib64", "lib").ok());
        CHECK(tree.add_file("/opt/venv/lib64/f", "f").value() == "/opt/venv/lib/f");
        CHECK(tree.lstat("/opt/venv/lib64")->kind == NodeKind::symlink);
    }

    TEST_CASE("placement that cannot work is one exact error") {
        auto base = merged_usr_base();
        base->add_symlink("/escape", "../../outside");
        OverlayTree tree(base);
        REQUIRE(tree.add_symlink("/l1", "l2").ok());
        REQUIRE(tree.add_symlink("/l2", "l1").ok());
        const std::vector<std::pair<rootlock::util::Result<std::string>, std::string>> rows = {
            {tree.add_file("/etc/a/b", "x"), "/etc/a/b: /etc/a is not a directory"},
            {tree.add_dir("/etc/a"), "/etc/a: /etc/a is not a directory"},
            {tree.add_file("/escape/x", "x"), "/escape/x: /escape is a symlink escaping the root"},
            {tree.add_file("/", "x"), "/: cannot replace the root"},
            {tree.add_symlink("/l1/x", "y"), "/l1/x: too many levels of symbolic links"},
        };
        for (const auto& [result, expected] : rows) {
            REQUIRE_FALSE(result.ok());
            CHECK(result.error().text() == expected);
        }
    }

    TEST_CASE("a sized file answers ELF probes from its metadata and refuses reads") {
        OverlayTree tree(merged_usr_base());
        elf::ElfInfo info;
        info.soname = "libq.so.2";
        info.needed = {"libc.so.6"};
        info.type = elf::k_type_dyn;
        SizedFile object;
        object.size = 123456789;
        object.mode = 0755;
        object.elf = std::make_shared<const elf::ElfInfo>(info);
        REQUIRE(tree.add_sized_file("/lib/libq.so.2", object).ok());
        SizedFile broken;
        broken.size = 4096;
        broken.elf_error = "libbad.so@0x40: truncated program header";
        REQUIRE(tree.add_sized_file("/usr/lib/libbad.so", broken).ok());
        SizedFile plain;
        plain.size = 10;
        REQUIRE(tree.add_sized_file("/usr/lib/short", plain).ok());
        plain.size = 100;
        REQUIRE(tree.add_sized_file("/usr/lib/data.bin", plain).ok());

        auto probe = tree.probe_elf("/usr/lib/libq.so.2", true);
        CHECK(probe.outcome == ElfProbe::Outcome::elf);
        CHECK(probe.info == object.elf);  // the same object: nothing was read or parsed
        CHECK(probe.ident_class == 2);
        CHECK(tree.lstat("/usr/lib/libq.so.2")->size == 123456789);
        CHECK(tree.read_file("/usr/lib/libq.so.2").error().text() ==
              "/usr/lib/libq.so.2: content not held in the overlay");
        auto bad = tree.probe_elf("/usr/lib/libbad.so");
        CHECK(bad.outcome == ElfProbe::Outcome::malformed);
        CHECK(bad.error == "libbad.so@0x40: truncated program header");
        CHECK(tree.probe_elf("/usr/lib/short").outcome == ElfProbe::Outcome::too_short);
        CHECK(tree.probe_elf("/usr/lib/data.bin").outcome == ElfProbe::Outcome::not_elf);
        CHECK(tree.probe_elf("/usr/lib").outcome == ElfProbe::Outcome::not_regular);
    }

    TEST_CASE("held files and base files are probed by their bytes") {
        auto base = merged_usr_base();
        rootlock::testing::add_elf(*base, "/usr/lib/libbase.so.1",
                                   rootlock::testing::library_spec("libbase.so.1"));
        OverlayTree tree(base);
        std::string bytes =
            as_text(rootlock::testing::build_elf(rootlock::testing::library_spec("libheld.so")));
        REQUIRE(tree.add_file("/usr/lib/libheld.so", bytes).ok());
        auto held = tree.probe_elf("/usr/lib/libheld.so");
        REQUIRE(held.outcome == ElfProbe::Outcome::elf);
        CHECK(held.info->soname == "libheld.so");
        auto from_base = tree.probe_elf("/usr/lib/libbase.so.1");
        REQUIRE(from_base.outcome == ElfProbe::Outcome::elf);
        CHECK(from_base.info->soname == "libbase.so.1");
        CHECK(tree.read_file("/usr/lib/libheld.so").value() == bytes);
    }

    TEST_CASE("a venv with one wheel added is discovered like an installed one") {
        auto base = std::shared_ptr<MemoryTree>(rootlock::testing::make_fake_root());
        base->add_file("/usr/bin/python3.11",
                       "\x7f"
                       "ELF",
                       0755);
        OverlayTree tree(base);
        const rootlock::python::InstallScheme scheme{"/opt/venv", "3.11.2"};
        REQUIRE(rootlock::python::add_venv(tree, scheme, "/usr/bin/python3.11").ok());

        rootlock::python::WheelScan scan;
        scan.filename.filename = "demo-1.0-cp311-cp311-linux_x86_64.whl";
        scan.dist_info = "demo-1.0.dist-info";
        scan.metadata = "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n";
        scan.wheel = "Wheel-Version: 1.0\n";
        auto entry = [](std::string path, uint64_t size) {
            rootlock::python::WheelEntry out;
            out.path = std::move(path);
            out.size = size;
            out.sha256_base64 = "47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU";
            return out;
        };
        scan.entries = {entry("demo-1.0.dist-info/METADATA", scan.metadata.size()),
                        entry("demo-1.0.dist-info/RECORD", 0),
                        entry("demo-1.0.dist-info/WHEEL", scan.wheel.size()),
                        entry("demo/__init__.py", 0), entry("demo/_ext.so", 50000000)};
        scan.entries[4].elf.emplace();
        scan.entries[4].elf->type = elf::k_type_dyn;
        scan.entries[4].elf->needed = {"libc.so.6"};
        REQUIRE(rootlock::python::add_wheel(tree, scan, scheme, true, "/usr/bin/python3.11").ok());

        CHECK(tree.read_file("/opt/venv/pyvenv.cfg").value() ==
              "home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.11.2\n");
        CHECK(tree.readlink("/opt/venv/bin/python").value() == "/usr/bin/python3.11");
        CHECK(tree.readlink("/opt/venv/bin/python3.11").value() == "python");
        CHECK(tree.readlink("/opt/venv/lib64").value() == "lib");
        CHECK(names(*tree.list("/opt/venv")) ==
              std::vector<std::string>{"bin", "include", "lib", "lib64", "pyvenv.cfg"});

        auto environments = rootlock::python::find_environments(tree, {"/opt"});
        REQUIRE(environments.ok());
        REQUIRE(environments->size() == 1);
        const auto& env = environments->front();
        CHECK(env.prefix == "/opt/venv");
        CHECK(env.is_venv);
        CHECK(env.version == "3.11");
        CHECK(env.site_packages == "/opt/venv/lib/python3.11/site-packages");
        CHECK(env.interpreter == "/usr/bin/python3.11");
        CHECK(env.problems.empty());
        REQUIRE(env.distributions.size() == 1);
        const auto& dist = env.distributions.front();
        CHECK(dist.name == "demo");
        CHECK(dist.version == "1.0");
        CHECK(dist.installer == "rootlock");
        CHECK(dist.has_record);
        CHECK(dist.installed_paths ==
              std::vector<std::string>{
                  "/opt/venv/lib/python3.11/site-packages/demo-1.0.dist-info/INSTALLER",
                  "/opt/venv/lib/python3.11/site-packages/demo-1.0.dist-info/METADATA",
                  "/opt/venv/lib/python3.11/site-packages/demo-1.0.dist-info/RECORD",
                  "/opt/venv/lib/python3.11/site-packages/demo-1.0.dist-info/REQUESTED",
                  "/opt/venv/lib/python3.11/site-packages/demo-1.0.dist-info/WHEEL",
                  "/opt/venv/lib/python3.11/site-packages/demo/__init__.py",
                  "/opt/venv/lib/python3.11/site-packages/demo/_ext.so"});
        auto resolved =
            rootlock::fs::resolve(tree, "/opt/venv/lib64/python3.11/site-packages/demo/_ext.so");
        REQUIRE(resolved.has_value());
        CHECK(resolved->path == "/opt/venv/lib/python3.11/site-packages/demo/_ext.so");
        auto probe = tree.probe_elf(resolved->path);
        REQUIRE(probe.outcome == ElfProbe::Outcome::elf);  // no bytes behind it at all
        CHECK(probe.info->needed == std::vector<std::string>{"libc.so.6"});
    }
}
