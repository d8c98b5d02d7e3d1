// Tests for the environment's own Python version (freeze/python_version): patchlevel.h and
// conda-meta names as tables, then prefixes in a fake Debian root whose /usr/bin/python3.11 is
// 3.11.2 while the environment's interpreter is another build.
#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <vector>

#include "freeze/freeze.hpp"
#include "freeze/python_version.hpp"
#include "fs/memory_tree.hpp"
#include "python/environment.hpp"
#include "support/elf_writer.hpp"
#include "support/fake_root.hpp"

using namespace rootlock;

namespace {

// The lines of CPython 3.11's Include/patchlevel.h that matter, as it really spells them.
std::string patchlevel(const std::string& version) {
    return "/* Python version identification scheme. */\n"
           "#define PY_MAJOR_VERSION        3\n"
           "#define PY_MINOR_VERSION        11\n"
           "#define PY_MICRO_VERSION        7\n"
           "#define PY_RELEASE_LEVEL        PY_RELEASE_LEVEL_FINAL\n"
           "#define PY_RELEASE_SERIAL       0\n\n"
           "/* Version as a string */\n"
           "#define PY_VERSION              \"" +
           version +
           "\"\n/*--end constants--*/\n"
           "#define PY_VERSION_HEX ((PY_MAJOR_VERSION << 24) | \\\n"
           "                        (PY_MINOR_VERSION << 16))\n";
}

// A Debian root (its /usr/bin/python3.11 is 3.11.2 by dpkg) with a prefix at `prefix` that has
// its own bin/python3.11 and one distribution in lib/python3.11/site-packages.
std::unique_ptr<fs::MemoryTree> root_with_prefix(const std::string& prefix) {
    auto root = testing::make_fake_root();
    testing::add_elf(*root, "/usr/bin/python3.11", testing::program_spec({"libc.so.6"}));
    root->add_file("/var/lib/dpkg/status",
                   "Package: python3.11\nStatus: install ok installed\nVersion: 3.11.2-6\n");
    testing::add_elf(*root, prefix + "/bin/python3.11", testing::program_spec({"libc.so.6"}));
    root->add_symlink(prefix + "/bin/python3", "python3.11");
    const std::string site = prefix + "/lib/python3.11/site-packages";
    root->add_file(site + "/six.py", "");
    root->add_file(site + "/six-1.17.0.dist-info/METADATA",
                   "Metadata-Version: 2.1\nName: six\nVersion: 1.17.0\n");
    root->add_file(site + "/six-1.17.0.dist-info/RECORD",
                   "six.py,,\nsix-1.17.0.dist-info/METADATA,,\nsix-1.17.0.dist-info/RECORD,,\n");
    return root;
}

python::PythonEnvironment environment_at(const fs::FileTree& tree, const std::string& prefix) {
    auto found = python::find_environments(tree, {prefix});
    REQUIRE(found.ok());
    REQUIRE(found->size() == 1);
    return found->front();
}

freeze::FreezeResult freeze_ok(const fs::FileTree& tree, const std::string& prefix) {
    auto result = freeze::freeze_environment(tree, {prefix, 1});
    if (!result.ok())
        FAIL(result.error().text());
    return std::move(result).value();
}

}  // namespace

TEST_SUITE("rootlock::freeze") {
    TEST_CASE("patchlevel.h gives PY_VERSION; anything else gives nothing") {
        CHECK(freeze::parse_patchlevel(patchlevel("3.11.7")) == "3.11.7");
        CHECK(freeze::parse_patchlevel(patchlevel("3.13.0rc1")) == "3.13.0rc1");
        CHECK(freeze::parse_patchlevel(patchlevel("3.12.1+")) == "3.12.1+");
        CHECK(freeze::parse_patchlevel("#  define PY_VERSION \"3.9.18\"\n") == "3.9.18");
        const std::vector<std::string> refused = {
            "",
            "#define PY_MAJOR_VERSION 3\n",
            "#define PY_VERSION_HEX 0x030b07f0\n",  // another macro with the same start
            "// #define PY_VERSION \"3.11.7\"\n",   // not a directive
            "#define PY_VERSION \"3.11\"\n",        // no micro version
            "#define PY_VERSION \"3.11.x\"\n",
            "#define PY_VERSION \"3.11.7\n",  // unterminated
            "#define PY_VERSION 3.11.7\n",
            "#define PY_VERSION \"3.11.7rc\"\n",
        };
        for (const std::string& text : refused) {
            CAPTURE(text);
            CHECK(freeze::parse_patchlevel(text) == std::nullopt);
        }
    }

    TEST_CASE("a conda-meta record names python's version; other packages do not") {
        CHECK(freeze::conda_python_version("python-3.11.7-h955ad1f_0.json", "3.11") == "3.11.7");
        CHECK(freeze::conda_python_version("python-3.13.0-h9ebbce0_100_cp313.json", "3.13") ==
              "3.13.0");
        for (const char* name :
             {"python-dateutil-2.9.0-pyhd8ed1ab_0.json", "python-3.11.7-h955ad1f_0.txt",
              "python-3.12.1-h955ad1f_0.json", "python_abi-3.11-4_cp311.json", "python-3.11.7.json",
              "python-3.1.5-h0_0.json"}) {
            CAPTURE(name);
            CHECK(freeze::conda_python_version(name, "3.11") == std::nullopt);
        }
    }

    TEST_CASE("a pyenv prefix's version comes from its own headers, not from the root's Python") {
        const std::string prefix = "/root/.pyenv/versions/3.11.7";
        auto root = root_with_prefix(prefix);
        root->add_file(prefix + "/include/python3.11/patchlevel.h", patchlevel("3.11.7"));
        // Debian's own headers of the root's Python must not answer for the prefix.
        root->add_file("/usr/include/python3.11/patchlevel.h", patchlevel("3.11.2"));
        const auto env = environment_at(*root, prefix);
        const freeze::EnvironmentPython own = freeze::environment_python(*root, env);
        CHECK(own.prefix == prefix);
        CHECK(own.version == "3.11.7");
        CHECK(own.source == prefix + "/include/python3.11/patchlevel.h");

        const freeze::FreezeResult result = freeze_ok(*root, prefix);
        REQUIRE(result.lock.rootlock.has_value());
        CHECK(result.lock.rootlock->target.python_full == "3.11.7");
        CHECK(result.lock.rootlock->target.glibc == "2.34");
        CHECK(result.notes ==
              std::vector<std::string>{"the environment's Python 3.11.7 (" + prefix +
                                       "/include/python3.11/patchlevel.h) is not the root's "
                                       "/usr/bin/python3.11 3.11.2"});
    }

    TEST_CASE("a conda prefix without headers is read from its conda-meta record") {
        const std::string prefix = "/opt/conda";
        auto root = root_with_prefix(prefix);
        root->add_file(prefix + "/conda-meta/python-dateutil-2.9.0-pyhd8ed1ab_0.json", "{}");
        root->add_file(prefix + "/conda-meta/python-3.11.9-h955ad1f_0.json", "{}");
        const auto env = environment_at(*root, prefix);
        const freeze::EnvironmentPython own = freeze::environment_python(*root, env);
        CHECK(own.version == "3.11.9");
        CHECK(own.source == prefix + "/conda-meta/python-3.11.9-h955ad1f_0.json");
        CHECK(freeze_ok(*root, prefix).lock.rootlock->target.python_full == "3.11.9");
    }

    TEST_CASE("headers of another minor, or none at all, leave the full version unknown") {
        const std::string prefix = "/opt/py";
        auto root = root_with_prefix(prefix);
        root->add_file(prefix + "/include/python3.1/patchlevel.h", patchlevel("3.1.5"));
        root->add_file(prefix + "/include/python3.11/patchlevel.h", patchlevel("3.12.1"));
        const freeze::FreezeResult result = freeze_ok(*root, prefix);
        // The root's 3.11.2 is another interpreter: it is not the environment's version.
        CHECK(result.lock.rootlock->target.python_full.empty());
        CHECK(result.lock.rootlock->target.python == "3.11");
        CHECK(result.notes ==
              std::vector<std::string>{
                  prefix +
                  "/bin/python3.11: the environment's Python 3.11 names no full version (no "
                  "include/python3.11/patchlevel.h or conda-meta record): python-full left "
                  "empty"});
    }

    TEST_CASE("a venv's pyvenv.cfg version wins, and differing from the root's is said") {
        const std::string prefix = "/root/.pyenv/versions/3.11.7";
        auto root = root_with_prefix(prefix);
        root->add_file("/opt/venv/pyvenv.cfg", "home = " + prefix + "/bin\nversion = 3.11.8\n");
        root->add_symlink("/opt/venv/bin/python3", prefix + "/bin/python3.11");
        root->add_file("/opt/venv/lib/python3.11/site-packages/.keep", "");
        root->add_file(prefix + "/include/python3.11/patchlevel.h", patchlevel("3.11.7"));
        const freeze::FreezeResult result = freeze_ok(*root, "/opt/venv");
        CHECK(result.lock.rootlock->target.python_full == "3.11.8");
        CHECK(result.notes == std::vector<std::string>{
                                  "the environment's Python 3.11.8 (/opt/venv/pyvenv.cfg) is not "
                                  "the root's /usr/bin/python3.11 3.11.2"});
    }

    TEST_CASE("a venv of the root's own Python keeps dpkg's version and says nothing") {
        auto root = testing::make_fake_root();
        testing::add_elf(*root, "/usr/bin/python3.11", testing::program_spec({"libc.so.6"}));
        root->add_file("/var/lib/dpkg/status",
                       "Package: python3.11\nStatus: install ok installed\nVersion: 3.11.2-6\n");
        root->add_file("/opt/venv/pyvenv.cfg", "home = /usr/bin\n");
        root->add_symlink("/opt/venv/bin/python3", "/usr/bin/python3.11");
        root->add_file("/opt/venv/lib/python3.11/site-packages/.keep", "");
        const freeze::FreezeResult result = freeze_ok(*root, "/opt/venv");
        CHECK(result.lock.rootlock->target.python_full == "3.11.2");
        CHECK(result.notes.empty());
    }
}
