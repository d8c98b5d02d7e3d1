// Unit tests for environment discovery over in-memory roots: venvs and system site-packages,
// interpreters through symlink chains, distributions, and the problems a broken dist-info gives.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "fs/memory_tree.hpp"
#include "python/environment.hpp"

using rootlock::fs::MemoryTree;
using rootlock::python::find_distribution;
using rootlock::python::find_environments;
using rootlock::python::parse_pyvenv_cfg;
using rootlock::python::PythonEnvironment;

namespace {

// A dist-info with METADATA and a RECORD listing `files` plus its own files (no hashes).
void add_dist(MemoryTree& tree, const std::string& site, const std::string& name,
              const std::string& version, const std::vector<std::string>& files) {
    const std::string info = name + "-" + version + ".dist-info";
    tree.add_file(site + "/" + info + "/METADATA",
                  "Metadata-Version: 2.1\nName: " + name + "\nVersion: " + version + "\n");
    std::string record;
    for (const std::string& file : files)
        record += file + ",,\n";
    record += info + "/METADATA,,\n" + info + "/RECORD,,\n";
    tree.add_file(site + "/" + info + "/RECORD", record);
}

// A root with a venv, Debian's two system locations and a venv whose interpreter is gone.
void build_root(MemoryTree& tree) {
    tree.add_file("/usr/bin/python3.11",
                  "\x7f"
                  "ELF",
                  0755);
    tree.add_symlink("/usr/bin/python3", "python3.11");

    const std::string system = "/usr/lib/python3/dist-packages";
    add_dist(tree, system, "six", "1.16.0", {"six.py"});
    tree.add_file(system + "/six.py", "");
    tree.add_dir("/usr/lib/python3.11/encodings");  // the stdlib: examined, never walked
    const std::string local = "/usr/local/lib/python3.11/dist-packages";
    add_dist(tree, local, "requests", "2.31.0", {"requests/__init__.py"});
    tree.add_file(local + "/requests/__init__.py", "");

    tree.add_file("/opt/venv/pyvenv.cfg",
                  "home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.11.2\n");
    tree.add_symlink("/opt/venv/bin/python", "python3");
    tree.add_symlink("/opt/venv/bin/python3", "/usr/bin/python3");
    tree.add_symlink("/opt/venv/lib64", "lib");
    const std::string site = "/opt/venv/lib/python3.11/site-packages";
    add_dist(tree, site, "torch", "2.8.0", {"torch/__init__.py", "../../../bin/torchrun"});
    tree.add_file(site + "/torch/__init__.py", "");
    tree.add_file("/opt/venv/bin/torchrun", "#!/opt/venv/bin/python3\n", 0755);
    tree.add_file(site + "/torch-2.8.0.dist-info/INSTALLER", "pip\n");
    add_dist(tree, site, "nvidia_cudnn_cu12", "9.10.2.21", {"nvidia/cudnn/lib/libcudnn.so.9"});
    tree.add_file(site + "/broken-1.0.dist-info/METADATA", "Name: broken\nVersion: 1.0\n");
    tree.add_file(site + "/nameless-2.0.dist-info/METADATA", "Version: 2.0\n");
    tree.add_file(site + "/nameless-2.0.dist-info/RECORD", "a,,\nb\n");
    tree.add_file(site + "/old.egg-info/PKG-INFO", "Name: old\nVersion: 1\n");

    tree.add_file("/home/u/proj/.venv/pyvenv.cfg", "home = /opt/python/bin\n");
    tree.add_symlink("/home/u/proj/.venv/bin/python3", "/opt/python/bin/python3.12");
    tree.add_dir("/home/u/proj/.venv/lib/python3.12/site-packages");
}

std::vector<std::string> site_packages_of(const std::vector<PythonEnvironment>& envs) {
    std::vector<std::string> out;
    for (const auto& env : envs)
        out.push_back(env.site_packages);
    return out;
}

}  // namespace

TEST_SUITE("rootlock::python") {
    TEST_CASE("the whole root finds venvs and system site-packages, each once and sorted") {
        MemoryTree tree;
        build_root(tree);
        auto envs = find_environments(tree, {"/"});
        REQUIRE(envs.ok());
        CHECK(site_packages_of(*envs) ==
              std::vector<std::string>{"/home/u/proj/.venv/lib/python3.12/site-packages",
                                       "/opt/venv/lib/python3.11/site-packages",
                                       "/usr/lib/python3/dist-packages",
                                       "/usr/local/lib/python3.11/dist-packages"});
    }

    TEST_CASE("a venv gives its prefix, version, pyvenv.cfg and resolved interpreter") {
        MemoryTree tree;
        build_root(tree);
        auto envs = find_environments(tree, {"/opt"});
        REQUIRE(envs.ok());
        REQUIRE(envs->size() == 1);
        const PythonEnvironment& env = envs->front();
        CHECK(env.prefix == "/opt/venv");
        CHECK(env.site_packages == "/opt/venv/lib/python3.11/site-packages");
        CHECK(env.version == "3.11");
        CHECK(env.is_venv);
        REQUIRE(env.pyvenv.has_value());
        CHECK(env.pyvenv->home == "/usr/bin");
        CHECK(env.pyvenv->version == "3.11.2");
        CHECK_FALSE(env.pyvenv->include_system_site_packages);
        CHECK_FALSE(env.managed_by_distro);
        CHECK(env.interpreter == "/usr/bin/python3.11");
    }

    TEST_CASE("a venv's distributions carry metadata, RECORD and root-absolute paths") {
        MemoryTree tree;
        build_root(tree);
        auto envs = find_environments(tree, {"/opt/venv"});
        REQUIRE(envs.ok());
        REQUIRE(envs->size() == 1);
        const PythonEnvironment& env = envs->front();
        REQUIRE(env.distributions.size() == 4);
        CHECK(env.distributions[0].name == "broken");
        CHECK(env.distributions[1].name == "nameless");
        CHECK(env.distributions[2].name == "nvidia-cudnn-cu12");
        CHECK(env.distributions[2].display_name == "nvidia_cudnn_cu12");
        const auto* torch = find_distribution(env, "Torch");
        REQUIRE(torch != nullptr);
        CHECK(torch->version == "2.8.0");
        CHECK(torch->installer == "pip");
        CHECK(torch->has_record);
        CHECK(torch->dist_info_path ==
              "/opt/venv/lib/python3.11/site-packages/torch-2.8.0.dist-info");
        REQUIRE(torch->installed_paths.size() == 4);
        CHECK(torch->installed_paths[0] ==
              "/opt/venv/lib/python3.11/site-packages/torch/__init__.py");
        CHECK(torch->installed_paths[1] == "/opt/venv/bin/torchrun");
        CHECK(torch->record[1].path == "../../../bin/torchrun");
    }

    TEST_CASE("a missing RECORD or bad METADATA is a problem of the environment, not a failure") {
        MemoryTree tree;
        build_root(tree);
        auto envs = find_environments(tree, {"/opt/venv"});
        REQUIRE(envs.ok());
        const PythonEnvironment& env = envs->front();
        const std::string site = "/opt/venv/lib/python3.11/site-packages";
        CHECK(env.problems ==
              std::vector<std::string>{
                  site + "/broken-1.0.dist-info/RECORD: missing (pip cannot uninstall the "
                         "distribution, nor can its files be checked)",
                  site + "/nameless-2.0.dist-info/METADATA: missing Name header",
                  site + "/nameless-2.0.dist-info/RECORD:2: expected 3 fields, found 1"});
        const auto* nameless = find_distribution(env, "nameless");
        REQUIRE(nameless != nullptr);
        CHECK(nameless->version == "2.0");
        CHECK_FALSE(nameless->has_record);
        CHECK(nameless->installed_paths.empty());
    }

    TEST_CASE("two dist-info directories of one project are a problem") {
        MemoryTree tree;
        tree.add_file("/usr/bin/python3.11", "", 0755);
        const std::string site = "/usr/local/lib/python3.11/dist-packages";
        add_dist(tree, site, "torch", "2.7.0", {});
        add_dist(tree, site, "Torch", "2.8.0", {});
        auto envs = find_environments(tree, {"/"});
        REQUIRE(envs.ok());
        REQUIRE(envs->size() == 1);
        CHECK(envs->front().problems ==
              std::vector<std::string>{site + ": torch is installed twice: Torch-2.8.0.dist-info, "
                                              "torch-2.7.0.dist-info"});
    }

    TEST_CASE("a venv whose interpreter is gone reports it") {
        MemoryTree tree;
        build_root(tree);
        auto envs = find_environments(tree, {"/home"});
        REQUIRE(envs.ok());
        REQUIRE(envs->size() == 1);
        const PythonEnvironment& env = envs->front();
        CHECK(env.version == "3.12");
        CHECK_FALSE(env.interpreter.has_value());
        CHECK(env.problems == std::vector<std::string>{
                                  "/home/u/proj/.venv/bin/python3: the venv's interpreter does "
                                  "not resolve inside the root"});
    }

    TEST_CASE("a venv without a bin link falls back to pyvenv.cfg's home") {
        MemoryTree tree;
        tree.add_file("/opt/py/bin/python3.10", "", 0755);
        tree.add_file("/v/pyvenv.cfg", "Home=/opt/py/bin\nversion_info = 3.10.4.final.0\n");
        tree.add_dir("/v/lib/python3.10/site-packages");
        auto envs = find_environments(tree, {"/v"});
        REQUIRE(envs.ok());
        REQUIRE(envs->size() == 1);
        CHECK(envs->front().interpreter == "/opt/py/bin/python3.10");
        CHECK(envs->front().pyvenv->version == "3.10.4.final.0");
        CHECK(envs->front().problems.empty());
    }

    TEST_CASE("system environments find their version and interpreter in /usr/bin") {
        MemoryTree tree;
        build_root(tree);
        auto envs = find_environments(tree, {"/usr"});
        REQUIRE(envs.ok());
        REQUIRE(envs->size() == 2);
        const PythonEnvironment& debian = (*envs)[0];
        CHECK(debian.prefix == "/usr");
        CHECK(debian.version == "3.11");
        CHECK(debian.managed_by_distro);
        CHECK_FALSE(debian.is_venv);
        CHECK(debian.interpreter == "/usr/bin/python3.11");
        CHECK(debian.distributions.size() == 1);
        const PythonEnvironment& local = (*envs)[1];
        CHECK(local.prefix == "/usr/local");
        CHECK(local.version == "3.11");
        CHECK_FALSE(local.managed_by_distro);
        CHECK(local.interpreter == "/usr/bin/python3.11");
        CHECK(local.problems.empty());
    }

    TEST_CASE("a path inside a site-packages finds that environment alone") {
        MemoryTree tree;
        build_root(tree);
        auto envs = find_environments(tree, {"/opt/venv/lib64/python3.11/site-packages/torch"});
        REQUIRE(envs.ok());
        CHECK(site_packages_of(*envs) ==
              std::vector<std::string>{"/opt/venv/lib/python3.11/site-packages"});
    }

    TEST_CASE("a given path that does not exist is an error") {
        MemoryTree tree;
        auto envs = find_environments(tree, {"/nope"});
        REQUIRE_FALSE(envs.ok());
        CHECK(envs.error().text() == "/nope: no such file or directory");
    }

    TEST_CASE("the search stays within its depth and out of pruned trees") {
        MemoryTree tree;
        tree.add_file("/a/b/c/d/e/f/venv/pyvenv.cfg", "");
        tree.add_dir("/a/b/c/d/e/f/venv/lib/python3.11/site-packages");
        tree.add_file("/usr/share/x/venv/pyvenv.cfg", "");
        tree.add_dir("/usr/share/x/venv/lib/python3.11/site-packages");
        tree.add_symlink("/link", "/a");
        auto from_root = find_environments(tree, {"/"});
        REQUIRE(from_root.ok());
        CHECK(from_root->empty());
        auto closer = find_environments(tree, {"/a/b"});
        REQUIRE(closer.ok());
        CHECK(site_packages_of(*closer) ==
              std::vector<std::string>{"/a/b/c/d/e/f/venv/lib/python3.11/site-packages"});
        auto through_link = find_environments(tree, {"/link/b/c"});
        REQUIRE(through_link.ok());
        CHECK(through_link->size() == 1);
        for (const char* named : {"/usr/share", "/usr/share/x"}) {
            CAPTURE(named);
            auto pruned = find_environments(tree, {named});
            REQUIRE(pruned.ok());
            CHECK(pruned->size() == 1);  // named, a pruned tree is searched
        }
    }

    TEST_CASE("pyvenv.cfg is read as site.py reads it") {
        auto cfg = parse_pyvenv_cfg(
            "home = /usr/bin\r\nINCLUDE-SYSTEM-SITE-PACKAGES = True\nno equals sign\n"
            "version = 3.12.1\nversion_info = 3.12.1.final.0\n");
        CHECK(cfg.home == "/usr/bin");
        CHECK(cfg.include_system_site_packages);
        CHECK(cfg.version == "3.12.1");
        CHECK(parse_pyvenv_cfg("").home.empty());
    }

    TEST_CASE("distribution lookups accept every PEP 503 spelling") {
        PythonEnvironment env;
        env.distributions.push_back({});
        env.distributions.back().name = "nvidia-cudnn-cu13";
        for (const char* spelling :
             {"nvidia_cudnn_cu13", "nvidia-cudnn-cu13", "NVIDIA.CUDNN.CU13"}) {
            CAPTURE(spelling);
            CHECK(find_distribution(env, spelling) == &env.distributions.back());
        }
        CHECK(find_distribution(env, "nvidia-cudnn-cu12") == nullptr);
    }
}
