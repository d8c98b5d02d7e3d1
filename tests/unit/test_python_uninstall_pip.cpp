// uninstall_paths() against the real thing: a venv on disk, two distributions sharing a file,
// and `pip uninstall -y` run in that venv; the plan must name exactly the paths pip removed.
#include <doctest/doctest.h>

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <set>
#include <string>

#include "fs/directory_tree.hpp"
#include "fs/walk.hpp"
#include "python/integrity.hpp"
#include "support/temp_dir.hpp"

using rootlock::python::find_distribution;
using rootlock::python::find_environments;
using rootlock::python::uninstall_paths;

namespace {

struct CommandResult {
    int status = -1;
    std::string output;  // stdout and stderr together
};

CommandResult run_command(const std::string& command) {
    CommandResult result;
    FILE* pipe = popen((command + " 2>&1").c_str(), "r");
    if (pipe == nullptr)
        return result;
    std::array<char, 4096> buffer{};
    size_t count = 0;
    while ((count = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) {
        result.output.append(buffer.data(), count);
    }
    const int status = pclose(pipe);
    result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return result;
}

std::set<std::string> all_paths(const rootlock::fs::FileTree& tree) {
    std::set<std::string> paths;
    rootlock::fs::walk(tree, "/", [&](const std::string& path, const rootlock::fs::NodeStat&) {
        paths.insert(path);
    });
    return paths;
}

bool is_within(const std::string& path, const std::string& dir) {
    return path == dir || (path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
                           path[dir.size()] == '/');
}

}  // namespace

TEST_SUITE("rootlock::python") {
    TEST_CASE("the uninstall plan names exactly what a real pip uninstall removes") {
        rootlock::testing::TempDir dir;
        // pip runs from the host's own installation, appended to the venv's sys.path: a venv
        // made --without-pip needs no network and no ensurepip, and pip still sees the venv
        // first and runs under it (sys.prefix, the "outside of prefix" rule).
        const CommandResult pip_dir = run_command(
            "python3 -c 'import os, pip; print(os.path.dirname(os.path.dirname(pip.__file__)))'");
        if (pip_dir.status != 0) {
            const std::string why = "skipped: no python3 with pip on PATH: " + pip_dir.output;
            MESSAGE(why);
            return;
        }
        const std::string pip_path = pip_dir.output.substr(0, pip_dir.output.find('\n'));
        const CommandResult venv =
            run_command("python3 -m venv --without-pip '" + dir / "venv" + "'");
        if (venv.status != 0) {
            const std::string why = "skipped: python3 -m venv is unavailable: " + venv.output;
            MESSAGE(why);
            return;
        }

        auto tree = rootlock::fs::DirectoryTree::create(dir.path());
        REQUIRE(tree.ok());
        auto empty = find_environments(**tree, {"/venv"});
        REQUIRE(empty.ok());
        REQUIRE(empty->size() == 1);
        const std::string version = empty->front().version;
        std::string tag = "cpython-";
        for (char c : version) {
            if (c != '.')
                tag.push_back(c);
        }
        const std::string site = "venv/lib/python" + version + "/site-packages/";

        // alpha: a package with bytecode pip did not record, a fully owned data directory (with
        // an empty directory and a directory symlink), a foreign file, symlinks, a legacy .pyc,
        // scripts via RECORD and entry points, a path outside the venv, and one shared file.
        const std::string alpha_record =
            "alpha/__init__.py,,\nalpha/core.py,,\nalpha/data/x.txt,,\nalpha/link.txt,,\n"
            "alpha/dangling,,\nalpha/gone.py,,\nalpha_mod.py,,\nshared/common.so,,\n"
            "../../../bin/alpha-tool,,\n../../../../outside.txt,,\n"
            "alpha-1.0.dist-info/METADATA,,\nalpha-1.0.dist-info/RECORD,,\n"
            "alpha-1.0.dist-info/INSTALLER,,\nalpha-1.0.dist-info/entry_points.txt,,\n";
        dir.write_file(site + "alpha-1.0.dist-info/METADATA", "Name: alpha\nVersion: 1.0\n");
        dir.write_file(site + "alpha-1.0.dist-info/RECORD", alpha_record);
        dir.write_file(site + "alpha-1.0.dist-info/INSTALLER", "pip\n");
        dir.write_file(site + "alpha-1.0.dist-info/entry_points.txt",
                       "[console_scripts]\nalpha-cli = alpha.core:main\n");
        dir.write_file(site + "alpha/__init__.py", "");
        dir.write_file(site + "alpha/core.py", "def main(): pass\n");
        dir.write_file(site + "alpha/__pycache__/__init__." + tag + ".pyc", "pyc");
        dir.write_file(site + "alpha/__pycache__/core." + tag + ".pyc", "pyc");
        dir.write_file(site + "alpha/__pycache__/core." + tag + ".opt-1.pyc", "pyc");
        dir.write_file(site + "alpha/data/x.txt", "x");
        dir.make_dirs(site + "alpha/data/empty");
        dir.make_symlink(site + "alpha/data/up", "..");
        dir.make_symlink(site + "alpha/link.txt", "data/x.txt");
        dir.make_symlink(site + "alpha/dangling", "nowhere");
        dir.write_file(site + "alpha/notes.txt", "not in RECORD");
        dir.write_file(site + "alpha_mod.py", "");
        dir.write_file(site + "alpha_mod.pyc", "legacy");
        dir.write_file(site + "__pycache__/alpha_mod." + tag + ".pyc", "pyc");
        dir.write_file(site + "shared/common.so", "both own me");
        dir.write_file("venv/bin/alpha-tool", "#!/bin/sh\n");
        dir.write_file("venv/bin/alpha-cli", "#!/bin/sh\n");
        dir.write_file("outside.txt", "outside the venv");

        dir.write_file(site + "beta-2.0.dist-info/METADATA", "Name: beta\nVersion: 2.0\n");
        dir.write_file(site + "beta-2.0.dist-info/RECORD",
                       "beta.py,,\nshared/__init__.py,,\nshared/common.so,,\n"
                       "beta-2.0.dist-info/METADATA,,\nbeta-2.0.dist-info/RECORD,,\n");
        dir.write_file(site + "beta.py", "");
        dir.write_file(site + "shared/__init__.py", "");

        auto envs = find_environments(**tree, {"/venv"});
        REQUIRE(envs.ok());
        REQUIRE(envs->size() == 1);
        const auto& env = envs->front();
        const auto* alpha = find_distribution(env, "ALPHA");
        REQUIRE(alpha != nullptr);
        const std::set<std::string> plan = uninstall_paths(**tree, env, *alpha);

        const std::set<std::string> before = all_paths(**tree);
        std::set<std::string> expected;
        for (const std::string& path : before) {
            for (const std::string& removed : plan) {
                if (is_within(path, removed))
                    expected.insert(path);
            }
        }

        const CommandResult pip = run_command(
            "cd '" + dir.path() +
            "' && PYTHONDONTWRITEBYTECODE=1 PYTHONNOUSERSITE=1 venv/bin/python -c \"import sys; "
            "sys.path.append('" +
            pip_path +
            "'); from pip._internal.cli.main import main; sys.exit(main(['--isolated', "
            "'--disable-pip-version-check', '--no-input', 'uninstall', '-y', 'alpha']))\"");
        INFO(pip.output);
        REQUIRE(pip.status == 0);

        const std::set<std::string> after = all_paths(**tree);
        std::set<std::string> removed;
        for (const std::string& path : before) {
            if (after.count(path) == 0)
                removed.insert(path);
        }
        CHECK(removed == expected);

        // The points of the model, spelled out.
        const std::string s = "/" + site;
        CHECK(removed.count(s + "shared/common.so") == 1);  // beta loses its file
        CHECK(removed.count(s + "alpha-1.0.dist-info") == 1);
        CHECK(removed.count(s + "alpha/data/empty") == 1);
        CHECK(removed.count(s + "__pycache__") == 1);
        CHECK(removed.count("/venv/bin/alpha-cli") == 1);
        CHECK(after.count(s + "alpha/notes.txt") == 1);
        CHECK(after.count(s + "alpha/dangling") == 1);
        CHECK(after.count(s + "alpha/__pycache__/core." + tag + ".opt-1.pyc") == 1);
        CHECK(after.count("/outside.txt") == 1);
    }
}
