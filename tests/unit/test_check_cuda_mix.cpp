// CUDA majors in one process over in-memory roots: a mix is a warning until a failure follows
// from it, libraries nothing loads never make one (cuda-unloaded-major instead), and missing
// sonames name the metadata-only distribution whose RECORD lists them, with a remedy.
#include <doctest/doctest.h>

#include "check/closure_check.hpp"
#include "support/fake_root.hpp"

namespace rootlock::testing::ROOTLOCK_UNIT_ID {
namespace {

check::CheckReport run(const fs::FileTree& tree, std::vector<std::string> paths = {"/"}) {
    check::CheckOptions options;
    options.paths = std::move(paths);
    auto report = check::run_check(tree, options);
    REQUIRE(report.ok());
    return std::move(report.value());
}

std::vector<std::string> kinds(const check::CheckReport& report) {
    std::vector<std::string> out;
    for (const auto& p : report.problems)
        out.push_back(p.kind + (p.severity == check::Severity::error ? "" : " (warning)"));
    return out;
}

const check::Problem& only(const check::CheckReport& report, const std::string& kind) {
    const check::Problem* found = nullptr;
    for (const auto& p : report.problems) {
        if (p.kind == kind) {
            REQUIRE(found == nullptr);
            found = &p;
        }
    }
    REQUIRE(found != nullptr);
    return *found;
}

// /opt/cuda/app loading cudart 12 and 13 through its RPATH, plus `extra` needs.
void add_mixed_app(fs::MemoryTree& tree, std::vector<std::string> extra = {}) {
    std::vector<std::string> needed{"libcudart.so.12", "libcudart.so.13"};
    needed.insert(needed.end(), extra.begin(), extra.end());
    ElfSpec app = program_spec(needed);
    app.rpath = "/opt/cuda";
    add_elf(tree, "/opt/cuda/app", app);
    for (const char* soname : {"libcudart.so.12", "libcudart.so.13"})
        add_elf(tree, std::string("/opt/cuda/") + soname, library_spec(soname));
}

SymbolSpec undefined_data(const std::string& name) {
    SymbolSpec symbol;
    symbol.name = name;
    symbol.defined = false;
    symbol.type = elf::k_stt_object;
    symbol.relocation = Relocation::data;
    return symbol;
}

// A venv at /opt/venv whose nvidia-cudnn-cu12 RECORD lists libcudnn.so.9, the file gone, and
// torch's library needing it.
void add_metadata_only_venv(fs::MemoryTree& tree, const std::string& installer) {
    add_elf(tree, "/usr/bin/python3.11", program_spec({"libc.so.6"}));
    const std::string site = "/opt/venv/lib/python3.11/site-packages";
    tree.add_file("/opt/venv/pyvenv.cfg", std::string("home = /usr/bin\nversion = 3.11.2\n"));
    tree.add_symlink("/opt/venv/bin/python3", "/usr/bin/python3.11");
    const std::string info = site + "/nvidia_cudnn_cu12-9.10.2.21.dist-info";
    tree.add_file(info + "/METADATA", std::string("Metadata-Version: 2.1\nName: nvidia-cudnn-cu12\n"
                                                  "Version: 9.10.2.21\n"));
    tree.add_file(info + "/INSTALLER", installer);
    tree.add_file(info + "/RECORD",
                  std::string("nvidia/cudnn/lib/libcudnn.so.9,,1000\n"
                              "nvidia_cudnn_cu12-9.10.2.21.dist-info/METADATA,,\n"
                              "nvidia_cudnn_cu12-9.10.2.21.dist-info/INSTALLER,,\n"
                              "nvidia_cudnn_cu12-9.10.2.21.dist-info/RECORD,,\n"));
    ElfSpec torch_cuda = library_spec("libtorch_cuda.so", {"libcudnn.so.9"});
    torch_cuda.rpath = "$ORIGIN/../../nvidia/cudnn/lib";
    add_elf(tree, site + "/torch/lib/libtorch_cuda.so", torch_cuda);
    ElfSpec ext = library_spec("", {"libtorch_cuda.so"});
    ext.rpath = "$ORIGIN/lib";
    add_elf(tree, site + "/torch/_C.cpython-311-x86_64-linux-gnu.so", ext);
}

}  // namespace

TEST_SUITE("rootlock::check") {
    TEST_CASE("two CUDA majors in one process that loads them both are a warning") {
        auto tree = make_fake_root();
        add_mixed_app(*tree);
        auto report = run(*tree);
        CHECK(report.ok);
        REQUIRE(kinds(report) == std::vector<std::string>{"cuda-major-mix (warning)"});
        const auto& f = report.problems[0].fields;
        CHECK(f["family"] == "cudart");
        CHECK(f["majors"] == nlohmann::ordered_json({12, 13}));
        CHECK(f["objects"] ==
              nlohmann::ordered_json({"/opt/cuda/libcudart.so.12", "/opt/cuda/libcudart.so.13"}));
        CHECK_FALSE(f.contains("failures"));
    }

    TEST_CASE("a mix is an error when a CUDA library of that process is missing") {
        auto tree = make_fake_root();
        add_mixed_app(*tree, {"libcublas.so.13"});
        auto report = run(*tree);
        CHECK_FALSE(report.ok);
        REQUIRE(kinds(report) == std::vector<std::string>{"missing-soname", "cuda-major-mix"});
        const auto& mix = report.problems[1];
        CHECK(mix.severity == check::Severity::error);
        CHECK(mix.fields["failures"] ==
              nlohmann::ordered_json({"libcublas.so.13 not found (needed by /opt/cuda/app)"}));
    }

    TEST_CASE("a mix is an error when a symbol its CUDA users need is undefined") {
        auto tree = make_fake_root();
        add_mixed_app(*tree, {"libcudaapp.so"});
        ElfSpec user = library_spec("libcudaapp.so", {"libcudart.so.13"});
        user.symbols = {undefined_data("cudaGraphGone")};
        add_elf(*tree, "/opt/cuda/libcudaapp.so", user);
        auto report = run(*tree);
        CHECK_FALSE(report.ok);
        const auto& mix = only(report, "cuda-major-mix");
        CHECK(mix.severity == check::Severity::error);
        CHECK(mix.fields["failures"] ==
              nlohmann::ordered_json(
                  {"undefined symbol cudaGraphGone (needed by /opt/cuda/libcudaapp.so)"}));
    }

    TEST_CASE("two copies of one CUDA soname in a mixed process make it an error") {
        auto tree = make_fake_root();
        // A DT_NEEDED path is loaded by path: the loaded copy's SONAME does not answer it.
        add_mixed_app(*tree, {"/opt/other/libcudart.so.12"});
        add_elf(*tree, "/opt/other/libcudart.so.12", library_spec("libcudart.so.12"));
        auto report = run(*tree);
        const auto& mix = only(report, "cuda-major-mix");
        CHECK(mix.severity == check::Severity::error);
        CHECK(mix.fields["failures"] ==
              nlohmann::ordered_json({"two copies of libcudart.so.12 loaded: "
                                      "/opt/cuda/libcudart.so.12 and /opt/other/libcudart.so.12"}));
        CHECK_FALSE(report.ok);
    }

    TEST_CASE("a failure of the process that concerns no CUDA library leaves the mix a warning") {
        auto tree = make_fake_root();
        add_mixed_app(*tree, {"libhelper.so"});
        add_elf(*tree, "/opt/cuda/libhelper.so", library_spec("libhelper.so", {"libgone.so.1"}));
        auto report = run(*tree);
        CHECK_FALSE(report.ok);
        REQUIRE(kinds(report) ==
                std::vector<std::string>{"missing-soname", "cuda-major-mix (warning)"});
    }

    TEST_CASE("libraries nothing loads never make a mix: one warning names their major") {
        auto tree = make_fake_root();
        ElfSpec app = program_spec({"libcudart.so.12"});
        app.rpath = "/opt/cuda";
        add_elf(*tree, "/opt/cuda/app", app);
        add_elf(*tree, "/opt/cuda/libcudart.so.12", library_spec("libcudart.so.12"));
        // Loaded on its own, libcublas.so.13 would find cudart 12 through the cache: no process.
        add_elf(*tree, "/opt/cu13/libcudart.so.13", library_spec("libcudart.so.13"));
        ElfSpec cublas = library_spec("libcublas.so.13", {"libcudart.so.13", "libcudart.so.12"});
        cublas.runpath = "$ORIGIN:/opt/cuda";
        add_elf(*tree, "/opt/cu13/libcublas.so.13", cublas);
        auto report = run(*tree);
        CHECK(report.ok);
        REQUIRE(kinds(report) == std::vector<std::string>{"cuda-unloaded-major (warning)"});
        const auto& f = report.problems[0].fields;
        CHECK(f["cuda_major"] == 13);
        CHECK(f["loaded_majors"] == nlohmann::ordered_json({12}));
        CHECK(f["libraries"] ==
              nlohmann::ordered_json({"/opt/cu13/libcublas.so.13", "/opt/cu13/libcudart.so.13"}));
        CHECK(f["distributions"] == nlohmann::ordered_json::array());
    }

    TEST_CASE("a missing soname names the metadata-only distribution and pip's reinstall line") {
        auto tree = make_fake_root();
        add_metadata_only_venv(*tree, "pip\n");
        auto report = run(*tree, {"/opt/venv"});
        const auto& missing = only(report, "missing-soname");
        CHECK(missing.fields["owner"] ==
              nlohmann::ordered_json::parse(R"({"dist": "nvidia-cudnn-cu12",
                  "version": "9.10.2.21",
                  "path": "/opt/venv/lib/python3.11/site-packages/nvidia/cudnn/lib/libcudnn.so.9",
                  "environment": "/opt/venv/lib/python3.11/site-packages"})"));
        // No pip in the venv: its python, by the venv's path, so that pip installs there.
        CHECK(missing.fields["remedy"] ==
              "/opt/venv/bin/python3 -m pip install --force-reinstall --no-deps "
              "nvidia-cudnn-cu12==9.10.2.21");
        tree->add_file("/opt/venv/bin/pip", std::string("#!/opt/venv/bin/python3\n"), 0755);
        auto with_pip = run(*tree, {"/opt/venv"});
        CHECK(only(with_pip, "missing-soname").fields["remedy"] ==
              "/opt/venv/bin/pip install --force-reinstall --no-deps nvidia-cudnn-cu12==9.10.2.21");
    }

    TEST_CASE("files rootlock installed come back by rebuilding the image from its lock") {
        auto tree = make_fake_root();
        add_metadata_only_venv(*tree, "rootlock\n");
        auto report = run(*tree, {"/opt/venv"});
        const auto& missing = only(report, "missing-soname");
        CHECK(missing.fields["owner"]["dist"] == "nvidia-cudnn-cu12");
        CHECK(missing.fields["remedy"] == "rebuild the image from its lock: rootlock build LOCK");
    }

    TEST_CASE("a library opened at run time that its RECORD lists, its file gone, names it") {
        auto tree = make_fake_root();
        add_metadata_only_venv(*tree, "pip\n");
        const std::string site = "/opt/venv/lib/python3.11/site-packages";
        const std::string info = site + "/nvidia_cudnn_cu12-9.10.2.21.dist-info";
        // libcudnn.so.9 is back; cuDNN's dlopen of its graph library finds nothing.
        tree->add_file(info + "/RECORD",
                       std::string("nvidia/cudnn/lib/libcudnn.so.9,,1000\n"
                                   "nvidia/cudnn/lib/libcudnn_graph.so.9,,1000\n"
                                   "nvidia_cudnn_cu12-9.10.2.21.dist-info/METADATA,,\n"
                                   "nvidia_cudnn_cu12-9.10.2.21.dist-info/INSTALLER,,\n"
                                   "nvidia_cudnn_cu12-9.10.2.21.dist-info/RECORD,,\n"));
        add_elf(*tree, site + "/nvidia/cudnn/lib/libcudnn.so.9", library_spec("libcudnn.so.9"));
        auto report = run(*tree, {"/opt/venv"});
        size_t owned = 0;
        for (const auto& p : report.problems) {
            if (p.kind != "missing-dlopen")
                continue;
            if (p.fields["soname"] == "libcudnn_graph.so.9") {
                CHECK(p.fields["owner"]["dist"] == "nvidia-cudnn-cu12");
                CHECK(p.fields["remedy"] ==
                      "/opt/venv/bin/python3 -m pip install --force-reinstall --no-deps "
                      "nvidia-cudnn-cu12==9.10.2.21");
                ++owned;
            } else {
                CHECK_FALSE(p.fields.contains("owner"));  // in no RECORD
            }
        }
        CHECK(owned == 1);
    }

    TEST_CASE("a RECORD whose file is still there owns no missing soname") {
        auto tree = make_fake_root();
        add_metadata_only_venv(*tree, "pip\n");
        // The file is back, but nothing finds it (no RPATH leads there from the needer).
        add_elf(*tree, "/opt/venv/lib/python3.11/site-packages/nvidia/cudnn/lib/libcudnn.so.9",
                library_spec("libcudnn.so.9"));
        add_elf(*tree, "/opt/venv/lib/python3.11/site-packages/torch/lib/libtorch_cuda.so",
                library_spec("libtorch_cuda.so", {"libcudnn.so.9"}));
        auto report = run(*tree, {"/opt/venv"});
        const auto& missing = only(report, "missing-soname");
        CHECK_FALSE(missing.fields.contains("owner"));
        CHECK_FALSE(missing.fields.contains("remedy"));
    }
}

}  // namespace rootlock::testing::ROOTLOCK_UNIT_ID
