// The closure checker over in-memory roots: every problem at once, merged across load
// contexts, with candidates; standalone findings as warnings; versions; CUDA major mixes.
#include <doctest/doctest.h>

#include <algorithm>

#include "check/closure_check.hpp"
#include "check/cuda_family.hpp"
#include "check/object_scan.hpp"
#include "support/fake_root.hpp"

namespace rootlock::testing {
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
    for (const auto& p : report.problems) {
        out.push_back(p.kind + (p.severity == check::Severity::error ? "" : " (warning)"));
    }
    return out;
}

}  // namespace

TEST_SUITE("rootlock::check") {
    TEST_CASE("a sound root passes") {
        auto tree = make_fake_root();
        auto report = run(*tree);
        CHECK(report.ok);
        CHECK(report.problems.empty());
        CHECK(report.objects == 3);
    }

    TEST_CASE("resolutions are kept for `why` only when asked") {
        auto tree = make_fake_root();
        add_elf(*tree, "/usr/bin/app", program_spec({"libc.so.6"}));
        check::CheckOptions options;
        auto plain = check::run_check(*tree, options);
        REQUIRE(plain.ok());
        CHECK(plain->edges.empty());
        options.record_edges = true;
        auto kept = check::run_check(*tree, options);
        REQUIRE(kept.ok());
        CHECK(std::any_of(kept->edges.begin(), kept->edges.end(), [](const check::Edge& edge) {
            return edge.requester == "/usr/bin/app" && edge.name == "libc.so.6" &&
                   !edge.provider.empty();
        }));
        CHECK(kept->problems.size() == plain->problems.size());
    }

    TEST_CASE("one run names every missing soname with every object that needs it") {
        auto tree = make_fake_root();
        add_elf(*tree, "/usr/bin/one", program_spec({"libgone.so.1", "libc.so.6"}));
        add_elf(*tree, "/usr/bin/two", program_spec({"libgone.so.1", "libalso.so.2"}));
        // A copy the search cannot reach is offered as a candidate.
        add_elf(*tree, "/opt/stash/libgone.so.1", library_spec("libgone.so.1"));
        auto report = run(*tree);
        CHECK_FALSE(report.ok);
        REQUIRE(kinds(report) == std::vector<std::string>{"missing-soname", "missing-soname"});
        const auto& also = report.problems[0].fields;
        CHECK(also["soname"] == "libalso.so.2");
        CHECK(also["needed_by"] == nlohmann::ordered_json({"/usr/bin/two"}));
        const auto& gone = report.problems[1].fields;
        CHECK(gone["soname"] == "libgone.so.1");
        CHECK(gone["needed_by"] == nlohmann::ordered_json({"/usr/bin/one", "/usr/bin/two"}));
        CHECK(gone["candidates"] == nlohmann::ordered_json({"/opt/stash/libgone.so.1"}));
    }

    TEST_CASE("a copy of another machine on the search path is named, as ld.so skipped it") {
        auto tree = make_fake_root();
        add_elf(*tree, "/usr/bin/app", program_spec({"libnet.so.2"}));
        // Where the search looks, but aarch64: ld.so passes over it as if it were absent.
        ElfSpec foreign = library_spec("libnet.so.2");
        foreign.machine = elf::k_machine_aarch64;
        add_elf(*tree, "/usr/lib/x86_64-linux-gnu/libnet.so.2", foreign);
        auto report = run(*tree);
        REQUIRE(kinds(report) == std::vector<std::string>{"missing-soname"});
        const auto& f = report.problems[0].fields;
        CHECK(f["candidates"].empty());
        REQUIRE(f.contains("wrong_machine"));
        CHECK(f["wrong_machine"] ==
              nlohmann::ordered_json::parse(R"([{"path": "/usr/lib/x86_64-linux-gnu/libnet.so.2",
                                               "machine": "aarch64 ELFCLASS64"}])"));
        CHECK(std::count(report.notes.begin(), report.notes.end(),
                         "1 objects of another ELF class or machine were not checked") == 1);
    }

    TEST_CASE("a library checked only on its own gives warnings, not errors") {
        auto tree = make_fake_root();
        add_elf(*tree, "/usr/lib/plugins/libplugin.so",
                library_spec("libplugin.so", {"libhost.so"}));
        auto report = run(*tree);
        CHECK(report.ok);
        REQUIRE(kinds(report) == std::vector<std::string>{"missing-soname (warning)"});
        CHECK(report.problems[0].fields["context"] == "standalone");
    }

    TEST_CASE("a library loaded by a program is checked in that program's context") {
        auto tree = make_fake_root();
        ElfSpec app = program_spec({"libmid.so.1"});
        app.rpath = "/opt/app/lib:/opt/app/deps";
        add_elf(*tree, "/opt/app/bin/app", app);
        // libmid finds libdeep only through the program's inherited RPATH: fine in context.
        add_elf(*tree, "/opt/app/lib/libmid.so.1", library_spec("libmid.so.1", {"libdeep.so.1"}));
        add_elf(*tree, "/opt/app/deps/libdeep.so.1", library_spec("libdeep.so.1"));
        auto report = run(*tree);
        CHECK(report.ok);
        CHECK(report.problems.empty());
    }

    TEST_CASE("a missing symbol version is reported against the provider the loader picked") {
        auto tree = make_fake_root();
        ElfSpec needy = program_spec({"libc.so.6"});
        needy.version_needs = {{"libc.so.6", {{"GLIBC_2.99", 2, false}}}};
        add_elf(*tree, "/usr/bin/needy", needy);
        auto report = run(*tree);
        CHECK_FALSE(report.ok);
        REQUIRE(kinds(report) == std::vector<std::string>{"missing-version"});
        const auto& f = report.problems[0].fields;
        CHECK(f["version"] == "GLIBC_2.99");
        CHECK(f["soname"] == "libc.so.6");
        CHECK(f["provider"] == "/usr/lib/x86_64-linux-gnu/libc.so.6");
        CHECK(f["needed_by"] == nlohmann::ordered_json({"/usr/bin/needy"}));
    }

    TEST_CASE("two CUDA majors of one family in one process are a warning") {
        auto tree = make_fake_root();
        ElfSpec app = program_spec({"libcudart.so.12", "libcublas.so.13", "libcudart.so.13"});
        app.rpath = "/opt/cuda";
        add_elf(*tree, "/opt/cuda/app", app);
        for (const char* soname : {"libcudart.so.12", "libcudart.so.13", "libcublas.so.13"}) {
            add_elf(*tree, std::string("/opt/cuda/") + soname, library_spec(soname));
        }
        auto report = run(*tree);
        REQUIRE(kinds(report) == std::vector<std::string>{"cuda-major-mix (warning)"});
        CHECK(report.ok);
        CHECK(report.problems[0].fields["family"] == "cudart");
        CHECK(report.problems[0].fields["majors"] == nlohmann::ordered_json({12, 13}));
    }

    TEST_CASE("a file ld.so would reject is reported as a bad object, not a missing soname") {
        auto tree = make_fake_root();
        ElfSpec app = program_spec({"libtiny.so.1"});
        app.rpath = "/opt/t";
        add_elf(*tree, "/opt/t/app", app);
        tree->add_file("/opt/t/libtiny.so.1", std::string("short"));
        auto report = run(*tree);
        REQUIRE(kinds(report) == std::vector<std::string>{"bad-object"});
        CHECK(report.problems[0].fields["problem"] == "file too short");
        CHECK(report.problems[0].fields["path"] == "/opt/t/libtiny.so.1");
    }

    TEST_CASE("a program whose interpreter is missing cannot run") {
        auto tree = make_fake_root();
        ElfSpec musl = program_spec({"libc.so"});
        musl.interpreter = "/lib/ld-musl-x86_64.so.1";
        add_elf(*tree, "/opt/musl/app", musl);
        auto report = run(*tree, {"/opt/musl"});
        REQUIRE(kinds(report) == std::vector<std::string>{"missing-soname", "missing-interpreter"});
        CHECK(report.problems[1].fields["interpreter"] == "/lib/ld-musl-x86_64.so.1");
        CHECK(report.problems[1].fields["needed_by"] == nlohmann::ordered_json({"/opt/musl/app"}));
    }

    TEST_CASE("the paths limit what is checked") {
        auto tree = make_fake_root();
        add_elf(*tree, "/opt/a/app", program_spec({"libgone.so.1"}));
        CHECK(run(*tree, {"/usr"}).ok);
        CHECK_FALSE(run(*tree, {"/opt"}).ok);
    }

    TEST_CASE("torch's extensions see libtorch_global_deps.so's libraries already loaded") {
        auto tree = make_fake_root();
        add_elf(*tree, "/usr/bin/python3.11", program_spec({"libc.so.6"}));
        const std::string venv = "/opt/venv";
        const std::string site = venv + "/lib/python3.11/site-packages";
        tree->add_file(venv + "/pyvenv.cfg",
                       std::string("home = /usr/bin\ninclude-system-site-packages = false\n"
                                   "version = 3.11.2\n"));
        tree->add_symlink(venv + "/bin/python3", "/usr/bin/python3.11");
        tree->add_dir(site);
        // The global deps library finds libcudart through its RPATH and is loaded RTLD_GLOBAL
        // by torch/__init__.py; torch._C names libcudart.so.12 with no way to find it itself.
        ElfSpec global = library_spec("libtorch_global_deps.so", {"libcudart.so.12"});
        global.rpath = "$ORIGIN/../../nvidia/cuda_runtime/lib";
        add_elf(*tree, site + "/torch/lib/libtorch_global_deps.so", global);
        add_elf(*tree, site + "/nvidia/cuda_runtime/lib/libcudart.so.12",
                library_spec("libcudart.so.12"));
        ElfSpec ext = library_spec("", {"libcudart.so.12"});
        add_elf(*tree, site + "/torch/_C.cpython-311-x86_64-linux-gnu.so", ext);
        auto report = run(*tree, {venv});
        CHECK(report.ok);
        CHECK(report.problems.empty());
        // The same extension outside torch's package is loaded without that preload.
        add_elf(*tree, site + "/other/_ext.cpython-311-x86_64-linux-gnu.so", ext);
        auto broken = run(*tree, {venv});
        CHECK_FALSE(broken.ok);
        REQUIRE(kinds(broken) == std::vector<std::string>{"missing-soname"});
        CHECK(broken.problems[0].fields["needed_by"] ==
              nlohmann::ordered_json({site + "/other/_ext.cpython-311-x86_64-linux-gnu.so"}));
    }

    TEST_CASE("CUDA majors are read from sonames, including the libraries whose major lags") {
        CHECK(check::cuda_membership("libcudart.so.12")->cuda_major == 12);
        CHECK(check::cuda_membership("libcufft.so.11")->cuda_major == 12);
        CHECK(check::cuda_membership("libcufft.so.12")->cuda_major == 13);
        CHECK(check::cuda_membership("libcusolver.so.12")->cuda_major == 13);
        CHECK(check::cuda_membership("libcublasLt.so.13")->family == "cublas");
        CHECK_FALSE(check::cuda_membership("libcusparse.so.12"));  // the same under 12 and 13
        CHECK_FALSE(check::cuda_membership("libcudnn.so.9"));
        CHECK_FALSE(check::cuda_membership("libcudart.so"));
    }

    TEST_CASE("extension module names are told apart from libraries") {
        CHECK(check::is_extension_name("_C.cpython-311-x86_64-linux-gnu.so"));
        CHECK(check::is_extension_name("foo.abi3.so"));
        CHECK(check::is_extension_name("bar.so"));
        CHECK_FALSE(check::is_extension_name("libtorch.so.2"));
        CHECK_FALSE(check::is_extension_name("lib-foo.so"));
        CHECK_FALSE(check::is_extension_name("x.py"));
    }
}

}  // namespace rootlock::testing
