// Golden text of `rootlock check`'s human report: one problem of each kind the symbol, provider,
// dlopen, preload and CUDA rules report, every group title in the singular and the plural.
#include <doctest/doctest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "check/closure_check.hpp"
#include "cli/common.hpp"
#include "cli/report_text.hpp"

using namespace rootlock;
using namespace rootlock::check;
using Json = nlohmann::ordered_json;

namespace {

const std::string k_sp = "/opt/venv/lib/python3.11/site-packages";

// A stream that is not a terminal: no colour, whatever runs the tests.
cli::Style plain_style() {
    std::FILE* file = std::tmpfile();
    REQUIRE(file != nullptr);
    cli::Style style(file);
    std::fclose(file);
    return style;
}

// The report as `check` hands it over: problems sorted, ok unless an error is among them.
std::string render(std::vector<Problem> problems, size_t objects = 48, size_t symbols = 1) {
    CheckReport report;
    report.objects = objects;
    report.symbols = symbols;
    sort_problems(problems);
    for (const auto& problem : problems)
        report.ok = report.ok && problem.severity != Severity::error;
    report.problems = std::move(problems);
    return cli::render_report(report, "/srv/ct101", plain_style());
}

Problem undefined_symbol() {
    Json symbols = Json::array();
    symbols.push_back({{"name", "_ZN3c106Device9set_indexEi"},
                       {"demangled", "c10::Device::set_index(int)"},
                       {"version", ""},
                       {"fails", "at-load"}});
    symbols.push_back({{"name", "c10_log"},
                       {"demangled", "c10_log"},
                       {"version", "C10_1.0"},
                       {"fails", "at-first-call"}});
    Problem problem{"undefined-symbol", Severity::error, {}};
    problem.fields["library"] = "libc10.so";
    problem.fields["provider"] = k_sp + "/torchfix/lib/libc10.so";
    problem.fields["needed_by"] = {k_sp + "/torchfix/_ext.cpython-311-x86_64-linux-gnu.so"};
    problem.fields["count"] = 2;
    problem.fields["symbols"] = symbols;
    problem.fields["defined_by"] = {"/opt/old/libc10.so"};
    problem.fields["hint"] = "this extension was built against another torch";
    problem.fields["cached_builds"] = {"2.7.1+cu128", "2.8.0+cu128"};
    return problem;
}

Problem wrong_provider(Severity severity, Json copies) {
    Problem problem{"wrong-provider", severity, {}};
    problem.fields["soname"] = "libnvJitLink.so.12";
    problem.fields["picked"] = "/usr/local/cuda/lib64/libnvJitLink.so.12";
    problem.fields["via"] = "ld-library-path";
    problem.fields["packaged"] = k_sp + "/nvidia/nvjitlink/lib/libnvJitLink.so.12";
    problem.fields["needed_by"] = {k_sp + "/nvidia/cusparse/lib/libcusparse.so.12"};
    problem.fields["copies"] = std::move(copies);
    if (severity == Severity::error) {
        problem.fields["reason"] = k_sp +
                                   "/nvidia/cusparse/lib/libcusparse.so.12 needs "
                                   "__nvJitLinkComplete_12_4, which the winner lacks";
    }
    return problem;
}

Problem cuda_mismatch_from_check() {
    Problem problem{"cuda-major-mismatch", Severity::error, {}};
    problem.fields["expected_major"] = 12;
    problem.fields["found_major"] = 13;
    problem.fields["libraries"] = {"/opt/cu13/lib/libcublas.so.13",
                                   "/opt/cu13/lib/libcudart.so.13"};
    return problem;
}

// check_cuda_agreement's shape in lock/locker.cpp: the wheels' sonames, not paths.
Problem cuda_mismatch_from_lock(size_t count) {
    Json libraries = Json::array();
    for (size_t i = 0; i < count; ++i) {
        libraries.push_back({{"soname", "libcusparse.so.13"},
                             {"cuda_major", 13},
                             {"distribution", "nvidia-cusparse-" + std::to_string(i)}});
    }
    Problem problem{"cuda-major-mismatch", Severity::error, {}};
    problem.fields = {{"expected_major", 12}, {"torch_cuda", "12.8"}, {"libraries", libraries}};
    return problem;
}

Problem driver_too_old(Json libraries) {
    Problem problem{"driver-too-old", Severity::error, {}};
    problem.fields["driver"] = "570.133.07";
    problem.fields["cuda_major"] = 13;
    problem.fields["minimum_driver"] = "580";
    problem.fields["libraries"] = std::move(libraries);
    return problem;
}

Problem missing_dlopen_not_found() {
    Problem problem{"missing-dlopen", Severity::warning, {}};
    problem.fields["soname"] = "libcudnn_graph.so.9";
    problem.fields["opened_by"] = {k_sp + "/nvidia/cudnn/lib/libcudnn.so.9"};
    problem.fields["candidates"] = Json::array();
    return problem;
}

Problem missing_dlopen_broken() {
    Problem problem{"missing-dlopen", Severity::warning, {}};
    problem.fields["soname"] = "libcudnn_ops.so.9";
    problem.fields["opened_by"] = {k_sp + "/nvidia/cudnn/lib/libcudnn.so.9"};
    problem.fields["provider"] = k_sp + "/nvidia/cudnn/lib/libcudnn_ops.so.9";
    problem.fields["missing_dependencies"] = {"libcublasLt.so.12", "libz.so.1"};
    return problem;
}

std::vector<Problem> one_of_each_kind() {
    std::vector<Problem> problems;
    problems.push_back(missing_dlopen_broken());
    problems.push_back(Problem{"stubs-on-search-path",
                               Severity::error,
                               {{"directory", "/usr/local/cuda/lib64/stubs"},
                                {"source", "/etc/ld.so.conf.d/cuda-stubs.conf:2"}}});
    problems.push_back(cuda_mismatch_from_lock(2));
    problems.push_back(Problem{"preload-only",
                               Severity::warning,
                               {{"soname", "libcusparseLt.so.0"},
                                {"path", k_sp + "/nvidia/cusparselt/lib/libcusparseLt.so.0"},
                                {"needed_by", {k_sp + "/torch/lib/libtorch_global_deps.so"}}}});
    problems.push_back(undefined_symbol());
    problems.push_back(
        driver_too_old({"/opt/cu13/lib/libcublas.so.13", "/opt/cu13/lib/libcudart.so.13"}));
    problems.push_back(wrong_provider(
        Severity::error,
        {"/opt/conda/lib/libnvJitLink.so.12", k_sp + "/nvidia/nvjitlink/lib/libnvJitLink.so.12",
         "/usr/local/cuda/lib64/libnvJitLink.so.12"}));
    problems.push_back(Problem{
        "driver-library-in-image",
        Severity::error,
        {{"path", "/usr/lib/x86_64-linux-gnu/libcuda.so.550.54.14"},
         {"problem",
          "driver 550.54.14, but the host runs 570.133.07: NVML and CUDA fail with a version "
          "mismatch"}}});
    problems.push_back(missing_dlopen_not_found());
    problems.push_back(cuda_mismatch_from_check());
    return problems;
}

}  // namespace

TEST_SUITE("rootlock::cli") {
    TEST_CASE("a report with one problem of each new kind reads as golden text") {
        const std::string expected =
            "rootlock check: /srv/ct101 (48 ELF objects checked, 1 symbol reference bound)\n"
            "\n"
            "error: 1 set of undefined symbols\n"
            "  2 symbols from libc10.so are missing: this extension was built against another "
            "torch\n"
            "    libc10.so bound to "
            "/opt/venv/lib/python3.11/site-packages/torchfix/lib/libc10.so\n"
            "    needed by "
            "/opt/venv/lib/python3.11/site-packages/torchfix/"
            "_ext.cpython-311-x86_64-linux-gnu.so\n"
            "      c10::Device::set_index(int) (fails at load)\n"
            "      c10_log@C10_1.0 (fails at first call)\n"
            "    defined in /opt/old/libc10.so\n"
            "    defined by torch 2.7.1+cu128, 2.8.0+cu128 (in rootlock's cache)\n"
            "\n"
            "error: 1 library where another copy wins over the consumer's own\n"
            "  libnvJitLink.so.12: /usr/local/cuda/lib64/libnvJitLink.so.12 wins "
            "(ld-library-path) over "
            "/opt/venv/lib/python3.11/site-packages/nvidia/nvjitlink/lib/libnvJitLink.so.12\n"
            "    needed by "
            "/opt/venv/lib/python3.11/site-packages/nvidia/cusparse/lib/libcusparse.so.12\n"
            "    (/opt/venv/lib/python3.11/site-packages/nvidia/cusparse/lib/libcusparse.so.12 "
            "needs __nvJitLinkComplete_12_4, which the winner lacks)\n"
            "    other copies /opt/conda/lib/libnvJitLink.so.12\n"
            "\n"
            "error: 2 sets of CUDA libraries of another major than declared\n"
            "  CUDA 13 libraries where CUDA 12 is declared\n"
            "    /opt/cu13/lib/libcublas.so.13\n"
            "    /opt/cu13/lib/libcudart.so.13\n"
            "  libcusparse.so.13 (CUDA 13) from nvidia-cusparse-0, but torch.cuda is 12.8\n"
            "  libcusparse.so.13 (CUDA 13) from nvidia-cusparse-1, but torch.cuda is 12.8\n"
            "\n"
            "error: 1 host driver too old for the CUDA in the image\n"
            "  driver 570.133.07 is older than 580, the oldest branch that runs CUDA 13\n"
            "    CUDA 13 in /opt/cu13/lib/libcublas.so.13\n"
            "               /opt/cu13/lib/libcudart.so.13\n"
            "\n"
            "error: 1 host driver library baked into the image\n"
            "  /usr/lib/x86_64-linux-gnu/libcuda.so.550.54.14: driver 550.54.14, but the host "
            "runs 570.133.07: NVML and CUDA fail with a version mismatch\n"
            "\n"
            "error: 1 CUDA stub directory on a search path\n"
            "  /usr/local/cuda/lib64/stubs (from /etc/ld.so.conf.d/cuda-stubs.conf:2): its "
            "libcuda.so makes every CUDA call fail with CUDA_ERROR_STUB_LIBRARY\n"
            "\n"
            "warning: 1 library found only through torch's Python preload\n"
            "  libcusparseLt.so.0: "
            "/opt/venv/lib/python3.11/site-packages/nvidia/cusparselt/lib/libcusparseLt.so.0\n"
            "    needed by /opt/venv/lib/python3.11/site-packages/torch/lib/"
            "libtorch_global_deps.so\n"
            "    (ld.so alone does not find it: loading the needers outside `import torch` "
            "fails)\n"
            "\n"
            "warning: 2 libraries opened at run time (dlopen) that would fail to load\n"
            "  libcudnn_graph.so.9\n"
            "    opened by /opt/venv/lib/python3.11/site-packages/nvidia/cudnn/lib/"
            "libcudnn.so.9\n"
            "    no copy anywhere in the checked paths\n"
            "  libcudnn_ops.so.9: "
            "/opt/venv/lib/python3.11/site-packages/nvidia/cudnn/lib/libcudnn_ops.so.9 would "
            "not load: libcublasLt.so.12, libz.so.1 not found\n"
            "    opened by /opt/venv/lib/python3.11/site-packages/nvidia/cudnn/lib/"
            "libcudnn.so.9\n"
            "\n"
            "FAILED: 7 errors, 3 warnings\n";
        CHECK(render(one_of_each_kind()) == expected);
    }

    TEST_CASE("every group title agrees with its count") {
        struct Row {
            const char* kind;
            const char* one;
            const char* two;
        };
        const Row rows[] = {
            {"missing-soname", "1 missing shared library", "2 missing shared libraries"},
            {"missing-version", "1 missing symbol version", "2 missing symbol versions"},
            {"undefined-symbol", "1 set of undefined symbols", "2 sets of undefined symbols"},
            {"wrong-provider", "1 library where another copy wins over the consumer's own",
             "2 libraries where another copy wins over the consumer's own"},
            {"missing-record-file", "1 distribution whose files are gone (metadata-only install)",
             "2 distributions whose files are gone (metadata-only installs)"},
            {"shared-path",
             "1 path claimed by two distributions (uninstalling one breaks the other)",
             "2 paths claimed by two distributions (uninstalling one breaks the other)"},
            {"cuda-major-mix", "1 process mixing CUDA majors", "2 processes mixing CUDA majors"},
            {"cuda-unloaded-major", "1 CUDA major whose libraries nothing loads",
             "2 CUDA majors whose libraries nothing loads"},
            {"cuda-major-mismatch", "1 set of CUDA libraries of another major than declared",
             "2 sets of CUDA libraries of another major than declared"},
            {"driver-too-old", "1 host driver too old for the CUDA in the image",
             "2 host drivers too old for the CUDA in the image"},
            {"driver-library-in-image", "1 host driver library baked into the image",
             "2 host driver libraries baked into the image"},
            {"stubs-on-search-path", "1 CUDA stub directory on a search path",
             "2 CUDA stub directories on a search path"},
            {"bad-object", "1 object the loader would reject", "2 objects the loader would reject"},
            {"missing-interpreter", "1 program whose dynamic loader (PT_INTERP) is missing",
             "2 programs whose dynamic loader (PT_INTERP) is missing"},
            {"broken-environment", "1 broken Python environment", "2 broken Python environments"},
            {"unsafe-path", "1 unsafe path in the tree", "2 unsafe paths in the tree"},
            {"preload-failed", "1 torch import whose preload fallback fails",
             "2 torch imports whose preload fallback fails"},
            {"preload-only", "1 library found only through torch's Python preload",
             "2 libraries found only through torch's Python preload"},
            {"missing-dlopen", "1 library opened at run time (dlopen) that would fail to load",
             "2 libraries opened at run time (dlopen) that would fail to load"},
            {"a-kind-from-a-newer-rootlock", "1 other problem", "2 other problems"},
        };
        for (const auto& row : rows) {
            CAPTURE(row.kind);
            CHECK(cli::group_title(row.kind, 1) == row.one);
            CHECK(cli::group_title(row.kind, 2) == row.two);
        }
    }

    TEST_CASE("a failing preload names the torch, the message and the missing rows") {
        Problem failed{"preload-failed", check::Severity::error, {}};
        failed.fields["torch"] = "2.8.0+cu128";
        failed.fields["missing"] = Json::array({"libnvToolsExt.so.*[0-9]"});
        failed.fields["needed_by"] = Json::array({"/v/torch/lib/libtorch_global_deps.so"});
        failed.fields["problem"] =
            "import torch raises ValueError: libnvToolsExt.so.*[0-9] not found in the system path";
        CHECK(render({failed}, 3, 0) ==
              "rootlock check: /srv/ct101 (3 ELF objects checked, 0 symbol references bound)\n"
              "\n"
              "error: 1 torch import whose preload fallback fails\n"
              "  torch 2.8.0+cu128: import torch raises ValueError: libnvToolsExt.so.*[0-9] not "
              "found in the system path\n"
              "    missing libnvToolsExt.so.*[0-9]\n"
              "    needed by /v/torch/lib/libtorch_global_deps.so\n"
              "\n"
              "FAILED: 1 error, 0 warnings\n");
    }

    TEST_CASE("a driver too old for the declared CUDA says no CUDA library was found") {
        CHECK(render({driver_too_old(Json::array())}, 3, 0) ==
              "rootlock check: /srv/ct101 (3 ELF objects checked, 0 symbol references bound)\n"
              "\n"
              "error: 1 host driver too old for the CUDA in the image\n"
              "  driver 570.133.07 is older than 580, the oldest branch that runs CUDA 13\n"
              "    (the declared CUDA: no CUDA library was found)\n"
              "\n"
              "FAILED: 1 error, 0 warnings\n");
    }

    TEST_CASE("a wrong provider without a reason is a warning and names no copy twice") {
        const std::string head =
            "rootlock check: /srv/ct101 (1 ELF object checked, 2 symbol references bound)\n"
            "\n"
            "warning: 1 library where another copy wins over the consumer's own\n"
            "  libnvJitLink.so.12: /usr/local/cuda/lib64/libnvJitLink.so.12 wins "
            "(ld-library-path) over "
            "/opt/venv/lib/python3.11/site-packages/nvidia/nvjitlink/lib/libnvJitLink.so.12\n"
            "    needed by "
            "/opt/venv/lib/python3.11/site-packages/nvidia/cusparse/lib/libcusparse.so.12\n";
        const std::string verdict =
            "\nOK: every object finds every library and version it needs (1 warning)\n";
        const Json named = {k_sp + "/nvidia/nvjitlink/lib/libnvJitLink.so.12",
                            "/usr/local/cuda/lib64/libnvJitLink.so.12"};
        CHECK(render({wrong_provider(Severity::warning, named)}, 1, 2) == head + verdict);

        Json many = named;
        for (const char* dir : {"/a", "/b", "/c", "/d", "/e"})
            many.push_back(std::string(dir) + "/libnvJitLink.so.12");
        CHECK(render({wrong_provider(Severity::warning, many)}, 1, 2) ==
              head +
                  "    other copies /a/libnvJitLink.so.12\n"
                  "                 /b/libnvJitLink.so.12\n"
                  "                 /c/libnvJitLink.so.12\n"
                  "                 /d/libnvJitLink.so.12\n"
                  "      ... and 1 more\n" +
                  verdict);
    }

    TEST_CASE("a missing dlopen target with a copy elsewhere names the copy") {
        Problem problem = missing_dlopen_not_found();
        problem.fields["candidates"] = {"/opt/cudnn/lib/libcudnn_graph.so.9"};
        CHECK(render({problem}, 2, 0) ==
              "rootlock check: /srv/ct101 (2 ELF objects checked, 0 symbol references bound)\n"
              "\n"
              "warning: 1 library opened at run time (dlopen) that would fail to load\n"
              "  libcudnn_graph.so.9\n"
              "    opened by /opt/venv/lib/python3.11/site-packages/nvidia/cudnn/lib/"
              "libcudnn.so.9\n"
              "    a copy is at /opt/cudnn/lib/libcudnn_graph.so.9\n"
              "\n"
              "OK: every object finds every library and version it needs (1 warning)\n");
    }

    TEST_CASE("lock's CUDA mismatch lists eight wheel libraries and counts the rest") {
        std::string expected =
            "rootlock check: /srv/ct101 (2 ELF objects checked, 0 symbol references bound)\n"
            "\n"
            "error: 1 set of CUDA libraries of another major than declared\n";
        for (int i = 0; i < 8; ++i) {
            expected += "  libcusparse.so.13 (CUDA 13) from nvidia-cusparse-" + std::to_string(i) +
                        ", but torch.cuda is 12.8\n";
        }
        expected +=
            "    ... and 2 more (--json lists all)\n"
            "\n"
            "FAILED: 1 error, 0 warnings\n";
        CHECK(render({cuda_mismatch_from_lock(10)}, 2, 0) == expected);
    }

    TEST_CASE("a missing soname names its metadata-only owner and the remedy") {
        Problem problem{"missing-soname", Severity::error, {}};
        problem.fields["soname"] = "libcudnn.so.9";
        problem.fields["needed_by"] = {k_sp + "/torch/lib/libtorch_cuda.so"};
        problem.fields["candidates"] = Json::array();
        problem.fields["owner"] = {{"dist", "nvidia-cudnn-cu12"},
                                   {"version", "9.10.2.21"},
                                   {"path", k_sp + "/nvidia/cudnn/lib/libcudnn.so.9"},
                                   {"environment", k_sp}};
        problem.fields["remedy"] =
            "/opt/venv/bin/pip install --force-reinstall --no-deps nvidia-cudnn-cu12==9.10.2.21";
        CHECK(render({problem}, 2, 0) ==
              "rootlock check: /srv/ct101 (2 ELF objects checked, 0 symbol references bound)\n"
              "\n"
              "error: 1 missing shared library\n"
              "  libcudnn.so.9\n"
              "    needed by /opt/venv/lib/python3.11/site-packages/torch/lib/libtorch_cuda.so\n"
              "    no copy anywhere in the checked paths\n"
              "    listed in the RECORD of nvidia-cudnn-cu12 9.10.2.21, its file gone "
              "(metadata-only)\n"
              "    fix: /opt/venv/bin/pip install --force-reinstall --no-deps "
              "nvidia-cudnn-cu12==9.10.2.21\n"
              "\n"
              "FAILED: 1 error, 0 warnings\n");
    }

    TEST_CASE("a missing soname whose only copy is of another machine says so") {
        Problem problem{"missing-soname", Severity::error, {}};
        problem.fields["soname"] = "libnccl.so.2";
        problem.fields["needed_by"] = {k_sp + "/torch/lib/libtorch_cuda.so"};
        problem.fields["candidates"] = Json::array();
        problem.fields["wrong_machine"] = {
            {{"path", k_sp + "/nvidia/nccl/lib/libnccl.so.2"}, {"machine", "x86_64 ELFCLASS64"}}};
        CHECK(render({problem}, 2, 0) ==
              "rootlock check: /srv/ct101 (2 ELF objects checked, 0 symbol references bound)\n"
              "\n"
              "error: 1 missing shared library\n"
              "  libnccl.so.2\n"
              "    needed by /opt/venv/lib/python3.11/site-packages/torch/lib/libtorch_cuda.so\n"
              "    /opt/venv/lib/python3.11/site-packages/nvidia/nccl/lib/libnccl.so.2 is x86_64 "
              "ELFCLASS64, not the root's machine: ld.so skips it\n"
              "\n"
              "FAILED: 1 error, 0 warnings\n");
    }

    TEST_CASE("metadata-only findings with one cause fold into one line naming every dist") {
        auto missing = [](const std::string& dist, const std::string& version, Json paths) {
            Problem problem{"missing-record-file", Severity::warning, {}};
            problem.fields["dist"] = dist;
            problem.fields["version"] = version;
            problem.fields["paths"] = std::move(paths);
            problem.fields["environment"] = k_sp;
            return problem;
        };
        const Json init = {k_sp + "/nvidia/__init__.py"};
        CHECK(render({missing("nvidia-cublas-cu12", "12.8.4.1", init),
                      missing("nvidia-nccl-cu12", "2.27.3", init),
                      missing("nvidia-cufft-cu12", "11.3.3.83", init),
                      missing("other", "1.0", {k_sp + "/other/__init__.py"})},
                     2, 0) ==
              "rootlock check: /srv/ct101 (2 ELF objects checked, 0 symbol references bound)\n"
              "\n"
              "warning: 4 distributions whose files are gone (metadata-only installs)\n"
              "  /opt/venv/lib/python3.11/site-packages/nvidia/__init__.py listed in RECORD but "
              "missing, for 3 distributions: nvidia-cublas-cu12 12.8.4.1, nvidia-cufft-cu12 "
              "11.3.3.83, nvidia-nccl-cu12 2.27.3\n"
              "  other 1.0: 1 file listed in RECORD but missing\n"
              "    e.g. /opt/venv/lib/python3.11/site-packages/other/__init__.py\n"
              "\n"
              "OK: every object finds every library and version it needs (4 warnings)\n");
    }

    TEST_CASE("CUDA mixes say whether a failure follows, and unloaded majors name their dists") {
        Problem warning{"cuda-major-mix", Severity::warning, {}};
        warning.fields["family"] = "cublas";
        warning.fields["majors"] = {12, 13};
        warning.fields["objects"] = {"/a/libcublas.so.12", "/b/libcublas.so.13"};
        Problem error = warning;
        error.severity = Severity::error;
        error.fields["failures"] = {"undefined symbol cublasX (needed by /e/_C.so)"};
        Problem unloaded{"cuda-unloaded-major", Severity::warning, {}};
        unloaded.fields["cuda_major"] = 13;
        unloaded.fields["loaded_majors"] = {12};
        unloaded.fields["libraries"] = {"/c/libcudart.so.13"};
        unloaded.fields["distributions"] =
            Json::array({{{"dist", "nvidia-cublas"}, {"version", "13.0.0.19"}},
                         {{"dist", "nvidia-cuda-runtime"}, {"version", "13.0.48"}}});
        CHECK(render({warning, error, unloaded}, 5, 0) ==
              "rootlock check: /srv/ct101 (5 ELF objects checked, 0 symbol references bound)\n"
              "\n"
              "error: 1 process mixing CUDA majors\n"
              "  cublas: CUDA 12 and 13 in one process\n"
              "    objects /a/libcublas.so.12\n"
              "            /b/libcublas.so.13\n"
              "    and it fails: undefined symbol cublasX (needed by /e/_C.so)\n"
              "\n"
              "warning: 1 process mixing CUDA majors\n"
              "  cublas: CUDA 12 and 13 in one process\n"
              "    objects /a/libcublas.so.12\n"
              "            /b/libcublas.so.13\n"
              "    (each major has its own sonames: they load side by side until a failure "
              "follows)\n"
              "\n"
              "warning: 1 CUDA major whose libraries nothing loads\n"
              "  CUDA 13 libraries that nothing loads: nvidia-cublas 13.0.0.19, "
              "nvidia-cuda-runtime 13.0.48\n"
              "    (the processes here load CUDA 12: harmless until something loads these)\n"
              "    /c/libcudart.so.13\n"
              "\n"
              "FAILED: 1 error, 2 warnings\n");
    }

    TEST_CASE("a kind this version does not know is printed as its JSON") {
        Problem problem{"future-kind", Severity::error, {{"path", "/x"}, {"count", 3}}};
        CHECK(render({problem}, 1, 0) ==
              "rootlock check: /srv/ct101 (1 ELF object checked, 0 symbol references bound)\n"
              "\n"
              "error: 1 other problem\n"
              "  {\"path\":\"/x\",\"count\":3}\n"
              "\n"
              "FAILED: 1 error, 0 warnings\n");
    }
}
