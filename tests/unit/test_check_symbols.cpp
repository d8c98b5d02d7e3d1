// Symbol-level checks over in-memory roots: glibc's matching rules for versioned and hidden
// definitions, lookup scopes (main program first, then the needed closure), when a missing
// symbol fails, demangled grouping with the library expected, and the wrong provider winning.
#include <doctest/doctest.h>

#include "check/closure_check.hpp"
#include "check/symbol_index.hpp"
#include "check/symbol_report.hpp"
#include "support/fake_root.hpp"

namespace rootlock::testing::ROOTLOCK_UNIT_ID {
namespace {

check::CheckReport run(const fs::FileTree& tree, std::vector<std::string> ld_library_path = {}) {
    check::CheckOptions options;
    options.model.ld_library_path = std::move(ld_library_path);
    auto report = check::run_check(tree, options);
    REQUIRE(report.ok());
    return std::move(report.value());
}

std::vector<const check::Problem*> of_kind(const check::CheckReport& report,
                                           const std::string& kind) {
    std::vector<const check::Problem*> out;
    for (const auto& problem : report.problems) {
        if (problem.kind == kind)
            out.push_back(&problem);
    }
    return out;
}

SymbolSpec defined(const std::string& name, uint8_t type = elf::k_stt_func) {
    SymbolSpec symbol;
    symbol.name = name;
    symbol.type = type;
    return symbol;
}

SymbolSpec undefined(const std::string& name, uint8_t type = elf::k_stt_func) {
    SymbolSpec symbol = defined(name, type);
    symbol.defined = false;
    return symbol;
}

ElfSpec exporting(const std::string& soname, std::vector<std::string> names,
                  std::vector<std::string> needed = {}) {
    ElfSpec spec = library_spec(soname, std::move(needed));
    for (const auto& name : names)
        spec.symbols.push_back(defined(name));
    return spec;
}

std::shared_ptr<const elf::ElfInfo> parse(const ElfSpec& spec) {
    auto tree = make_fake_root();
    add_elf(*tree, "/x.so", spec);
    auto probe = tree->probe_elf("/x.so", true);
    REQUIRE(probe.info);
    return probe.info;
}

}  // namespace

TEST_SUITE("rootlock::check") {
    TEST_CASE("an export index answers references as glibc's check_match does") {
        ElfSpec spec = library_spec("libv.so.1");
        spec.version_defs = {{"V1", 2, 0, {}}, {"V2", 3, 0, {}}};
        SymbolSpec old_f = defined("f");
        old_f.version_index = 2;
        old_f.hidden = true;  // f@V1
        SymbolSpec new_f = defined("f");
        new_f.version_index = 3;  // f@@V2
        SymbolSpec only_hidden = defined("g");
        only_hidden.version_index = 2;
        only_hidden.hidden = true;  // g@V1 and no default
        SymbolSpec plain = defined("h");
        plain.version_index = 1;  // unversioned in a versioned object
        SymbolSpec local = defined("l");
        local.binding = elf::k_stb_local;
        spec.symbols = {old_f, new_f, only_hidden, plain, local, undefined("u")};
        check::ExportIndex index(parse(spec));
        struct Row {
            const char* name;
            const char* version;
            bool expected;
        };
        const Row rows[] = {
            {"f", "", true},  {"f", "V1", true}, {"f", "V2", true},      {"f", "V3", false},
            {"g", "", false}, {"g", "V1", true}, {"h", "", true},        {"h", "V7", true},
            {"l", "", false}, {"u", "", false},  {"nothing", "", false},
        };
        for (const auto& row : rows) {
            CAPTURE(row.name);
            CAPTURE(row.version);
            CHECK(index.defines(row.name, row.version) == row.expected);
        }
        // An object without version information answers any version.
        check::ExportIndex plain_index(parse(exporting("libp.so", {"f"})));
        CHECK(plain_index.defines("f", "ANY_1.0"));
        CHECK_FALSE(plain_index.defines("g", ""));
    }

    TEST_CASE("an export index of thousands of names finds each and nothing else") {
        // Enough names for many buckets and Bloom words, so chains and filter bits both count.
        std::vector<std::string> names;
        for (int i = 0; i < 5000; ++i)
            names.push_back("_ZN5torch3jit" + std::to_string(i) + "fEv");
        check::ExportIndex index(parse(exporting("libmany.so", names)));
        CHECK(index.size() == names.size());
        size_t found = 0;
        size_t wrongly = 0;
        for (int i = 0; i < 5000; ++i) {
            found += index.defines(names[static_cast<size_t>(i)], "") ? 1U : 0U;
            wrongly += index.defines("_ZN5torch3jit" + std::to_string(i) + "gEv", "") ? 1U : 0U;
            wrongly += index.defines(names[static_cast<size_t>(i)] + "x", "") ? 1U : 0U;
        }
        CHECK(found == names.size());
        CHECK(wrongly == 0);
        CHECK(index.namespace_count("5torch") == names.size());
        check::ExportIndex empty(parse(exporting("libnone.so", {})));
        CHECK(empty.size() == 0);
        CHECK_FALSE(empty.defines("f", ""));
    }

    TEST_CASE("mangled names give their top-level namespace, C names none") {
        const std::pair<const char*, const char*> rows[] = {
            {"_ZN3c104cuda9SetDeviceEi", "3c10"},
            {"_ZNK2at6Tensor4sizeEl", "2at"},
            {"_ZTVN5torch3jit6ModuleE", "5torch"},
            {"_ZN3c1", ""},   // the length runs past the end
            {"_Z3foov", ""},  // not in a namespace
            {"cudaMalloc", ""},
            {"_ZN99999x", ""},
        };
        for (const auto& [name, expected] : rows) {
            CAPTURE(name);
            CHECK(check::mangled_namespace(name) == expected);
        }
        CHECK(check::demangle("_ZN3c104cuda9SetDeviceEi") == "c10::cuda::SetDevice(int)");
        CHECK(check::demangle("cudaMalloc") == "cudaMalloc");
        CHECK(check::c_prefix("ncclCommShrink") == "nccl");
        CHECK(check::c_prefix("f_new").empty());
        CHECK(check::demangle("_Znot-mangled") == "_Znot-mangled");
    }

    TEST_CASE("a symbol no object in scope defines is named, with when it fails") {
        auto tree = make_fake_root();
        add_elf(*tree, "/usr/lib/x86_64-linux-gnu/libx.so.1", exporting("libx.so.1", {"present"}));
        ElfSpec app = program_spec({"libx.so.1", "libc.so.6"});
        // Called through the PLT, or with its address taken (bound at load like data).
        SymbolSpec called = undefined("gone_function");
        called.relocation = Relocation::plt;
        SymbolSpec address = undefined("gone_address");
        address.relocation = Relocation::data;
        SymbolSpec data = undefined("gone_data", elf::k_stt_object);
        data.relocation = Relocation::data;
        SymbolSpec present = undefined("present");
        present.relocation = Relocation::plt;
        app.symbols = {present, called, address, data};
        add_elf(*tree, "/usr/bin/app", app);
        ElfSpec now = app;
        now.flags = elf::k_df_bind_now;
        add_elf(*tree, "/usr/bin/app-now", now);
        auto report = run(*tree);
        CHECK_FALSE(report.ok);
        auto found = of_kind(report, "undefined-symbol");
        REQUIRE(found.size() == 2);
        // Lazily bound: the function fails at its first call, the data at load.
        const auto& lazy =
            found[0]->fields["needed_by"][0] == "/usr/bin/app" ? *found[0] : *found[1];
        const auto& eager = &lazy == found[0] ? *found[1] : *found[0];
        CHECK(lazy.severity == check::Severity::error);
        CHECK(lazy.fields["library"] == "");
        CHECK(lazy.fields["count"] == 3);
        CHECK(lazy.fields["symbols"] == nlohmann::ordered_json::parse(R"([
                {"name": "gone_address", "demangled": "gone_address", "version": "",
                 "fails": "at-load"},
                {"name": "gone_data", "demangled": "gone_data", "version": "", "fails": "at-load"},
                {"name": "gone_function", "demangled": "gone_function", "version": "",
                 "fails": "at-first-call"}])"));
        CHECK(eager.fields["needed_by"] == nlohmann::ordered_json({"/usr/bin/app-now"}));
        CHECK(eager.fields["symbols"][2]["fails"] == "at-load");
        CHECK(report.symbols == 8);
    }

    TEST_CASE("programs bound beside their loading report as one by one, run after run") {
        // Sixty programs through the session pipeline: each binds on its worker while the next
        // loads, and merges in order. Which symbols go missing, who misses them, and the count
        // of references must not depend on that, nor change between runs.
        auto tree = make_fake_root();
        add_elf(*tree, "/usr/lib/x86_64-linux-gnu/libhere.so.1",
                exporting("libhere.so.1", {"here_a", "here_b"}));
        for (int i = 0; i < 60; ++i) {
            ElfSpec app = program_spec({"libhere.so.1", "libc.so.6"});
            app.symbols = {undefined("here_a"), undefined("gone_" + std::to_string(i % 7))};
            add_elf(*tree, "/usr/bin/app" + std::to_string(100 + i), app);
        }
        const auto first = run(*tree);
        CHECK(first.symbols == 120);
        auto found = of_kind(first, "undefined-symbol");
        REQUIRE(found.size() == 7);
        for (const auto* problem : found) {
            const auto& symbols = problem->fields["symbols"];
            REQUIRE(symbols.size() == 1);
            const int k = std::stoi(symbols[0]["name"].get<std::string>().substr(5));
            nlohmann::ordered_json expected = nlohmann::ordered_json::array();
            for (int i = k; i < 60; i += 7)
                expected.push_back("/usr/bin/app" + std::to_string(100 + i));
            CHECK(problem->fields["needed_by"] == expected);
        }
        for (int again = 0; again < 4; ++again) {
            const auto next = run(*tree);
            CHECK(next.symbols == first.symbols);
            REQUIRE(next.problems.size() == first.problems.size());
            for (size_t p = 0; p < first.problems.size(); ++p)
                CHECK(next.problems[p].fields == first.problems[p].fields);
        }
    }

    TEST_CASE("the main program's exports and the whole global scope satisfy a library") {
        auto tree = make_fake_root();
        // libuser needs host_api (from the program) and sibling (from a library it does not
        // itself need, but the program does): both are in the global scope.
        ElfSpec user = library_spec("libuser.so.1");
        user.symbols = {undefined("host_api"), undefined("sibling")};
        add_elf(*tree, "/usr/lib/x86_64-linux-gnu/libuser.so.1", user);
        add_elf(*tree, "/usr/lib/x86_64-linux-gnu/libsib.so.1",
                exporting("libsib.so.1", {"sibling"}));
        ElfSpec app = program_spec({"libuser.so.1", "libsib.so.1"});
        app.symbols = {defined("host_api")};
        add_elf(*tree, "/usr/bin/app", app);
        auto report = run(*tree);
        CHECK(of_kind(report, "undefined-symbol").empty());
        CHECK(report.ok);
    }

    TEST_CASE(
        "weak references and the references of libraries whose needs are missing are "
        "not reported") {
        auto tree = make_fake_root();
        ElfSpec app = program_spec({"libc.so.6", "libabsent.so.1"});
        SymbolSpec weak = undefined("optional_hook");
        weak.binding = elf::k_stb_weak;
        app.symbols = {weak, undefined("from_absent")};
        add_elf(*tree, "/usr/bin/app", app);
        auto report = run(*tree);
        CHECK(of_kind(report, "undefined-symbol").empty());
        CHECK(of_kind(report, "missing-soname").size() == 1);
    }

    TEST_CASE("a library nothing loads is checked for versioned references only") {
        auto tree = make_fake_root();
        ElfSpec plugin = library_spec("libplugin.so", {"libc.so.6"});
        plugin.version_needs = {{"libc.so.6", {{"GLIBC_2.34", 2, false}}}};
        SymbolSpec versioned = undefined("memfrob_new");
        versioned.version_index = 2;
        plugin.symbols = {undefined("Perl_host_function"), versioned};
        add_elf(*tree, "/usr/lib/plugins/libplugin.so", plugin);
        auto report = run(*tree);
        CHECK(report.ok);  // standalone findings are warnings
        auto found = of_kind(report, "undefined-symbol");
        REQUIRE(found.size() == 1);
        CHECK(found[0]->severity == check::Severity::warning);
        CHECK(found[0]->fields["context"] == "standalone");
        CHECK(found[0]->fields["library"] == "libc.so.6");
        CHECK(found[0]->fields["provider"] == "/usr/lib/x86_64-linux-gnu/libc.so.6");
        CHECK(found[0]->fields["symbols"][0]["name"] == "memfrob_new");
        CHECK(found[0]->fields["symbols"][0]["version"] == "GLIBC_2.34");
    }

    TEST_CASE("missing C++ symbols are grouped under the library of their namespace") {
        auto tree = make_fake_root();
        add_elf(*tree, "/opt/t/lib/libc10.so",
                exporting("libc10.so", {"_ZN3c106DeviceC1Ev", "_ZN3c105ErrorC2Ev"}));
        add_elf(*tree, "/opt/t/lib/libother.so", exporting("libother.so", {"_ZN5other1fEv"}));
        // Another build elsewhere in the root does define what is missing.
        add_elf(*tree, "/opt/old/lib/libc10.so",
                exporting("libc10.so", {"_ZN3c104cuda9SetDeviceEi", "_ZN3c105ErrorC2Ev"}));
        ElfSpec ext = program_spec({"libc10.so", "libother.so"});
        ext.rpath = "$ORIGIN/lib";
        ext.symbols = {undefined("_ZN3c104cuda9SetDeviceEi"), undefined("_ZN3c105ErrorC2Ev")};
        add_elf(*tree, "/opt/t/ext", ext);
        auto report = run(*tree);
        auto found = of_kind(report, "undefined-symbol");
        REQUIRE(found.size() == 1);
        const auto& f = found[0]->fields;
        CHECK(f["library"] == "libc10.so");
        CHECK(f["provider"] == "/opt/t/lib/libc10.so");
        CHECK(f["count"] == 1);
        CHECK(f["symbols"][0]["demangled"] == "c10::cuda::SetDevice(int)");
        CHECK(f["defined_by"] == nlohmann::ordered_json({"/opt/old/lib/libc10.so"}));
        CHECK(f["hint"] == "this extension was built against another torch");
    }

    TEST_CASE("torch's own library missing a symbol of its sibling is a torch of mixed builds") {
        auto tree = make_fake_root();
        add_elf(*tree, "/opt/t/torch/lib/libc10.so",
                exporting("libc10.so", {"_ZN3c106DeviceC1Ev"}));
        ElfSpec cpu = library_spec("libtorch_cpu.so", {"libc10.so"});
        cpu.runpath = "$ORIGIN";
        cpu.symbols = {undefined("_ZN3c105ErrorC2Ev")};
        add_elf(*tree, "/opt/t/torch/lib/libtorch_cpu.so", cpu);
        ElfSpec app = program_spec({"libtorch_cpu.so"});
        app.rpath = "/opt/t/torch/lib";
        add_elf(*tree, "/usr/bin/train", app);
        auto report = run(*tree);
        auto found = of_kind(report, "undefined-symbol");
        REQUIRE(found.size() == 1);
        CHECK(found[0]->fields["library"] == "libc10.so");
        CHECK(found[0]->fields["hint"] == "torch's own libraries come from different builds");
    }

    TEST_CASE("missing C symbols are grouped under the needed library with their prefix") {
        auto tree = make_fake_root();
        add_elf(*tree, "/usr/lib/x86_64-linux-gnu/libnccl.so.2",
                exporting("libnccl.so.2", {"ncclCommInitRank", "ncclAllReduce"}));
        ElfSpec torch = library_spec("libtorch_cuda.so", {"libnccl.so.2", "libc.so.6"});
        torch.symbols = {undefined("ncclCommShrink"), undefined("ncclAllReduce")};
        add_elf(*tree, "/opt/t/libtorch_cuda.so", torch);
        ElfSpec app = program_spec({"libtorch_cuda.so"});
        app.rpath = "/opt/t";
        add_elf(*tree, "/usr/bin/train", app);
        auto report = run(*tree);
        auto found = of_kind(report, "undefined-symbol");
        REQUIRE(found.size() == 1);
        CHECK(found[0]->fields["library"] == "libnccl.so.2");
        CHECK(found[0]->fields["needed_by"] == nlohmann::ordered_json({"/opt/t/libtorch_cuda.so"}));
        CHECK(found[0]->fields["hint"] ==
              "libnccl.so.2 does not define them: another build of it wins, or it is older than "
              "the one linked against");
    }

    TEST_CASE("a copy on LD_LIBRARY_PATH beating the consumer's own is a wrong provider") {
        auto shadow_root = [](std::vector<std::string> other_exports) {
            auto tree = make_fake_root();
            ElfSpec app = program_spec({"libshadow.so.1", "libc.so.6"});
            app.runpath = "$ORIGIN/../lib";
            app.symbols = {undefined("f_new")};
            add_elf(*tree, "/opt/app/bin/app", app);
            add_elf(*tree, "/opt/app/lib/libshadow.so.1",
                    exporting("libshadow.so.1", {"f_new", "f_old"}));
            add_elf(*tree, "/opt/other/lib/libshadow.so.1",
                    exporting("libshadow.so.1", std::move(other_exports)));
            return tree;
        };
        auto tree = shadow_root({"f_old"});
        auto clean = run(*tree);
        CHECK(clean.ok);
        CHECK(of_kind(clean, "wrong-provider").empty());

        auto shadowed = run(*tree, {"/opt/other/lib"});
        CHECK_FALSE(shadowed.ok);
        auto wrong = of_kind(shadowed, "wrong-provider");
        REQUIRE(wrong.size() == 1);
        CHECK(wrong[0]->severity == check::Severity::error);
        CHECK(wrong[0]->fields == nlohmann::ordered_json::parse(R"({
            "soname": "libshadow.so.1", "picked": "/opt/other/lib/libshadow.so.1",
            "via": "ld-library-path", "packaged": "/opt/app/lib/libshadow.so.1",
            "needed_by": ["/opt/app/bin/app"],
            "copies": ["/opt/app/lib/libshadow.so.1", "/opt/other/lib/libshadow.so.1"],
            "reason": "/opt/app/bin/app needs f_new, which the winner lacks"
        })"));
        auto missing = of_kind(shadowed, "undefined-symbol");
        REQUIRE(missing.size() == 1);
        CHECK(missing[0]->fields["symbols"][0]["name"] == "f_new");
        CHECK(missing[0]->fields["defined_by"] ==
              nlohmann::ordered_json({"/opt/app/lib/libshadow.so.1"}));

        // A winner that has everything the consumer needs is still named, as a warning.
        auto complete = shadow_root({"f_new", "f_old"});
        auto harmless = run(*complete, {"/opt/other/lib"});
        CHECK(harmless.ok);
        auto warned = of_kind(harmless, "wrong-provider");
        REQUIRE(warned.size() == 1);
        CHECK(warned[0]->severity == check::Severity::warning);
        CHECK_FALSE(warned[0]->fields.contains("reason"));
    }

    TEST_CASE("a winner lacking a needed version makes the wrong provider an error") {
        auto tree = make_fake_root();
        ElfSpec app = program_spec({"libnvJitLink.so.12", "libc.so.6"});
        app.runpath = "$ORIGIN";
        app.version_needs = {{"libnvJitLink.so.12", {{"libnvJitLink.so.12.4", 2, false}}}};
        SymbolSpec complete = undefined("__nvJitLinkComplete_12_4");
        complete.version_index = 2;
        app.symbols = {complete};
        add_elf(*tree, "/opt/venv/nvidia/cusparse/lib/app", app);
        ElfSpec good = library_spec("libnvJitLink.so.12");
        good.version_defs = {{"libnvJitLink.so.12.4", 2, 0, {}}};
        SymbolSpec defined_complete = defined("__nvJitLinkComplete_12_4");
        defined_complete.version_index = 2;
        good.symbols = {defined_complete};
        add_elf(*tree, "/opt/venv/nvidia/cusparse/lib/libnvJitLink.so.12", good);
        ElfSpec old = library_spec("libnvJitLink.so.12");
        old.version_defs = {{"libnvJitLink.so.12.1", 2, 0, {}}};
        add_elf(*tree, "/usr/local/cuda/lib64/libnvJitLink.so.12", old);
        auto report = run(*tree, {"/usr/local/cuda/lib64"});
        auto wrong = of_kind(report, "wrong-provider");
        REQUIRE(wrong.size() == 1);
        CHECK(wrong[0]->severity == check::Severity::error);
        CHECK(wrong[0]->fields["reason"] ==
              "/opt/venv/nvidia/cusparse/lib/app needs version libnvJitLink.so.12.4, which the "
              "winner lacks");
        CHECK(of_kind(report, "missing-version").size() == 1);
    }
}

}  // namespace rootlock::testing::ROOTLOCK_UNIT_ID
