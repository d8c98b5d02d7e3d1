// The loader model rule by rule (loader.md section 1-4), over in-memory roots built with the
// test ELF writer. The same rules run against the real ld.so in tests/e2e/test_loader_rules.py.
#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <vector>

#include "loader/ld_so_cache.hpp"
#include "loader/root_model.hpp"
#include "loader/session.hpp"
#include "loader/versions.hpp"
#include "support/fake_root.hpp"

namespace rootlock::testing {
namespace {

struct Listed {
    std::string name;
    std::string path;  // "-" when not found
    std::string via;
    std::string via_object;
    bool operator==(const Listed&) const = default;
};

std::ostream& operator<<(std::ostream& out, const Listed& l) {
    return out << l.name << " => " << l.path << " (" << l.via
               << (l.via_object.empty() ? "" : " of " + l.via_object) << ")";
}

loader::RootModel model_for(const fs::FileTree& tree, loader::ModelOptions options = {}) {
    options.simulate_missing_cache = false;
    auto model = loader::open_root_model(tree, options);
    REQUIRE(model.ok());
    return std::move(model.value());
}

std::vector<Listed> list(loader::LoadSession& session) {
    std::vector<Listed> out;
    for (int index : session.list_order()) {
        const auto& object = session.objects()[static_cast<size_t>(index)];
        bool found = !object.faked && object.via != loader::Via::host_provided;
        std::string via_object;
        if (object.via_object >= 0) {
            via_object = session.objects()[static_cast<size_t>(object.via_object)].name;
        }
        out.push_back(Listed{object.first_request, found ? object.name : "-",
                             std::string(loader::via_name(object.via)), via_object});
    }
    return out;
}

std::vector<Listed> ldd(const fs::FileTree& tree, const std::string& file,
                        loader::ModelOptions options = {}) {
    loader::RootModel model = model_for(tree, std::move(options));
    loader::LoadSession session(*model.context);
    REQUIRE(session.load_main(file, false));
    return list(session);
}

Listed libc_default() {
    return {"libc.so.6", "/lib/x86_64-linux-gnu/libc.so.6", "default", ""};
}
Listed interpreter() {
    return {"/lib64/ld-linux-x86-64.so.2", "/lib64/ld-linux-x86-64.so.2", "interpreter", ""};
}

// A -> B -> C, A in /opt/t/a, B in /opt/t/b, C in /opt/t/c; A's tags are the test's choice.
void add_chain(fs::MemoryTree& tree, ElfSpec a, ElfSpec b) {
    a.needed = {"libb.so.1"};
    add_elf(tree, "/opt/t/a/prog", a);
    b.soname = "libb.so.1";
    b.needed = {"libc3.so.1"};
    add_elf(tree, "/opt/t/b/libb.so.1", b);
    add_elf(tree, "/opt/t/c/libc3.so.1", library_spec("libc3.so.1"));
}

}  // namespace

TEST_SUITE("rootlock::loader") {
    TEST_CASE("a program's own libraries come from the default directories without a cache") {
        auto tree = make_fake_root();
        CHECK(ldd(*tree, "/bin/sh") == std::vector<Listed>{libc_default(), interpreter()});
    }

    TEST_CASE("the RPATH chain of the requester's loaders finds a grandchild") {
        auto tree = make_fake_root();
        ElfSpec a = program_spec({});
        a.rpath = "$ORIGIN/../b:$ORIGIN/../c";
        add_chain(*tree, a, library_spec("libb.so.1"));
        auto listed = ldd(*tree, "/opt/t/a/prog");
        REQUIRE(listed.size() >= 2);
        CHECK(listed[0] ==
              Listed{"libb.so.1", "/opt/t/a/../b/libb.so.1", "rpath", "/opt/t/a/prog"});
        CHECK(listed[1] ==
              Listed{"libc3.so.1", "/opt/t/a/../c/libc3.so.1", "rpath", "/opt/t/a/prog"});
    }

    TEST_CASE("RUNPATH is not inherited by the requester's dependencies") {
        auto tree = make_fake_root();
        ElfSpec a = program_spec({});
        a.runpath = "$ORIGIN/../b:$ORIGIN/../c";
        add_chain(*tree, a, library_spec("libb.so.1"));
        auto listed = ldd(*tree, "/opt/t/a/prog");
        CHECK(listed[0] == Listed{"libb.so.1", "/opt/t/a/../b/libb.so.1", "runpath", ""});
        CHECK(listed[1] == Listed{"libc3.so.1", "-", "not-found", ""});
    }

    TEST_CASE("a RUNPATH on the requester switches the inherited RPATH chain off") {
        auto tree = make_fake_root();
        ElfSpec a = program_spec({});
        a.rpath = "$ORIGIN/../b:$ORIGIN/../c";
        ElfSpec b = library_spec("libb.so.1");
        b.runpath = "/nowhere";
        add_chain(*tree, a, b);
        auto listed = ldd(*tree, "/opt/t/a/prog");
        CHECK(listed[1] == Listed{"libc3.so.1", "-", "not-found", ""});
    }

    TEST_CASE("an object's RPATH is ignored when it also has a RUNPATH") {
        auto tree = make_fake_root();
        ElfSpec a = program_spec({"libb.so.1"});
        a.rpath = "/opt/t/b";
        a.runpath = "/nowhere";
        add_elf(*tree, "/opt/t/a/prog", a);
        add_elf(*tree, "/opt/t/b/libb.so.1", library_spec("libb.so.1"));
        auto listed = ldd(*tree, "/opt/t/a/prog");
        CHECK(listed[0] == Listed{"libb.so.1", "-", "not-found", ""});
    }

    TEST_CASE("LD_LIBRARY_PATH comes after the RPATH chain and before RUNPATH") {
        auto tree = make_fake_root();
        add_elf(*tree, "/opt/llp/libb.so.1", library_spec("libb.so.1"));
        add_elf(*tree, "/opt/t/b/libb.so.1", library_spec("libb.so.1"));
        ElfSpec with_rpath = program_spec({"libb.so.1"});
        with_rpath.rpath = "/opt/t/b";
        add_elf(*tree, "/opt/t/rpath-prog", with_rpath);
        ElfSpec with_runpath = program_spec({"libb.so.1"});
        with_runpath.runpath = "/opt/t/b";
        add_elf(*tree, "/opt/t/runpath-prog", with_runpath);
        loader::ModelOptions options;
        options.ld_library_path = {"/opt/llp"};
        CHECK(ldd(*tree, "/opt/t/rpath-prog", options)[0] ==
              Listed{"libb.so.1", "/opt/t/b/libb.so.1", "rpath", "/opt/t/rpath-prog"});
        CHECK(ldd(*tree, "/opt/t/runpath-prog", options)[0] ==
              Listed{"libb.so.1", "/opt/llp/libb.so.1", "ld-library-path", ""});
    }

    TEST_CASE("$ORIGIN of a library opened through a symlink is the symlink's directory") {
        auto tree = make_fake_root();
        ElfSpec b = library_spec("libb.so.1", {"libdep.so.1"});
        b.runpath = "$ORIGIN/../dep";
        add_elf(*tree, "/opt/real/lib/libb.so.1", b);
        add_elf(*tree, "/opt/real/dep/libdep.so.1", library_spec("libdep.so.1"));
        tree->add_symlink("/opt/link/lib/libb.so.1", "/opt/real/lib/libb.so.1");
        ElfSpec a = program_spec({"libb.so.1"});
        a.rpath = "/opt/link/lib";
        add_elf(*tree, "/opt/prog", a);
        auto listed = ldd(*tree, "/opt/prog");
        CHECK(listed[0].path == "/opt/link/lib/libb.so.1");
        CHECK(listed[1] == Listed{"libdep.so.1", "-", "not-found", ""});
    }

    TEST_CASE("NODEFLIB on the requester skips the default directories") {
        auto tree = make_fake_root();
        ElfSpec a = program_spec({"libc.so.6"});
        a.flags_1 = elf::k_df_1_nodeflib;
        add_elf(*tree, "/opt/nodeflib", a);
        CHECK(ldd(*tree, "/opt/nodeflib")[0] == Listed{"libc.so.6", "-", "not-found", ""});
        loader::ModelOptions options;
        options.ld_library_path = {"/lib/x86_64-linux-gnu"};
        CHECK(ldd(*tree, "/opt/nodeflib", options)[0].via == "ld-library-path");
    }

    TEST_CASE("a copy of the wrong class or machine is skipped and the next one loads") {
        auto tree = make_fake_root();
        ElfSpec wrong_class = library_spec("libb.so.1");
        wrong_class.elf_class = elf::ElfClass::elf32;
        wrong_class.machine = elf::k_machine_386;
        add_elf(*tree, "/opt/c32/libb.so.1", wrong_class);
        ElfSpec wrong_machine = library_spec("libb.so.1");
        wrong_machine.machine = elf::k_machine_aarch64;
        add_elf(*tree, "/opt/arm/libb.so.1", wrong_machine);
        add_elf(*tree, "/opt/good/libb.so.1", library_spec("libb.so.1"));
        ElfSpec a = program_spec({"libb.so.1"});
        a.rpath = "/opt/c32:/opt/arm:/opt/good";
        add_elf(*tree, "/opt/prog", a);
        CHECK(ldd(*tree, "/opt/prog")[0].path == "/opt/good/libb.so.1");
    }

    TEST_CASE("only a wrong-class copy gives ld.so's wrong ELF class error") {
        auto tree = make_fake_root();
        ElfSpec wrong_class = library_spec("libb.so.1");
        wrong_class.elf_class = elf::ElfClass::elf32;
        wrong_class.machine = elf::k_machine_386;
        add_elf(*tree, "/opt/c32/libb.so.1", wrong_class);
        ElfSpec a = program_spec({"libb.so.1"});
        a.rpath = "/opt/c32";
        add_elf(*tree, "/opt/prog", a);
        loader::RootModel model = model_for(*tree);
        loader::LoadSession session(*model.context);
        REQUIRE(session.load_main("/opt/prog", false));
        const auto& object = session.objects()[static_cast<size_t>(session.list_order()[0])];
        CHECK(object.faked);
        CHECK(object.fatal == "wrong ELF class: ELFCLASS32");
    }

    TEST_CASE("a file too short stops the search where it stands") {
        auto tree = make_fake_root();
        tree->add_file("/opt/short/libb.so.1", std::string("tiny"));
        add_elf(*tree, "/opt/good/libb.so.1", library_spec("libb.so.1"));
        ElfSpec a = program_spec({"libb.so.1"});
        a.rpath = "/opt/short:/opt/good";
        add_elf(*tree, "/opt/prog", a);
        loader::RootModel model = model_for(*tree);
        loader::LoadSession session(*model.context);
        REQUIRE(session.load_main("/opt/prog", false));
        const auto& object = session.objects()[static_cast<size_t>(session.list_order()[0])];
        CHECK(object.faked);
        CHECK(object.fatal == "file too short");
        CHECK(object.fatal_path == "/opt/short/libb.so.1");
    }

    TEST_CASE("an object loaded by path answers a later request for its SONAME") {
        auto tree = make_fake_root();
        add_elf(*tree, "/opt/x/other_name.so", library_spec("libc3.so.1"));
        add_elf(*tree, "/opt/x/libuser.so.1", library_spec("libuser.so.1", {"libc3.so.1"}));
        ElfSpec a = program_spec({"/opt/x/other_name.so", "libuser.so.1"});
        a.rpath = "/opt/x";
        add_elf(*tree, "/opt/prog", a);
        auto listed = ldd(*tree, "/opt/prog");
        CHECK(listed[0] == Listed{"/opt/x/other_name.so", "/opt/x/other_name.so", "path", ""});
        CHECK(listed[1].name == "libuser.so.1");
        CHECK(listed.size() == 2);  // libc3.so.1 was already loaded: not listed again
    }

    TEST_CASE("a glibc-hwcaps copy wins only when the CPU level is named, and is noted otherwise") {
        auto tree = make_fake_root();
        add_elf(*tree, "/opt/h/libb.so.1", library_spec("libb.so.1"));
        add_elf(*tree, "/opt/h/glibc-hwcaps/x86-64-v2/libb.so.1", library_spec("libb.so.1"));
        ElfSpec a = program_spec({"libb.so.1"});
        a.rpath = "/opt/h";
        add_elf(*tree, "/opt/prog", a);
        loader::ModelOptions v2;
        v2.overrides.hwcaps = {"x86-64-v3", "x86-64-v2"};
        CHECK(ldd(*tree, "/opt/prog", v2)[0].path == "/opt/h/glibc-hwcaps/x86-64-v2/libb.so.1");
        loader::RootModel model = model_for(*tree);
        loader::LoadSession session(*model.context);
        REQUIRE(session.load_main("/opt/prog", false));
        CHECK(list(session)[0].path == "/opt/h/libb.so.1");
        REQUIRE(model.context->notes().size() == 1);
        CHECK(model.context->notes().begin()->find("/opt/h/glibc-hwcaps exists") == 0);
    }

    TEST_CASE("$LIB expands to Debian's multiarch directory and $PLATFORM is noted as unknown") {
        auto tree = make_fake_root();
        add_elf(*tree, "/opt/p/lib/x86_64-linux-gnu/libb.so.1", library_spec("libb.so.1"));
        ElfSpec a = program_spec({"libb.so.1"});
        a.rpath = "/opt/p/$PLATFORM:/opt/p/$LIB";
        add_elf(*tree, "/opt/prog", a);
        loader::RootModel model = model_for(*tree);
        loader::LoadSession session(*model.context);
        REQUIRE(session.load_main("/opt/prog", false));
        CHECK(list(session)[0].path == "/opt/p/lib/x86_64-linux-gnu/libb.so.1");
        REQUIRE(model.context->notes().size() == 1);
        CHECK(*model.context->notes().begin() ==
              "$PLATFORM cannot be known statically: search path element \"/opt/p/$PLATFORM\" "
              "skipped");
    }

    TEST_CASE(
        "a dlopened object's dependencies see its RPATH and the program's, not the caller's") {
        auto tree = make_fake_root();
        ElfSpec b = library_spec("libb.so.1", {"libc3.so.1"});
        add_elf(*tree, "/opt/t/b/libb.so.1", b);
        add_elf(*tree, "/opt/t/c/libc3.so.1", library_spec("libc3.so.1"));
        loader::RootModel model = model_for(*tree);
        loader::LoadSession session(*model.context);
        REQUIRE(session.load_main("/bin/sh", true));
        int index = session.dlopen("/opt/t/b/libb.so.1");
        REQUIRE(index >= 0);
        CHECK(session.objects()[static_cast<size_t>(index)].loader == -1);
        auto listed = list(session);
        CHECK(listed.back() == Listed{"libc3.so.1", "-", "not-found", ""});
    }

    TEST_CASE("dlopen from a library searches its RPATH; what it opens does not inherit it") {
        auto tree = make_fake_root();
        ElfSpec a = library_spec("liba.so.1");
        a.rpath = "$ORIGIN/../b:$ORIGIN/../c";
        add_elf(*tree, "/opt/t/a/liba.so.1", a);
        add_elf(*tree, "/opt/t/b/libb.so.1", library_spec("libb.so.1", {"libc3.so.1"}));
        add_elf(*tree, "/opt/t/c/libc3.so.1", library_spec("libc3.so.1"));
        loader::RootModel model = model_for(*tree);
        loader::LoadSession session(*model.context);
        REQUIRE(session.load_main("/bin/sh", true));
        int caller = session.dlopen("/opt/t/a/liba.so.1");
        REQUIRE(caller >= 0);
        // From the program, whose RPATH is empty, the name is not found.
        CHECK(session.dlopen("libb.so.1") == -1);
        int index = session.dlopen_from(caller, "libb.so.1");
        REQUIRE(index >= 0);
        const auto& object = session.objects()[static_cast<size_t>(index)];
        CHECK(object.name == "/opt/t/a/../b/libb.so.1");
        CHECK(object.canonical == "/opt/t/b/libb.so.1");
        CHECK(object.via == loader::Via::rpath);
        CHECK(object.via_object == caller);
        CHECK(object.loader == -1);
        // loader.md section 1, observed: "B found, C not found".
        CHECK(list(session).back() == Listed{"libc3.so.1", "-", "not-found", ""});
    }

    TEST_CASE("dlopen from a library walks the RPATH of the objects that loaded it") {
        auto tree = make_fake_root();
        ElfSpec a = library_spec("liba.so.1", {"libmid.so.1"});
        a.rpath = "$ORIGIN:$ORIGIN/../b";
        add_elf(*tree, "/opt/t/a/liba.so.1", a);
        add_elf(*tree, "/opt/t/a/libmid.so.1", library_spec("libmid.so.1"));
        ElfSpec with_runpath = library_spec("librun.so.1");
        with_runpath.runpath = "/nowhere";
        add_elf(*tree, "/opt/t/a/librun.so.1", with_runpath);
        add_elf(*tree, "/opt/t/b/libb.so.1", library_spec("libb.so.1"));
        loader::RootModel model = model_for(*tree);
        loader::LoadSession session(*model.context);
        REQUIRE(session.load_main("/bin/sh", true));
        int a_index = session.dlopen("/opt/t/a/liba.so.1");
        REQUIRE(a_index >= 0);
        int mid = session.find_by_name("libmid.so.1");
        REQUIRE(mid >= 0);
        CHECK(session.objects()[static_cast<size_t>(mid)].loader == a_index);
        int index = session.dlopen_from(mid, "libb.so.1");
        REQUIRE(index >= 0);
        CHECK(session.objects()[static_cast<size_t>(index)].via == loader::Via::rpath);
        CHECK(session.objects()[static_cast<size_t>(index)].via_object == a_index);
        // A caller with DT_RUNPATH has the inherited chain switched off.
        int run = session.dlopen_from(a_index, "librun.so.1");
        REQUIRE(run >= 0);
        CHECK(session.dlopen_from(run, "libb2.so.1") == -1);
    }

    TEST_CASE("dlopen from a library with RUNPATH searches it after LD_LIBRARY_PATH") {
        auto tree = make_fake_root();
        ElfSpec a = library_spec("liba.so.1");
        a.runpath = "/opt/t/b";
        add_elf(*tree, "/opt/t/a/liba.so.1", a);
        add_elf(*tree, "/opt/t/b/libb.so.1", library_spec("libb.so.1"));
        add_elf(*tree, "/opt/llp/libb.so.1", library_spec("libb.so.1"));
        for (bool with_llp : {false, true}) {
            CAPTURE(with_llp);
            loader::ModelOptions options;
            if (with_llp)
                options.ld_library_path = {"/opt/llp"};
            loader::RootModel model = model_for(*tree, options);
            loader::LoadSession session(*model.context);
            REQUIRE(session.load_main("/bin/sh", true));
            int caller = session.dlopen("/opt/t/a/liba.so.1");
            int index = session.dlopen_from(caller, "libb.so.1");
            REQUIRE(index >= 0);
            const auto& object = session.objects()[static_cast<size_t>(index)];
            CHECK(object.canonical == (with_llp ? "/opt/llp/libb.so.1" : "/opt/t/b/libb.so.1"));
            CHECK(object.via == (with_llp ? loader::Via::ld_library_path : loader::Via::runpath));
        }
    }

    TEST_CASE("$ORIGIN in a name dlopened from a library is that library's directory") {
        auto tree = make_fake_root();
        add_elf(*tree, "/opt/t/a/liba.so.1", library_spec("liba.so.1"));
        add_elf(*tree, "/opt/t/b/libb.so.1", library_spec("libb.so.1"));
        loader::RootModel model = model_for(*tree);
        loader::LoadSession session(*model.context);
        REQUIRE(session.load_main("/bin/sh", true));
        int caller = session.dlopen("/opt/t/a/liba.so.1");
        CHECK(session.dlopen("$ORIGIN/../b/libb.so.1") == -1);  // the program's is /usr/bin
        int index = session.dlopen_from(caller, "$ORIGIN/../b/libb.so.1");
        REQUIRE(index >= 0);
        CHECK(session.objects()[static_cast<size_t>(index)].via == loader::Via::path);
        CHECK(session.objects()[static_cast<size_t>(index)].canonical == "/opt/t/b/libb.so.1");
    }

    TEST_CASE("dlopen from a caller answers with an object already loaded under the name") {
        auto tree = make_fake_root();
        loader::RootModel model = model_for(*tree);
        loader::LoadSession session(*model.context);
        REQUIRE(session.load_main("/bin/sh", true));
        int libc = session.find_by_name("libc.so.6");
        REQUIRE(libc >= 0);
        size_t before = session.objects().size();
        CHECK(session.dlopen_from(libc, "libc.so.6") == libc);
        CHECK(session.objects().size() == before);
    }

    TEST_CASE("dlopen from an object the namespace does not hold fails") {
        auto tree = make_fake_root();
        loader::RootModel model = model_for(*tree);
        loader::LoadSession session(*model.context);
        REQUIRE(session.load_main("/bin/sh", true));
        CHECK(session.dlopen("libnothing.so.1") == -1);
        const int faked = static_cast<int>(session.objects().size()) - 1;
        REQUIRE(session.objects().back().faked);
        const int size = static_cast<int>(session.objects().size());
        CHECK(session.dlopen_from(-2, "libc.so.6") == -1);
        CHECK(session.dlopen_from(size, "libc.so.6") == -1);
        CHECK(session.dlopen_from(faked, "libc.so.6") == -1);
    }

    TEST_CASE("a version the chosen provider does not define is a gap; a weak one is not") {
        auto tree = make_fake_root();
        ElfSpec needy = program_spec({"libc.so.6"});
        needy.version_needs = {
            {"libc.so.6",
             {{"GLIBC_2.34", 2, false}, {"GLIBC_2.99", 3, false}, {"GLIBC_2.98", 4, true}}}};
        add_elf(*tree, "/opt/needy", needy);
        loader::RootModel model = model_for(*tree);
        loader::LoadSession session(*model.context);
        REQUIRE(session.load_main("/opt/needy", false));
        auto gaps = loader::version_gaps(session);
        REQUIRE(gaps.size() == 1);
        CHECK(gaps[0].version == "GLIBC_2.99");
        CHECK(gaps[0].file == "libc.so.6");
    }

    TEST_CASE("the cache is read from the root and consulted after RUNPATH, before defaults") {
        auto tree = make_fake_root();
        add_elf(*tree, "/usr/local/lib/libloc.so.1", library_spec("libloc.so.1"));
        add_elf(*tree, "/opt/prog", program_spec({"libloc.so.1", "libc.so.6"}));
        CHECK(ldd(*tree, "/opt/prog")[0] == Listed{"libloc.so.1", "-", "not-found", ""});
        std::vector<loader::CacheEntry> entries{
            {"libloc.so.1", "/usr/local/lib/libloc.so.1", loader::k_cache_flags_x86_64, 0, ""},
            {"libc.so.6", "/lib/x86_64-linux-gnu/libc.so.6", loader::k_cache_flags_x86_64, 0, ""}};
        loader::sort_cache_entries(entries);
        tree->add_file("/etc/ld.so.cache", loader::write_ld_so_cache(entries, {}));
        auto listed = ldd(*tree, "/opt/prog");
        CHECK(listed[0] == Listed{"libloc.so.1", "/usr/local/lib/libloc.so.1", "cache", ""});
        CHECK(listed[1] == Listed{"libc.so.6", "/lib/x86_64-linux-gnu/libc.so.6", "cache", ""});
    }

    TEST_CASE("without a cache, check models what ldconfig would build from ld.so.conf") {
        auto tree = make_fake_root();
        add_elf(*tree, "/opt/conf/libconf.so.1", library_spec("libconf.so.1"));
        add_elf(*tree, "/opt/prog", program_spec({"libconf.so.1"}));
        tree->add_file("/etc/ld.so.conf", std::string("include /etc/ld.so.conf.d/*.conf\n"));
        tree->add_file("/etc/ld.so.conf.d/opt.conf", std::string("/opt/conf\n"));
        loader::ModelOptions options;
        options.simulate_missing_cache = true;
        auto model = loader::open_root_model(*tree, options);
        REQUIRE(model.ok());
        REQUIRE(model->notes.size() == 1);
        CHECK(model->notes[0] ==
              "no /etc/ld.so.cache in the root: modelled the cache ldconfig would build from "
              "/etc/ld.so.conf");
        loader::LoadSession session(*model->context);
        REQUIRE(session.load_main("/opt/prog", true));
        CHECK(list(session)[0] == Listed{"libconf.so.1", "/opt/conf/libconf.so.1", "cache", ""});
        // ld.so itself, without the file, never reads the conf.
        CHECK(ldd(*tree, "/opt/prog")[0].via == "not-found");
    }

    TEST_CASE("driver libraries count as provided by the host, and the list is configurable") {
        auto tree = make_fake_root();
        add_elf(*tree, "/opt/gpu", program_spec({"libcuda.so.1", "libmydriver.so.2"}));
        loader::ModelOptions options;
        options.extra_host_provided = {"libmydriver.so.2"};
        auto listed = ldd(*tree, "/opt/gpu", options);
        CHECK(listed[0] == Listed{"libcuda.so.1", "-", "host-provided", ""});
        CHECK(listed[1] == Listed{"libmydriver.so.2", "-", "host-provided", ""});
        loader::ModelOptions none;
        none.no_default_host_provided = true;
        CHECK(ldd(*tree, "/opt/gpu", none)[0].via == "not-found");
    }
}

}  // namespace rootlock::testing
