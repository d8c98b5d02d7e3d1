// Unit tests for the environment checks: missing RECORD files, shared paths, and the uninstall
// plan, the last one compared with what a real `pip uninstall` removes from a real venv.
#include <doctest/doctest.h>

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "fs/directory_tree.hpp"
#include "fs/hiding_tree.hpp"
#include "fs/memory_tree.hpp"
#include "fs/walk.hpp"
#include "python/integrity.hpp"
#include "support/temp_dir.hpp"

using rootlock::fs::MemoryTree;
using rootlock::python::find_distribution;
using rootlock::python::find_environments;
using rootlock::python::find_missing_files;
using rootlock::python::find_shared_paths;
using rootlock::python::MissingFiles;
using rootlock::python::PythonEnvironment;
using rootlock::python::SharedPath;
using rootlock::python::uninstall_paths;

namespace {

const std::string k_site = "/opt/venv/lib/python3.11/site-packages";

struct FileSpec {
    std::string path;  // relative to site-packages
    std::string size;  // the RECORD size column
};

// A dist-info whose RECORD lists `files` and its own METADATA and RECORD.
void add_dist(MemoryTree& tree, const std::string& name, const std::string& version,
              const std::vector<FileSpec>& files) {
    const std::string info = name + "-" + version + ".dist-info";
    tree.add_file(k_site + "/" + info + "/METADATA",
                  "Metadata-Version: 2.1\nName: " + name + "\nVersion: " + version + "\n");
    std::string record;
    for (const FileSpec& file : files)
        record += file.path + ",," + file.size + "\n";
    record += info + "/METADATA,,\n" + info + "/RECORD,,\n";
    tree.add_file(k_site + "/" + info + "/RECORD", record);
}

// The cu12/cu13 collision of cuda-wheels.md section 1, plus a metadata-only nccl.
void build_venv(MemoryTree& tree) {
    tree.add_file("/usr/bin/python3.11", "", 0755);
    tree.add_symlink("/opt/venv/bin/python3", "/usr/bin/python3.11");
    tree.add_file("/opt/venv/pyvenv.cfg", "home = /usr/bin\n");
    const std::vector<FileSpec> cudnn = {
        {"nvidia/__init__.py", "0"},       {"nvidia/__pycache__/__init__.cpython-311.pyc", ""},
        {"nvidia/cudnn/__init__.py", "0"}, {"nvidia/cudnn/lib/libcudnn.so.9", "1000"},
        {"nvidia/cudnn/include/", ""},
    };
    add_dist(tree, "nvidia_cudnn_cu12", "9.10.2.21", cudnn);
    add_dist(tree, "nvidia_cudnn_cu13", "9.13.0.50", cudnn);
    tree.add_dir(k_site + "/nvidia/cudnn/include");
    tree.add_file(k_site + "/nvidia/__init__.py", "");
    tree.add_file(k_site + "/nvidia/cudnn/__init__.py", "");
    tree.add_file(k_site + "/nvidia/cudnn/lib/libcudnn.so.9", std::string(1000, 'x'));
    add_dist(tree, "nvidia_nccl_cu12", "2.27.3",
             {{"nvidia/__init__.py", "0"},
              {"nvidia/nccl/__init__.py", "0"},
              {"nvidia/nccl/__pycache__/__init__.cpython-311.pyc", ""},
              {"nvidia/nccl/lib/libnccl.so.2", "5"},
              {"../../../bin/nccl-tool", "3"}});
}

PythonEnvironment venv_of(const rootlock::fs::FileTree& tree) {
    auto envs = find_environments(tree, {"/opt/venv"});
    REQUIRE(envs.ok());
    REQUIRE(envs->size() == 1);
    return envs->front();
}

}  // namespace

TEST_SUITE("rootlock::python") {
    TEST_CASE("RECORD paths that are gone are reported, except RECORD itself and bytecode") {
        MemoryTree tree;
        build_venv(tree);
        const PythonEnvironment env = venv_of(tree);
        const auto missing = find_missing_files(tree, env);
        REQUIRE(missing.size() == 1);
        CHECK(missing[0].dist == "nvidia-nccl-cu12");
        CHECK(missing[0].version == "2.27.3");
        CHECK(missing[0].paths ==
              std::vector<std::string>{"/opt/venv/bin/nccl-tool",
                                       k_site + "/nvidia/nccl/__init__.py",
                                       k_site + "/nvidia/nccl/lib/libnccl.so.2"});
    }

    TEST_CASE("a dangling symlink listed in RECORD is present") {
        MemoryTree tree;
        build_venv(tree);
        tree.add_symlink(k_site + "/nvidia/nccl/lib/libnccl.so.2", "libnccl.so.2.27.3");
        tree.add_symlink(k_site + "/nvidia/nccl/__init__.py", "/nowhere");
        tree.add_file("/opt/venv/bin/nccl-tool", "");
        const PythonEnvironment env = venv_of(tree);
        CHECK(find_missing_files(tree, env).empty());
    }

    TEST_CASE("Debian's dist-packages is left to dpkg unless asked for") {
        MemoryTree tree;
        tree.add_file("/usr/bin/python3.11", "", 0755);
        tree.add_symlink("/usr/bin/python3", "python3.11");
        const std::string site = "/usr/lib/python3/dist-packages";
        tree.add_file(site + "/pip-23.0.1.dist-info/METADATA", "Name: pip\nVersion: 23.0.1\n");
        tree.add_file(site + "/pip-23.0.1.dist-info/RECORD", "../scripts/pip,,\n");
        auto envs = find_environments(tree, {"/"});
        REQUIRE(envs.ok());
        REQUIRE(envs->size() == 1);
        CHECK(find_missing_files(tree, envs->front()).empty());
        const auto missing =
            find_missing_files(tree, envs->front(), {.include_distro_managed = true});
        REQUIRE(missing.size() == 1);
        CHECK(missing[0].paths == std::vector<std::string>{"/usr/lib/python3/scripts/pip"});
    }

    TEST_CASE("a file two distributions list is a shared path; empty files only on request") {
        MemoryTree tree;
        build_venv(tree);
        const PythonEnvironment env = venv_of(tree);
        const auto shared = find_shared_paths(env);
        REQUIRE(shared.size() == 1);
        CHECK(shared[0].path == k_site + "/nvidia/cudnn/lib/libcudnn.so.9");
        CHECK(shared[0].dists ==
              std::vector<std::string>{"nvidia-cudnn-cu12", "nvidia-cudnn-cu13"});

        const auto all = find_shared_paths(env, {.include_empty_files = true});
        REQUIRE(all.size() == 3);
        CHECK(all[0].path == k_site + "/nvidia/__init__.py");
        CHECK(all[0].dists == std::vector<std::string>{"nvidia-cudnn-cu12", "nvidia-cudnn-cu13",
                                                       "nvidia-nccl-cu12"});
        CHECK(all[1].path == k_site + "/nvidia/cudnn/__init__.py");
        CHECK(all[2].path == k_site + "/nvidia/cudnn/lib/libcudnn.so.9");
    }

    TEST_CASE("uninstalling the cu13 dist leaves the cu12 dist metadata-only") {
        MemoryTree tree;
        build_venv(tree);
        tree.add_file("/opt/venv/bin/nccl-tool", "");
        tree.add_file(k_site + "/nvidia/nccl/__init__.py", "");
        tree.add_file(k_site + "/nvidia/nccl/lib/libnccl.so.2", "12345");
        tree.add_file(k_site + "/nvidia/__pycache__/__init__.cpython-311.pyc", "");
        const PythonEnvironment env = venv_of(tree);
        REQUIRE(find_missing_files(tree, env).empty());

        const auto* cu13 = find_distribution(env, "NVIDIA.CUDNN.CU13");
        REQUIRE(cu13 != nullptr);
        const auto plan = uninstall_paths(tree, env, *cu13);
        CHECK(plan == std::set<std::string>{
                          k_site + "/nvidia/__init__.py",
                          k_site + "/nvidia/__pycache__",
                          k_site + "/nvidia/cudnn",
                          k_site + "/nvidia_cudnn_cu13-9.13.0.50.dist-info",
                      });

        rootlock::fs::HidingTree after(tree, plan);
        const PythonEnvironment env_after = venv_of(after);
        REQUIRE(env_after.distributions.size() == 2);
        const auto missing = find_missing_files(after, env_after);
        REQUIRE(missing.size() == 2);
        CHECK(missing[0].dist == "nvidia-cudnn-cu12");
        CHECK(missing[0].paths ==
              std::vector<std::string>{
                  k_site + "/nvidia/__init__.py", k_site + "/nvidia/cudnn/__init__.py",
                  k_site + "/nvidia/cudnn/include", k_site + "/nvidia/cudnn/lib/libcudnn.so.9"});
        CHECK(missing[1].dist == "nvidia-nccl-cu12");
        CHECK(missing[1].paths == std::vector<std::string>{k_site + "/nvidia/__init__.py"});
    }

    TEST_CASE("the uninstall plan stays inside a venv and keeps foreign files") {
        MemoryTree tree;
        build_venv(tree);
        tree.add_file("/opt/venv/bin/nccl-tool", "");
        tree.add_file("/opt/venv/bin/nccl-cli", "");
        tree.add_file("/opt/outside.txt", "");
        tree.add_file(k_site + "/nvidia/nccl/__init__.py", "");
        tree.add_file(k_site + "/nvidia/nccl/lib/libnccl.so.2", "12345");
        tree.add_file(k_site + "/nvidia/nccl/lib/user-notes.txt", "mine");
        tree.add_file(k_site + "/nvidia/nccl/__init__.pyc", "");  // pip's legacy twin
        const std::string info = k_site + "/nvidia_nccl_cu12-2.27.3.dist-info";
        tree.add_file(info + "/entry_points.txt",
                      "# comment\n[console_scripts]\nnccl-cli = nccl:main\nbad line\n"
                      "[other]\nnot-a-script = x:y\n");
        tree.add_file(info + "/RECORD",
                      "nvidia/nccl/__init__.py,,\nnvidia/nccl/lib/libnccl.so.2,,\n"
                      "./nvidia//nccl/lib/../lib/libnccl.so.2,,\n../../../bin/nccl-tool,,\n"
                      "../../../../outside.txt,,\nnvidia_nccl_cu12-2.27.3.dist-info/RECORD,,\n"
                      "nvidia_nccl_cu12-2.27.3.dist-info/METADATA,,\n");
        const PythonEnvironment env = venv_of(tree);
        const auto* nccl = find_distribution(env, "nvidia_nccl_cu12");
        REQUIRE(nccl != nullptr);
        const auto plan = uninstall_paths(tree, env, *nccl);
        CHECK(plan == std::set<std::string>{
                          "/opt/venv/bin/nccl-cli",
                          "/opt/venv/bin/nccl-tool",
                          k_site + "/nvidia/nccl/__init__.py",
                          k_site + "/nvidia/nccl/__init__.pyc",
                          k_site + "/nvidia/nccl/lib/libnccl.so.2",
                          info + "/METADATA",
                          info + "/RECORD",
                      });
    }
}
