// The CUDA and driver rules over plain data and in-memory roots: driver floors, declared versions
// (malformed ones with their exact messages), majors against the declaration, driver libraries
// baked into an image, and stub directories on every kind of search path.
#include <doctest/doctest.h>

#include "check/cuda_rules.hpp"
#include "fs/memory_tree.hpp"

using namespace rootlock;
using namespace rootlock::check;
using rootlock::fs::MemoryTree;

namespace {

using Strings = std::vector<std::string>;
using Json = nlohmann::ordered_json;

CudaTarget target(std::string_view cuda, std::string_view driver) {
    auto parsed = parse_cuda_target(cuda, driver);
    REQUIRE(parsed.ok());
    return std::move(parsed).value();
}

DriverVersion driver_of(std::string_view text) {
    auto parsed = parse_driver_version(text);
    REQUIRE(parsed.ok());
    return std::move(parsed).value();
}

Strings kinds(const std::vector<Problem>& problems) {
    Strings out;
    for (const auto& problem : problems)
        out.push_back(problem.kind);
    return out;
}

std::vector<Problem> stubs_ok(const fs::FileTree& tree, const Strings& ld_library_path,
                              const std::vector<ScannedElf>& objects = {}) {
    auto result = stubs_path_problems(tree, ld_library_path, objects);
    if (!result.ok())
        FAIL(result.error().text());
    return std::move(result).value();
}

// (directory, source) of each problem, in order.
std::vector<std::pair<std::string, std::string>> places(const std::vector<Problem>& problems) {
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& problem : problems) {
        CHECK(problem.kind == "stubs-on-search-path");
        CHECK(problem.severity == Severity::error);
        out.emplace_back(problem.fields["directory"].get<std::string>(),
                         problem.fields["source"].get<std::string>());
    }
    return out;
}

// The one driver-library problem text for a file at `path`, or "" when there is none.
std::string driver_problem(std::string_view path, std::optional<std::string_view> driver) {
    MemoryTree tree;
    tree.add_file(path, "ELF bytes do not matter here");
    std::optional<DriverVersion> declared;
    if (driver.has_value())
        declared = driver_of(*driver);
    auto problems = driver_library_problems(tree, {std::string(path)}, declared);
    if (problems.empty())
        return "";
    REQUIRE(problems.size() == 1);
    CHECK(problems[0].kind == "driver-library-in-image");
    CHECK(problems[0].severity == Severity::error);
    CHECK(problems[0].fields["path"] == std::string(path));
    return problems[0].fields["problem"].get<std::string>();
}

const std::string k_stub =
    "a CUDA stub for linking only: it makes every CUDA call fail with CUDA_ERROR_STUB_LIBRARY";

}  // namespace

TEST_SUITE("rootlock::check") {
    TEST_CASE("each CUDA major needs its driver branch, and unknown majors have none") {
        CHECK(minimum_driver_branch(13) == 580);
        CHECK(minimum_driver_branch(12) == 525);
        CHECK(minimum_driver_branch(11) == 450);
        CHECK_FALSE(minimum_driver_branch(10).has_value());
        CHECK_FALSE(minimum_driver_branch(14).has_value());
        CHECK_FALSE(minimum_driver_branch(0).has_value());
    }

    TEST_CASE("a driver is a branch or a full release, kept as written") {
        auto branch = driver_of("580");
        CHECK(branch.text == "580");
        CHECK(branch.parts == std::vector<int>{580});
        CHECK(branch.branch() == 580);
        CHECK_FALSE(branch.full());
        auto full = driver_of("570.133.07");
        CHECK(full.text == "570.133.07");
        CHECK(full.parts == std::vector<int>{570, 133, 7});
        CHECK(full.branch() == 570);
        CHECK(full.full());
        CHECK(driver_of("390.157").parts == std::vector<int>{390, 157});
    }

    TEST_CASE("malformed driver versions are refused with one exact line") {
        struct Case {
            std::string text;
            std::string error;
        };
        const std::string head = " is not a driver version such as 580 or 580.65.06: ";
        const std::vector<Case> cases = {
            {"", "\"\"" + head + "it is empty"},
            {"570.", "\"570.\"" + head + "a part is empty"},
            {".570", "\".570\"" + head + "a part is empty"},
            {"570..07", "\"570..07\"" + head + "a part is empty"},
            {"570.133.07.1", "\"570.133.07.1\"" + head + "it has more than three parts"},
            {"57O", "\"57O\"" + head + "\"57O\" is not a decimal number"},
            {"570.133.07 ", "\"570.133.07 \"" + head + "\"07 \" is not a decimal number"},
            {"-570", "\"-570\"" + head + "\"-570\" is not a decimal number"},
            {"+570", "\"+570\"" + head + "\"+570\" is not a decimal number"},
            {"r570", "\"r570\"" + head + "\"r570\" is not a decimal number"},
            {"1234567890", "\"1234567890\"" + head + "\"1234567890\" has more than 9 digits"},
            {"0.1", "\"0.1\"" + head + "branch 0 does not exist"},
            {"000", "\"000\"" + head + "branch 0 does not exist"},
        };
        for (const auto& c : cases) {
            CAPTURE(c.text);
            auto parsed = parse_driver_version(c.text);
            REQUIRE_FALSE(parsed.ok());
            CHECK(parsed.error().text() == c.error);
        }
    }

    TEST_CASE("a CUDA version gives its major, and malformed ones are refused exactly") {
        CHECK(parse_cuda_major("13.0").value() == 13);
        CHECK(parse_cuda_major("12.8").value() == 12);
        CHECK(parse_cuda_major("11.10").value() == 11);
        struct Case {
            std::string text;
            std::string error;
        };
        const std::string head = " is not a CUDA version such as 13.0: ";
        const std::vector<Case> cases = {
            {"", "\"\"" + head + "it is empty"},
            {"13", "\"13\"" + head + "it needs MAJOR.MINOR"},
            {"12.8.1", "\"12.8.1\"" + head + "it needs MAJOR.MINOR"},
            {"13.", "\"13.\"" + head + "a part is empty"},
            {".0", "\".0\"" + head + "a part is empty"},
            {"cu130", "\"cu130\"" + head + "it needs MAJOR.MINOR"},
            {"13.x", "\"13.x\"" + head + "\"x\" is not a decimal number"},
            {"v13.0", "\"v13.0\"" + head + "\"v13\" is not a decimal number"},
            {"0.9", "\"0.9\"" + head + "CUDA 0 does not exist"},
            {"9999999999.0", "\"9999999999.0\"" + head + "\"9999999999\" has more than 9 digits"},
        };
        for (const auto& c : cases) {
            CAPTURE(c.text);
            auto parsed = parse_cuda_major(c.text);
            REQUIRE_FALSE(parsed.ok());
            CHECK(parsed.error().text() == c.error);
        }
    }

    TEST_CASE("a declared target parses both values, leaves empty ones undeclared") {
        auto both = target("13.0", "580.65.06");
        CHECK(both.cuda == "13.0");
        CHECK(both.cuda_major == 13);
        REQUIRE(both.driver.has_value());
        CHECK(both.driver->text == "580.65.06");
        auto none = target("", "");
        CHECK(none.cuda.empty());
        CHECK_FALSE(none.cuda_major.has_value());
        CHECK_FALSE(none.driver.has_value());
        CHECK(target("", "570").driver->branch() == 570);

        auto unknown = parse_cuda_target("14.0", "");
        REQUIRE_FALSE(unknown.ok());
        CHECK(unknown.error().text() ==
              "CUDA 14 (\"14.0\") is not one rootlock knows the driver for: 11, 12 or 13");
        auto bad_driver = parse_cuda_target("13.0", "580.x");
        REQUIRE_FALSE(bad_driver.ok());
        CHECK(bad_driver.error().text() ==
              "\"580.x\" is not a driver version such as 580 or 580.65.06: \"x\" is not a decimal "
              "number");
    }

    TEST_CASE("a closure of the declared major on a new enough driver has no problem") {
        CudaMajors found{{13, {"/v/nvidia/cu13/lib/libcudart.so.13"}}};
        CHECK(cuda_target_problems(found, target("13.0", "580.65.06")).empty());
        CHECK(cuda_target_problems(found, target("13.0", "580")).empty());
        CHECK(cuda_target_problems(found, target("13.0", "")).empty());
        CHECK(cuda_target_problems(found, target("", "")).empty());
        CHECK(cuda_target_problems({}, target("", "")).empty());
    }

    TEST_CASE("every found major other than the declared one is a mismatch, libraries sorted") {
        CudaMajors found{
            {11, {"/v/cufft/lib/libcufft.so.10"}},
            {12,
             {"/v/nvidia/cublas/lib/libcublas.so.12", "/v/nvidia/cuda_runtime/libcudart.so.12"}},
            {13, {"/v/nvidia/cu13/lib/libcudart.so.13"}},
        };
        auto problems = cuda_target_problems(found, target("13.0", ""));
        REQUIRE(kinds(problems) == Strings{"cuda-major-mismatch", "cuda-major-mismatch"});
        CHECK(to_json(problems[0]).dump() ==
              R"({"kind":"cuda-major-mismatch","severity":"error","expected_major":13,)"
              R"("found_major":11,"libraries":["/v/cufft/lib/libcufft.so.10"]})");
        CHECK(problems[1].fields["found_major"] == 12);
        CHECK(problems[1].fields["libraries"] == Json({"/v/nvidia/cublas/lib/libcublas.so.12",
                                                       "/v/nvidia/cuda_runtime/libcudart.so.12"}));
    }

    TEST_CASE("a driver older than the newest found major needs is too old") {
        CudaMajors found{{12, {"/a/libcudart.so.12"}},
                         {13, {"/b/libcublas.so.13", "/b/libcudart.so.13"}}};
        auto problems = cuda_target_problems(found, target("", "570.133.07"));
        REQUIRE(kinds(problems) == Strings{"driver-too-old"});
        CHECK(to_json(problems[0]).dump() ==
              R"({"kind":"driver-too-old","severity":"error","driver":"570.133.07",)"
              R"("cuda_major":13,"minimum_driver":"580",)"
              R"("libraries":["/b/libcublas.so.13","/b/libcudart.so.13"]})");
        // The same driver runs CUDA 12 alone, and a 525 branch is exactly enough for it.
        CHECK(
            cuda_target_problems({{12, {"/a/libcudart.so.12"}}}, target("", "570.133.07")).empty());
        CHECK(cuda_target_problems({{12, {"/a/libcudart.so.12"}}}, target("", "525")).empty());
        CHECK(kinds(cuda_target_problems({{12, {"/a/libcudart.so.12"}}},
                                         target("", "520.61.05"))) == Strings{"driver-too-old"});
    }

    TEST_CASE("with no CUDA library found, the declared major sets the driver floor") {
        auto problems = cuda_target_problems({}, target("13.0", "570"));
        REQUIRE(kinds(problems) == Strings{"driver-too-old"});
        CHECK(problems[0].fields["cuda_major"] == 13);
        CHECK(problems[0].fields["minimum_driver"] == "580");
        CHECK(problems[0].fields["libraries"] == Json::array());
        CHECK(cuda_target_problems({}, target("12.8", "570")).empty());
        // Nothing declared and nothing found: no floor at all.
        CHECK(cuda_target_problems({}, target("", "400")).empty());
    }

    TEST_CASE("a mismatch and a too-old driver are reported together") {
        CudaMajors found{{13, {"/b/libcudart.so.13"}}};
        auto problems = cuda_target_problems(found, target("12.8", "570.133.07"));
        CHECK(kinds(problems) == Strings{"cuda-major-mismatch", "driver-too-old"});
        CHECK(problems[1].fields["cuda_major"] == 13);
    }

    TEST_CASE("a found major with no known driver floor says nothing about the driver") {
        CudaMajors found{{14, {"/b/libcudart.so.14"}}};
        CHECK(cuda_target_problems(found, target("", "300")).empty());
    }

    TEST_CASE("driver library names are recognised whatever their version suffix") {
        for (const char* name :
             {"libcuda.so", "libcuda.so.1", "libcuda.so.580.65.06", "libnvidia-ml.so.1",
              "libnvidia-ml.so.570.133.07", "libnvidia-ptxjitcompiler.so.1", "libnvidia-nvvm.so.4",
              "libnvidia-opencl.so.1", "libcudadebugger.so.1", "libnvidia-gpucomp.so.580.65.06",
              "libnvidia-pkcs11-openssl3.so.580.65.06", "libGLX_nvidia.so.0"}) {
            CAPTURE(name);
            CHECK(is_driver_library_name(name));
        }
        // Toolkit and wheel libraries, look-alikes, and packages versioned on their own.
        for (const char* name :
             {"libcudart.so.13", "libcudart.so", "libnvvm.so.4", "libnvJitLink.so.13",
              "libcuda.so.", "libcuda.sox", "libcuda", "libcudax.so.1",
              "libnvidia-egl-wayland.so.1", "xlibcuda.so.1", "libnvidia-ml.a", ""}) {
            CAPTURE(name);
            CHECK_FALSE(is_driver_library_name(name));
        }
    }

    TEST_CASE("each driver library in the image gets the one line that fits it") {
        struct Case {
            std::string path;
            std::optional<std::string_view> driver;
            std::string problem;  // "" for none
        };
        const std::string no_driver =
            " baked into the image: the host's driver provides it; declare the host's driver or "
            "remove it";
        const std::string unknown =
            "a driver library whose release its name does not tell: the host's driver provides "
            "it; remove it";
        const std::vector<Case> cases = {
            // A toolkit's stubs directory is not a problem by itself (NVIDIA's images carry
            // one): only a search path (stubs-on-search-path) or a link from elsewhere reaches it.
            {"/usr/local/cuda/lib64/stubs/libcuda.so", std::nullopt, ""},
            {"/usr/local/cuda/lib64/stubs/libcuda.so", "580.65.06", ""},
            {"/usr/local/cuda/lib64/stubs/libnvidia-ml.so.1", "580.65.06", ""},
            {"/usr/lib/x86_64-linux-gnu/libcuda.so", "570.133.07", k_stub},
            {"/usr/lib/x86_64-linux-gnu/libcuda.so.1", std::nullopt, unknown},
            {"/usr/lib/x86_64-linux-gnu/libcuda.so.1", "570.133.07", unknown},
            {"/usr/lib/x86_64-linux-gnu/libcuda.so.550.54.14", "570.133.07",
             "driver 550.54.14, but the host runs 570.133.07: NVML and CUDA fail with a version "
             "mismatch"},
            {"/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.570.124.06", "570.133.07",
             "driver 570.124.06, but the host runs 570.133.07: NVML and CUDA fail with a version "
             "mismatch"},
            {"/usr/lib/x86_64-linux-gnu/libcuda.so.550.54.14", "580",
             "driver 550.54.14, but the host runs 580: NVML and CUDA fail with a version "
             "mismatch"},
            {"/usr/lib/x86_64-linux-gnu/libcuda.so.580.65.06", "580",
             "driver 580.65.06, but only branch 580 of the host's driver is declared: any other "
             "580 release fails with a version mismatch; declare the full version or remove it"},
            {"/usr/lib/x86_64-linux-gnu/libcuda.so.550.54.14", std::nullopt,
             "driver 550.54.14" + no_driver},
            {"/usr/lib/x86_64-linux-gnu/libcuda.so.570.133.07", "570.133.07", ""},
            {"/usr/lib/x86_64-linux-gnu/libnvidia-ptxjitcompiler.so.570.133.07", "570.133.07", ""},
            {"/opt/venv/lib/python3.11/site-packages/nvidia/cu13/lib/libcudart.so.13", "570", ""},
        };
        for (const auto& c : cases) {
            CAPTURE(c.path);
            CAPTURE(c.driver.value_or("(none)"));
            CHECK(driver_problem(c.path, c.driver) == c.problem);
        }
    }

    TEST_CASE("links to a driver library report the file once; dangling links load nothing") {
        MemoryTree tree;
        const std::string dir = "/usr/lib/x86_64-linux-gnu/";
        tree.add_file(dir + "libcuda.so.550.54.14", "elf");
        tree.add_symlink(dir + "libcuda.so.1", "libcuda.so.550.54.14");
        tree.add_symlink(dir + "libcuda.so", "libcuda.so.1");
        tree.add_symlink(dir + "libnvidia-ml.so.1", "libnvidia-ml.so.550.54.14");  // dangling
        auto problems =
            driver_library_problems(tree,
                                    {dir + "libcuda.so", dir + "libcuda.so.1",
                                     dir + "libcuda.so.550.54.14", dir + "libnvidia-ml.so.1"},
                                    driver_of("570.133.07"));
        REQUIRE(problems.size() == 1);
        CHECK(problems[0].fields["path"] == dir + "libcuda.so.550.54.14");
        CHECK(problems[0].fields["problem"] ==
              "driver 550.54.14, but the host runs 570.133.07: NVML and CUDA fail with a version "
              "mismatch");
    }

    TEST_CASE("a driver name linking into a stubs directory is the stub it leads to") {
        MemoryTree tree;
        tree.add_file("/usr/local/cuda-13.0/targets/x86_64-linux/lib/stubs/libcuda.so", "elf");
        tree.add_symlink("/usr/lib/x86_64-linux-gnu/libcuda.so.1",
                         "/usr/local/cuda-13.0/targets/x86_64-linux/lib/stubs/libcuda.so");
        auto problems =
            driver_library_problems(tree, {"/usr/lib/x86_64-linux-gnu/libcuda.so.1"}, std::nullopt);
        REQUIRE(problems.size() == 1);
        CHECK(problems[0].fields["path"] ==
              "/usr/local/cuda-13.0/targets/x86_64-linux/lib/stubs/libcuda.so");
        CHECK(problems[0].fields["problem"] == k_stub);
    }

    TEST_CASE("a driver name leading to a file named otherwise is judged by that name") {
        MemoryTree tree;
        tree.add_file("/opt/blob/driver.bin", "elf");
        tree.add_symlink("/usr/lib/libcuda.so.550.54.14", "/opt/blob/driver.bin");
        auto problems =
            driver_library_problems(tree, {"/usr/lib/libcuda.so.550.54.14", "/opt/blob/driver.bin"},
                                    driver_of("580.65.06"));
        REQUIRE(problems.size() == 1);
        CHECK(problems[0].fields["path"] == "/opt/blob/driver.bin");
        CHECK(problems[0].fields["problem"] ==
              "driver 550.54.14, but the host runs 580.65.06: NVML and CUDA fail with a version "
              "mismatch");
    }

    TEST_CASE("stub directories named by ld.so.conf and its includes are reported by line") {
        MemoryTree tree;
        tree.add_file("/etc/ld.so.conf", "include /etc/ld.so.conf.d/*.conf\n/usr/local/lib\n");
        tree.add_file("/etc/ld.so.conf.d/cuda-stubs.conf",
                      "# linking only\n/usr/local/cuda/lib64/stubs/\n");
        tree.add_file("/etc/ld.so.conf.d/x86_64-linux-gnu.conf",
                      "/usr/local/lib/x86_64-linux-gnu\n/usr/lib/x86_64-linux-gnu\n");
        tree.add_file("/etc/ld.so.conf.d/zz-cuda.conf",
                      "/usr/local/cuda-13.0/targets/x86_64-linux/lib/stubs\n"
                      "/usr/local/cuda-13.0/targets/x86_64-linux/lib\n"
                      "/opt/stubsy\n/opt/stubs/lib\n");
        auto problems = stubs_ok(tree, {});
        CHECK(places(problems) ==
              std::vector<std::pair<std::string, std::string>>{
                  {"/usr/local/cuda-13.0/targets/x86_64-linux/lib/stubs",
                   "/etc/ld.so.conf.d/zz-cuda.conf:1"},
                  {"/usr/local/cuda/lib64/stubs", "/etc/ld.so.conf.d/cuda-stubs.conf:2"},
              });
    }

    TEST_CASE("a search directory that is a link to a stubs directory is one too") {
        MemoryTree tree;
        tree.add_dir("/usr/local/cuda-13.0/lib64/stubs");
        tree.add_symlink("/opt/cudalink", "/usr/local/cuda-13.0/lib64/stubs");
        tree.add_file("/etc/ld.so.conf", "/opt/cudalink\n/opt/missing\n");
        CHECK(places(stubs_ok(tree, {"/opt/cudalink"})) ==
              std::vector<std::pair<std::string, std::string>>{
                  {"/opt/cudalink", "/etc/ld.so.conf:1"},
                  {"/opt/cudalink", "LD_LIBRARY_PATH"},
              });
    }

    TEST_CASE("LD_LIBRARY_PATH stubs are reported whether or not the directory exists") {
        MemoryTree tree;
        tree.add_dir("/etc");
        auto problems =
            stubs_ok(tree, {"/usr/lib", "", "/usr/local/cuda/lib64/stubs", "stubs", "/opt/x"});
        CHECK(places(problems) == std::vector<std::pair<std::string, std::string>>{
                                      {"/usr/local/cuda/lib64/stubs", "LD_LIBRARY_PATH"},
                                      {"stubs", "LD_LIBRARY_PATH"},
                                  });
    }

    TEST_CASE("RPATH and RUNPATH elements name stubs with $ORIGIN expanded") {
        MemoryTree tree;
        tree.add_dir("/etc");
        elf::ElfInfo runpath;
        runpath.runpath = Strings{"$ORIGIN/../lib", "", "$ORIGIN/stubs", "/usr/local/cuda/lib64"};
        elf::ElfInfo rpath;
        rpath.rpath = Strings{"/usr/local/cuda/lib64/stubs", "${ORIGIN}"};
        elf::ElfInfo unknown;
        unknown.runpath = Strings{"$PLATFORM/stubs", "$LIB"};
        elf::ElfInfo none;
        auto problems = stubs_ok(tree, {},
                                 {{"/opt/app/bin/app", &runpath},
                                  {"/usr/local/cuda/lib64/stubs/libtool.so", &rpath},
                                  {"/opt/odd/libodd.so", &unknown},
                                  {"/opt/plain/libplain.so", &none},
                                  {"/opt/null/libnull.so", nullptr}});
        CHECK(places(problems) == std::vector<std::pair<std::string, std::string>>{
                                      {"$PLATFORM/stubs", "/opt/odd/libodd.so DT_RUNPATH"},
                                      {"/opt/app/bin/stubs", "/opt/app/bin/app DT_RUNPATH"},
                                      {"/usr/local/cuda/lib64/stubs",
                                       "/usr/local/cuda/lib64/stubs/libtool.so DT_RPATH"},
                                  });
    }

    TEST_CASE("a root with no search path naming stubs has no stubs problem") {
        MemoryTree tree;
        tree.add_file("/etc/ld.so.conf", "/usr/local/cuda/lib64\n");
        tree.add_dir("/usr/local/cuda/lib64/stubs");
        elf::ElfInfo info;
        info.runpath = Strings{"$ORIGIN"};
        CHECK(stubs_ok(tree, {"/usr/local/cuda/lib64"}, {{"/usr/local/cuda/lib64/libx.so", &info}})
                  .empty());
    }

    TEST_CASE("an ld.so.conf that cannot be read fails the stubs rule with its own error") {
        MemoryTree tree;
        tree.add_file("/etc/ld.so.conf", "include /etc/ld.so.conf\n");
        auto result = stubs_path_problems(tree, {}, {});
        REQUIRE_FALSE(result.ok());
        CHECK(result.error().text() ==
              "/etc/ld.so.conf:1: include cycle: /etc/ld.so.conf -> /etc/ld.so.conf");
    }
}
