// torch's Python preload over in-memory trees: Python's glob rules for one name, which load
// failures send torch to the preload, and which file each table row finds over sys.path.
#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "check/torch_preload.hpp"
#include "fs/memory_tree.hpp"

namespace rootlock::testing {
namespace {

struct GlobCase {
    const char* pattern;
    const char* name;
    bool match;
};

std::unique_ptr<fs::MemoryTree> tree_with(const std::vector<std::string>& files) {
    auto tree = std::make_unique<fs::MemoryTree>();
    for (const auto& file : files)
        tree->add_file(file,
                       std::string("\x7f"
                                   "ELF"),
                       0755);
    return tree;
}

}  // namespace

TEST_SUITE("rootlock::check") {
    TEST_CASE("globs match names the way Python's fnmatch does") {
        const std::vector<GlobCase> cases{
            {"libcudnn.so.*[0-9]", "libcudnn.so.9", true},
            {"libcudnn.so.*[0-9]", "libcudnn.so.9.10.2", true},
            {"libcudnn.so.*[0-9]", "libcudnn.so", false},
            {"libcudnn.so.*[0-9]", "libcudnn.so.", false},
            {"libcudnn.so.*[0-9]", "libcudnn.so.9.bak", false},
            {"libcudnn.so.*[0-9]", "libcudnn_graph.so.9", false},
            {"libcublas.so.*[0-9]", "libcublasLt.so.12", false},
            {"libnvrtc.so.*[0-9]", "libnvrtc.alt.so.12", false},
            {"libnvrtc-builtins.so.*[0-9]", "libnvrtc-builtins.so.12.8", true},
            {"a?c", "abc", true},
            {"a?c", "ac", false},
            {"[!a]x", "bx", true},
            {"[!a]x", "ax", false},
            {"[]]", "]", true},
            {"[!]]", "]", false},
            {"[a-]", "-", true},
            {"[z-a]", "m", false},
            {"[^a]", "^", true},  // '^' negates only in regular expressions
            {"[^a]", "b", false},
            {"[a-", "[a-", true},  // unterminated: literal
            {"[a-", "a", false},
            {"a\\b", "a\\b", true},  // no escapes
            {"**a", "xa", true},
            {"*", "", true},
            {"", "", true},
            {"", "a", false},
            {"*.so.*[0-9]", "x.so.1.so.2", true},
            {"[\xe9]", "\xe9", true},  // bytes above 0x7f compare as bytes
        };
        for (const auto& c : cases) {
            CAPTURE(c.pattern);
            CAPTURE(c.name);
            CHECK(check::glob_match(c.pattern, c.name) == c.match);
        }
    }

    TEST_CASE("a load failure naming a table library's stem triggers the preload") {
        const std::vector<std::pair<const char*, bool>> cases{
            {"libcusparseLt.so.0", true},   {"libcublasLt.so.12", true},
            {"libcudnn_graph.so.9", true},  {"libnvrtc-builtins.so.12.8", true},
            {"libnvToolsExt.so.1", true},   {"libcufile.so.0", true},
            {"libnvshmem_host.so.3", true}, {"libcudart.so.13", true},
            {"libgomp.so.1", false},        {"libc10.so", false},
            {"libcuda.so.1", false},        {"", false},
        };
        for (const auto& [soname, expected] : cases) {
            CAPTURE(soname);
            CHECK(check::triggers_preload(soname) == expected);
        }
    }

    TEST_CASE("the table is torch's newest, cublasLt first and only nvtx optional") {
        auto table = check::preload_table();
        REQUIRE(table.size() == 17);
        CHECK(table[0].glob == "libcublasLt.so.*[0-9]");
        CHECK(table[1].glob == "libcublas.so.*[0-9]");
        CHECK(table[11].folder == "cusparselt");
        for (const auto& entry : table)
            CHECK(entry.optional == (entry.folder == "nvtx"));
    }

    TEST_CASE("each row takes the first match over sys.path: nvidia/<folder>, cu<N>, <folder>") {
        auto tree = tree_with({
            "/opt/sp/nvidia/cublas/lib/libcublasLt.so.12",
            "/opt/sp/nvidia/cublas/lib/libcublas.so.12",
            "/opt/sp/nvidia/cublas/lib/libnvblas.so.12",
            "/opt/sp/nvidia/cusparselt/lib/libcusparseLt.so.0",
            "/opt/sp/cusparselt/lib/libcusparseLt.so.0",  // 0.6.2's top-level layout loses
            "/opt/sp/cudnn/lib/libcudnn.so.9",            // ... but is found when alone
            "/opt/sp/nvidia/cu13/lib/libcudart.so.13",
            "/opt/sp/nvidia/cu13/lib/libnvrtc.so.13",
            "/opt/sp/nvidia/cu13/lib/libnvrtc-builtins.so.13.0",
        });
        const std::vector<std::string> sys_path{"", "relative", "/usr/lib/python311.zip",
                                                "/opt/sp"};
        CHECK(check::preload_files(*tree, sys_path, 0) ==
              std::vector<std::string>{
                  "/opt/sp/nvidia/cublas/lib/libcublasLt.so.12",
                  "/opt/sp/nvidia/cublas/lib/libcublas.so.12",
                  "/opt/sp/cudnn/lib/libcudnn.so.9",
                  "/opt/sp/nvidia/cusparselt/lib/libcusparseLt.so.0",
              });
        CHECK(check::preload_files(*tree, sys_path, 13) ==
              std::vector<std::string>{
                  "/opt/sp/nvidia/cublas/lib/libcublasLt.so.12",
                  "/opt/sp/nvidia/cublas/lib/libcublas.so.12",
                  "/opt/sp/cudnn/lib/libcudnn.so.9",
                  "/opt/sp/nvidia/cu13/lib/libnvrtc.so.13",
                  "/opt/sp/nvidia/cu13/lib/libnvrtc-builtins.so.13.0",
                  "/opt/sp/nvidia/cu13/lib/libcudart.so.13",
                  "/opt/sp/nvidia/cusparselt/lib/libcusparseLt.so.0",
              });
    }

    TEST_CASE("an earlier sys.path entry wins and paths come back canonical") {
        auto tree = tree_with({
            "/opt/first/nvidia/cudnn/lib/libcudnn.so.9",
            "/opt/second/nvidia/cudnn/lib/libcudnn.so.9",
            "/opt/second/nvidia/nccl/lib/libnccl.so.2.27.3",
        });
        tree->add_symlink("/sp", "opt/first");
        tree->add_symlink("/opt/second/nvidia/nccl/lib/libnccl.so.2", "libnccl.so.2.27.3");
        CHECK(check::preload_files(*tree, {"/sp", "/opt/second"}, 12) ==
              std::vector<std::string>{"/opt/first/nvidia/cudnn/lib/libcudnn.so.9",
                                       "/opt/second/nvidia/nccl/lib/libnccl.so.2.27.3"});
    }

    TEST_CASE("a dangling first match ends the search for its row, as torch's ctypes load fails") {
        auto tree = tree_with({"/opt/second/nvidia/cudnn/lib/libcudnn.so.9"});
        tree->add_symlink("/opt/first/nvidia/cudnn/lib/libcudnn.so.9", "libcudnn.so.9.10.2");
        auto plan = check::preload_plan(*tree, {"/opt/first", "/opt/second"}, 0);
        REQUIRE(plan.size() == 17);
        CHECK(plan[2].entry.folder == "cudnn");
        CHECK(plan[2].path.empty());
        CHECK(check::preload_files(*tree, {"/opt/second"}, 0) ==
              std::vector<std::string>{"/opt/second/nvidia/cudnn/lib/libcudnn.so.9"});
    }

    TEST_CASE("the plan lists every row in order, with the rows nothing answers left empty") {
        auto tree = tree_with({"/opt/sp/nvidia/nvtx/lib/libnvToolsExt.so.1"});
        auto plan = check::preload_plan(*tree, {"/opt/sp"}, 12);
        REQUIRE(plan.size() == check::preload_table().size());
        for (size_t i = 0; i + 1 < plan.size(); ++i) {
            CAPTURE(i);
            CHECK(plan[i].entry.glob == check::preload_table()[i].glob);
            CHECK(plan[i].path.empty());
        }
        CHECK(plan.back().path == "/opt/sp/nvidia/nvtx/lib/libnvToolsExt.so.1");
        CHECK(plan.back().entry.optional);
        CHECK(check::preload_files(*tree, {}, 12).empty());
    }
    TEST_CASE("each torch version preloads its own table") {
        struct Row {
            const char* version;
            size_t rows;
            bool nvtx_optional;
            bool has_cusparselt;
            bool cuda_major_dir;
        };
        const Row rows[] = {
            {"2.5.1+cu124", 12, false, false, false},
            {"2.8.0+cu128", 14, false, true, false},
            {"2.9.1+cu130", 17, true, true, true},
            {"2.11.0", 17, true, true, true},
            {"", 17, true, true, true},
            {"not a version", 17, true, true, true},
        };
        for (const auto& row : rows) {
            CAPTURE(row.version);
            auto table = check::preload_table_for(row.version);
            CHECK(table.size() == row.rows);
            bool nvtx_optional = false;
            bool cusparselt = false;
            for (const auto& entry : table) {
                if (entry.folder == "nvtx")
                    nvtx_optional = entry.optional;
                cusparselt |= entry.folder == "cusparselt";
            }
            CHECK(nvtx_optional == row.nvtx_optional);
            CHECK(cusparselt == row.has_cusparselt);
            CHECK(check::searches_cuda_major_dir(row.version) == row.cuda_major_dir);
        }
    }
}

}  // namespace rootlock::testing
