// read_elf over well-formed objects: writer-built ones of every class, byte order and layout,
// objects gcc links while the tests run, and this machine's own libc, libstdc++, libz and sh.
#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <sstream>

#include "elf/elf_reader.hpp"
#include "support/elf_writer.hpp"
#include "support/temp_dir.hpp"

namespace {

using namespace rootlock;
using elf::ElfInfo;
using elf::ReadOptions;
using testing::ElfSpec;

ElfInfo read_ok(const std::vector<std::byte>& bytes, bool symbols = true) {
    util::MemorySource source("lib.so", bytes);
    auto result = elf::read_elf(source, ReadOptions{symbols});
    if (!result)
        FAIL("read_elf failed: " << result.error().text());
    return std::move(result).value();
}

ElfInfo read_path(const std::string& path, bool symbols = true) {
    auto source = util::FileSource::open(path, path);
    REQUIRE(source.ok());
    auto result = elf::read_elf(**source, ReadOptions{symbols});
    if (!result)
        FAIL("read_elf failed: " << result.error().text());
    return std::move(result).value();
}

std::optional<elf::SymbolRef> find_symbol(const ElfInfo& info, std::string_view name,
                                          std::string_view version) {
    for (const auto& symbol : info.symbols) {
        if (symbol.name == name && symbol.version == version)
            return symbol;
    }
    return std::nullopt;
}

// A library with a bit of everything, used in several classes and byte orders.
ElfSpec full_spec() {
    ElfSpec spec;
    spec.interpreter = "/lib/ld-linux.so.2";
    spec.soname = "libfoo.so.1";
    spec.needed = {"libc.so.6", "libm.so.6"};
    spec.rpath = "$ORIGIN/../lib::/opt/x";
    spec.flags = elf::k_df_bind_now;
    spec.flags_1 = elf::k_df_1_now | elf::k_df_1_nodeflib;
    spec.version_defs = {{"FOO_1.0", 2, 0, {}}, {"FOO_1.1", 3, 0, {"FOO_1.0"}}};
    spec.version_needs = {{"libc.so.6", {{"GLIBC_2.2.5", 4, false}, {"GLIBC_2.34", 5, true}}},
                          {"libm.so.6", {{"GLIBC_2.29", 6, false}}}};
    spec.symbols = {
        {"foo", true, elf::k_stb_global, elf::k_stt_func, 3, false},
        {"foo", true, elf::k_stb_global, elf::k_stt_func, 2, true},
        {"puts", false, elf::k_stb_global, elf::k_stt_func, 4, false},
        {"__libc_start_main", false, elf::k_stb_weak, elf::k_stt_notype, 5, false},
        {"exp", false, elf::k_stb_global, elf::k_stt_func, 6, false},
        {"plain", true, elf::k_stb_weak, elf::k_stt_object, 1, false},
        {"tls_var", true, elf::k_stb_global, elf::k_stt_tls, 3, false},
    };
    return spec;
}

void check_full(const ElfInfo& info, const ElfSpec& spec) {
    CHECK(info.elf_class == spec.elf_class);
    CHECK(info.byte_order == spec.byte_order);
    CHECK(info.machine == spec.machine);
    CHECK(info.type == elf::k_type_dyn);
    CHECK(info.has_dynamic);
    CHECK(info.interpreter == "/lib/ld-linux.so.2");
    CHECK(info.soname == "libfoo.so.1");
    CHECK(info.needed == std::vector<std::string>{"libc.so.6", "libm.so.6"});
    REQUIRE(info.rpath.has_value());
    CHECK(*info.rpath == std::vector<std::string>{"$ORIGIN/../lib", "", "/opt/x"});
    CHECK_FALSE(info.runpath.has_value());
    CHECK(info.flags == elf::k_df_bind_now);
    CHECK(info.nodeflib());
    CHECK(info.bind_now());

    REQUIRE(info.version_needs.size() == 2);
    CHECK(info.version_needs[0].file == "libc.so.6");
    REQUIRE(info.version_needs[0].versions.size() == 2);
    CHECK(info.version_needs[0].versions[0].name == "GLIBC_2.2.5");
    CHECK(info.version_needs[0].versions[0].hash == testing::elf_hash("GLIBC_2.2.5"));
    CHECK(info.version_needs[0].versions[0].index == 4);
    CHECK_FALSE(info.version_needs[0].versions[0].weak);
    CHECK(info.version_needs[0].versions[1].name == "GLIBC_2.34");
    CHECK(info.version_needs[0].versions[1].weak);
    CHECK(info.version_needs[1].file == "libm.so.6");
    CHECK(info.version_needs[1].versions.at(0).index == 6);

    REQUIRE(info.version_defs.size() == 3);
    CHECK(info.version_defs[0].name == "libfoo.so.1");
    CHECK(info.version_defs[0].is_base());
    CHECK(info.version_defs[0].index == 1);
    CHECK(info.version_defs[1].name == "FOO_1.0");
    CHECK(info.version_defs[1].hash == testing::elf_hash("FOO_1.0"));
    CHECK(info.version_defs[1].parents.empty());
    CHECK(info.version_defs[2].name == "FOO_1.1");
    CHECK(info.version_defs[2].index == 3);
    CHECK(info.version_defs[2].parents == std::vector<std::string>{"FOO_1.0"});
    CHECK(info.defines_version("FOO_1.1"));
    CHECK_FALSE(info.defines_version("libfoo.so.1"));

    CHECK(info.symbols_read);
    REQUIRE(info.symbols.size() == 7);
    auto foo = find_symbol(info, "foo", "FOO_1.1");
    REQUIRE(foo.has_value());
    CHECK(foo->defined);
    CHECK_FALSE(foo->hidden);
    CHECK(foo->type == elf::k_stt_func);
    auto old_foo = find_symbol(info, "foo", "FOO_1.0");
    REQUIRE(old_foo.has_value());
    CHECK(old_foo->hidden);
    auto puts = find_symbol(info, "puts", "GLIBC_2.2.5");
    REQUIRE(puts.has_value());
    CHECK_FALSE(puts->defined);
    auto start = find_symbol(info, "__libc_start_main", "GLIBC_2.34");
    REQUIRE(start.has_value());
    CHECK(start->binding == elf::k_stb_weak);
    CHECK(start->type == elf::k_stt_notype);
    CHECK(find_symbol(info, "exp", "GLIBC_2.29").has_value());
    auto plain = find_symbol(info, "plain", "");
    REQUIRE(plain.has_value());
    CHECK(plain->type == elf::k_stt_object);
    CHECK(plain->binding == elf::k_stb_weak);
    CHECK(find_symbol(info, "tls_var", "FOO_1.1")->type == elf::k_stt_tls);
}

// Runs readelf and returns its stdout.
std::string run_readelf(const std::string& arguments) {
    std::string command = "readelf " + arguments + " 2>/dev/null";
    std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
    REQUIRE(pipe != nullptr);
    std::string text;
    char buffer[65536];
    size_t got = 0;
    while ((got = fread(buffer, 1, sizeof buffer, pipe.get())) > 0)
        text.append(buffer, got);
    return text;
}

// Compares every dynamic symbol with `readelf --dyn-syms -W`: name, version, hidden, defined,
// binding and type, in table order.
void compare_with_readelf(const std::string& path) {
    ElfInfo info = read_path(path);
    std::istringstream lines(run_readelf("--dyn-syms -W " + path));
    const std::map<std::string, uint8_t> types{{"NOTYPE", 0},  {"OBJECT", 1}, {"FUNC", 2},
                                               {"SECTION", 3}, {"FILE", 4},   {"COMMON", 5},
                                               {"TLS", 6},     {"IFUNC", 10}};
    const std::map<std::string, uint8_t> bindings{
        {"LOCAL", 0}, {"GLOBAL", 1}, {"WEAK", 2}, {"UNIQUE", 10}};
    std::string line;
    size_t compared = 0;
    while (std::getline(lines, line)) {
        std::istringstream fields(line);
        std::string num, value, size, type, bind, vis, ndx, name;
        if (!(fields >> num) || num.size() < 2 || num.back() != ':' ||
            num.find_first_not_of("0123456789") != num.size() - 1) {
            continue;
        }
        if (!(fields >> value >> size >> type >> bind >> vis >> ndx))
            continue;
        fields >> name;
        size_t index = std::stoul(num);
        if (index == 0)
            continue;
        REQUIRE(index - 1 < info.symbols.size());
        const elf::SymbolRef symbol = info.symbols[index - 1];
        std::string base = name;
        std::string version;
        bool hidden = false;
        if (size_t at = name.find('@'); at != std::string::npos) {
            base = name.substr(0, at);
            hidden = name.compare(at, 2, "@@") != 0;
            version = name.substr(at + (hidden ? 1 : 2));
        }
        INFO(path << " symbol " << index << " " << name);
        CHECK(symbol.name == base);
        // readelf drops "@@V" from the symbol that names version V itself.
        if (version.empty() && symbol.version == symbol.name)
            version = symbol.version;
        CHECK(symbol.version == version);
        CHECK(symbol.defined == (ndx != "UND"));
        // readelf prints one '@' for hidden definitions and for every needed version, so the
        // hidden bit is comparable only for versions the object defines itself.
        if (symbol.defined && info.defines_version(version))
            CHECK(symbol.hidden == hidden);
        CHECK(symbol.type == types.at(type));
        CHECK(symbol.binding == bindings.at(bind));
        ++compared;
    }
    CHECK(compared == info.symbols.size());
}

// Counts the reads a parse makes, to show it touches only the metadata.
class CountingSource final : public util::ByteSource {
  public:
    explicit CountingSource(const util::ByteSource& inner) : m_inner(inner) {}
    uint64_t size() const override { return m_inner.size(); }
    const std::string& name() const override { return m_inner.name(); }
    util::Status read_at(uint64_t offset, std::span<std::byte> out) const override {
        ++m_calls;
        m_bytes += out.size();
        return m_inner.read_at(offset, out);
    }
    size_t calls() const { return m_calls; }
    uint64_t bytes() const { return m_bytes; }

  private:
    const util::ByteSource& m_inner;
    mutable size_t m_calls = 0;
    mutable uint64_t m_bytes = 0;
};

constexpr const char* k_libc = "/lib/x86_64-linux-gnu/libc.so.6";
constexpr const char* k_libstdcxx = "/usr/lib/x86_64-linux-gnu/libstdc++.so.6";
constexpr const char* k_libz = "/usr/lib/x86_64-linux-gnu/libz.so.1";

constexpr const char* k_lib_source = R"(#include <stdio.h>
int foo(void) { puts("foo"); return 1; }
)";

}  // namespace

TEST_SUITE("rootlock::elf") {
    TEST_CASE("has_elf_magic recognises only the four magic bytes") {
        const std::vector<std::byte> elf{std::byte{0x7f}, std::byte{'E'}, std::byte{'L'},
                                         std::byte{'F'}};
        CHECK(elf::has_elf_magic(elf));
        CHECK_FALSE(elf::has_elf_magic(std::span(elf).first(3)));
        CHECK_FALSE(elf::has_elf_magic(std::vector<std::byte>(4, std::byte{'E'})));
    }

    TEST_CASE("reads every field of a little-endian ELF64 library") {
        ElfSpec spec = full_spec();
        check_full(read_ok(testing::build_elf(spec)), spec);
    }

    TEST_CASE("reads every field of a big-endian ELF32 library") {
        ElfSpec spec = full_spec();
        spec.elf_class = elf::ElfClass::elf32;
        spec.byte_order = elf::ByteOrder::big;
        spec.machine = 8;  // MIPS
        check_full(read_ok(testing::build_elf(spec)), spec);
    }

    TEST_CASE("reads an aarch64 twin of a library with the same soname") {
        ElfSpec spec = full_spec();
        spec.machine = elf::k_machine_aarch64;
        ElfInfo info = read_ok(testing::build_elf(spec));
        check_full(info, spec);
        CHECK(elf::machine_name(info.machine) == "aarch64");
    }

    TEST_CASE("counts symbols through DT_GNU_HASH when there is no DT_HASH") {
        for (auto elf_class : {elf::ElfClass::elf64, elf::ElfClass::elf32}) {
            ElfSpec spec = full_spec();
            spec.elf_class = elf_class;
            spec.sysv_hash = false;
            spec.gnu_hash = true;
            check_full(read_ok(testing::build_elf(spec)), spec);
        }
    }

    TEST_CASE("counts only the unhashed symbols when every GNU hash bucket is empty") {
        ElfSpec spec;
        spec.soname = "libundef.so";
        spec.sysv_hash = false;
        spec.gnu_hash = true;
        spec.symbols = {{"a", false}, {"b", false}};
        ElfInfo info = read_ok(testing::build_elf(spec));
        REQUIRE(info.symbols.size() == 2);
        CHECK(info.symbols[0].name == "a");
        CHECK(info.symbols[1].name == "b");
    }

    TEST_CASE("maps dynamic addresses through PT_LOAD when the base address is not zero") {
        ElfSpec spec = full_spec();
        spec.type = elf::k_type_exec;
        spec.base_address = 0x400000;
        ElfInfo info = read_ok(testing::build_elf(spec));
        CHECK(info.type == elf::k_type_exec);
        CHECK(info.needed == std::vector<std::string>{"libc.so.6", "libm.so.6"});
        CHECK(info.symbols.size() == 7);
    }

    TEST_CASE("accepts two version definitions sharing one name record, as libjansson has") {
        // Real linkers emit this (libjansson.so.4 and NVIDIA's CUDA libraries): the base
        // definition and the version both point at one Verdaux "libjansson.so.4". Only a loop
        // inside one definition's chain is malformed.
        ElfSpec spec = full_spec();
        REQUIRE(spec.version_defs.size() >= 1);
        testing::ElfImage image = testing::build_elf_image(spec);
        const auto& l = image.layout();
        REQUIRE(l.verdef_entries.size() >= 2);
        REQUIRE(l.verdaux_entries.size() >= 2);
        image.patch_u32(l.verdef_entries[0] + 12, l.verdaux_entries[1] - l.verdef_entries[0]);
        ElfInfo info = read_ok(image.bytes());
        REQUIRE(info.version_defs.size() == l.verdef_entries.size());
        CHECK(info.version_defs[0].is_base());
        CHECK(info.version_defs[0].name == info.version_defs[1].name);
    }

    TEST_CASE("reads tables the way patchelf leaves them, after the dynamic segment") {
        ElfSpec spec = full_spec();
        spec.trailing_metadata = true;
        spec.gnu_hash = true;
        check_full(read_ok(testing::build_elf(spec)), spec);
    }

    TEST_CASE("keeps empty elements when splitting DT_RUNPATH, and leaves DT_RPATH unset") {
        ElfSpec spec;
        spec.soname = "libr.so";
        spec.runpath = ":a::b:";
        ElfInfo info = read_ok(testing::build_elf(spec));
        CHECK_FALSE(info.rpath.has_value());
        REQUIRE(info.runpath.has_value());
        CHECK(*info.runpath == std::vector<std::string>{"", "a", "", "b", ""});
    }

    TEST_CASE("sets an empty DT_RUNPATH to one empty element") {
        ElfSpec spec;
        spec.runpath = "";
        ElfInfo info = read_ok(testing::build_elf(spec));
        REQUIRE(info.runpath.has_value());
        CHECK(*info.runpath == std::vector<std::string>{""});
    }

    TEST_CASE("reads a static executable as having no dynamic section") {
        ElfSpec spec;
        spec.type = elf::k_type_exec;
        spec.dynamic = false;
        ElfInfo info = read_ok(testing::build_elf(spec));
        CHECK_FALSE(info.has_dynamic);
        CHECK(info.interpreter.empty());
        CHECK(info.needed.empty());
        CHECK(info.symbols.empty());
    }

    TEST_CASE("reads a relocatable object without program headers") {
        ElfSpec spec;
        spec.type = elf::k_type_rel;
        spec.program_headers = false;
        ElfInfo info = read_ok(testing::build_elf(spec));
        CHECK(info.type == elf::k_type_rel);
        CHECK_FALSE(info.has_dynamic);
    }

    TEST_CASE("leaves the symbol table unread unless asked") {
        ElfInfo info = read_ok(testing::build_elf(full_spec()), false);
        CHECK_FALSE(info.symbols_read);
        CHECK(info.symbols.empty());
        CHECK(info.version_defs.size() == 3);
    }

    TEST_CASE("reads /bin/sh: interpreter, needs and PIE flags") {
        ElfInfo info = read_path("/bin/sh");
        CHECK(info.interpreter == "/lib64/ld-linux-x86-64.so.2");
        CHECK(info.machine == elf::k_machine_x86_64);
        CHECK(info.elf_class == elf::ElfClass::elf64);
        CHECK(info.needed == std::vector<std::string>{"libc.so.6"});
        REQUIRE_FALSE(info.version_needs.empty());
        CHECK(info.version_needs[0].file == "libc.so.6");
        compare_with_readelf("/bin/sh");
    }

    TEST_CASE("reads libc.so.6: soname, every GLIBC version it defines, and versioned memcpy") {
        ElfInfo info = read_path(k_libc);
        CHECK(info.soname == "libc.so.6");
        CHECK(info.needed == std::vector<std::string>{"ld-linux-x86-64.so.2"});
        CHECK(info.interpreter == "/lib64/ld-linux-x86-64.so.2");
        REQUIRE_FALSE(info.version_defs.empty());
        CHECK(info.version_defs[0].is_base());
        CHECK(info.version_defs[0].name == "libc.so.6");
        CHECK(info.version_defs[1].name == "GLIBC_2.2.5");
        for (const char* version :
             {"GLIBC_2.2.5", "GLIBC_2.14", "GLIBC_2.34", "GLIBC_2.36", "GLIBC_PRIVATE"}) {
            CHECK_MESSAGE(info.defines_version(version), version);
        }
        auto memcpy_new = find_symbol(info, "memcpy", "GLIBC_2.14");
        REQUIRE(memcpy_new.has_value());
        CHECK(memcpy_new->defined);
        CHECK_FALSE(memcpy_new->hidden);
        auto memcpy_old = find_symbol(info, "memcpy", "GLIBC_2.2.5");
        REQUIRE(memcpy_old.has_value());
        CHECK(memcpy_old->hidden);
        compare_with_readelf(k_libc);
    }

    TEST_CASE("reads only libc's metadata, each table in one read") {
        auto file = util::FileSource::open(k_libc, k_libc);
        REQUIRE(file.ok());
        CountingSource headers_only(**file);
        REQUIRE(elf::read_elf(headers_only).ok());
        CountingSource with_symbols(**file);
        REQUIRE(elf::read_elf(with_symbols, ReadOptions{true}).ok());
        // ehdr, phdrs, interp, dynamic, dynstr, verneed, verdef (+ hash, symtab, versym, and the
        // symbol-naming parts of the relocation tables).
        CHECK(headers_only.calls() <= 8);
        CHECK(headers_only.bytes() < 128 * 1024);
        CHECK(with_symbols.calls() <= 14);
        CHECK(with_symbols.bytes() < (*file)->size() / 8);
    }

    TEST_CASE("reads libstdc++.so.6 and libz.so.1 like readelf does") {
        ElfInfo cxx = read_path(k_libstdcxx);
        CHECK(cxx.soname == "libstdc++.so.6");
        CHECK(cxx.defines_version("GLIBCXX_3.4.30"));
        CHECK(cxx.defines_version("CXXABI_1.3"));
        compare_with_readelf(k_libstdcxx);
        ElfInfo z = read_path(k_libz);
        CHECK(z.soname == "libz.so.1");
        CHECK(z.defines_version("ZLIB_1.2.9"));
        compare_with_readelf(k_libz);
    }

    TEST_CASE("reads DT_RPATH from a library gcc links with --disable-new-dtags") {
        testing::TempDir dir;
        auto bytes = testing::compile_c(dir.path(), "libfoo.so", k_lib_source,
                                        "-shared -fPIC -Wl,-soname,libfoo.so.1 "
                                        "-Wl,--disable-new-dtags -Wl,-rpath,'$ORIGIN/../lib'");
        ElfInfo info = read_ok(bytes);
        CHECK(info.soname == "libfoo.so.1");
        CHECK(info.type == elf::k_type_dyn);
        CHECK(info.interpreter.empty());
        CHECK(info.needed == std::vector<std::string>{"libc.so.6"});
        REQUIRE(info.rpath.has_value());
        CHECK(*info.rpath == std::vector<std::string>{"$ORIGIN/../lib"});
        CHECK_FALSE(info.runpath.has_value());
        CHECK_FALSE(info.nodeflib());
        CHECK_FALSE(info.bind_now());
        REQUIRE(info.version_needs.size() == 1);
        CHECK(info.version_needs[0].file == "libc.so.6");
        CHECK(info.version_needs[0].versions.at(0).name == "GLIBC_2.2.5");
        auto puts = find_symbol(info, "puts", "GLIBC_2.2.5");
        REQUIRE(puts.has_value());
        CHECK_FALSE(puts->defined);
        auto foo = find_symbol(info, "foo", "");
        REQUIRE(foo.has_value());
        CHECK(foo->defined);
    }

    TEST_CASE("reads DT_RUNPATH, nodefaultlib and bind-now from a library gcc links") {
        testing::TempDir dir;
        auto bytes =
            testing::compile_c(dir.path(), "libbar.so", k_lib_source,
                               "-shared -fPIC -Wl,-soname,libbar.so.2 -Wl,--enable-new-dtags "
                               "-Wl,-rpath,'$ORIGIN:/opt/lib' -Wl,-z,nodefaultlib -Wl,-z,now");
        ElfInfo info = read_ok(bytes);
        CHECK(info.soname == "libbar.so.2");
        CHECK_FALSE(info.rpath.has_value());
        REQUIRE(info.runpath.has_value());
        CHECK(*info.runpath == std::vector<std::string>{"$ORIGIN", "/opt/lib"});
        CHECK(info.nodeflib());
        CHECK(info.bind_now());
        CHECK((info.flags & elf::k_df_bind_now) != 0);
    }

    TEST_CASE("tells functions only called through the PLT from references bound at load") {
        testing::TempDir dir;
        // called() goes through the PLT; taken()'s address and the variable `shared` are
        // relocated when the library loads.
        const char* source =
            "extern int called(void); extern int taken(void); extern int shared;\n"
            "int (*keep)(void) = taken;\n"
            "int use(void) { return called() + shared; }\n";
        auto bytes = testing::compile_c(dir.path(), "libuse.so", source,
                                        "-shared -fPIC -Wl,-soname,libuse.so -Wl,-z,lazy");
        ElfInfo info = read_ok(bytes);
        CHECK(info.relocations_read);
        auto called = find_symbol(info, "called", "");
        auto taken = find_symbol(info, "taken", "");
        auto shared = find_symbol(info, "shared", "");
        REQUIRE(called.has_value());
        REQUIRE(taken.has_value());
        REQUIRE(shared.has_value());
        CHECK(called->lazy);
        CHECK_FALSE(taken->lazy);
        CHECK_FALSE(shared->lazy);
        // Without asking for symbols, nothing is read.
        CHECK_FALSE(read_ok(bytes, false).relocations_read);
    }

    TEST_CASE("reads version definitions and symbol versions from a version script") {
        testing::TempDir dir;
        dir.write_file("v.map",
                       "FOO_0.9 { global: foo; local: *; };\n"
                       "FOO_1.0 { global: foo; } FOO_0.9;\n");
        constexpr const char* k_source = R"(#include <stdio.h>
int old_foo(void) { return 1; }
int new_foo(void) { puts("new"); return 2; }
__asm__(".symver old_foo,foo@FOO_0.9");
__asm__(".symver new_foo,foo@@FOO_1.0");
)";
        auto bytes = testing::compile_c(
            dir.path(), "libver.so", k_source,
            "-shared -fPIC -Wl,-soname,libver.so.1 -Wl,--version-script=" + (dir / "v.map"));
        ElfInfo info = read_ok(bytes);
        REQUIRE(info.version_defs.size() == 3);
        CHECK(info.version_defs[0].name == "libver.so.1");
        CHECK(info.version_defs[0].is_base());
        CHECK(info.version_defs[1].name == "FOO_0.9");
        CHECK(info.version_defs[1].index == 2);
        CHECK(info.version_defs[2].name == "FOO_1.0");
        CHECK(info.version_defs[2].index == 3);
        CHECK(info.version_defs[2].parents == std::vector<std::string>{"FOO_0.9"});
        CHECK(info.version_defs[2].hash == testing::elf_hash("FOO_1.0"));
        auto current = find_symbol(info, "foo", "FOO_1.0");
        REQUIRE(current.has_value());
        CHECK(current->defined);
        CHECK_FALSE(current->hidden);
        auto old = find_symbol(info, "foo", "FOO_0.9");
        REQUIRE(old.has_value());
        CHECK(old->hidden);
        CHECK_FALSE(find_symbol(info, "old_foo", "").has_value());
    }

    TEST_CASE("reads a PIE executable, a static one and a relocatable object from gcc") {
        testing::TempDir dir;
        constexpr const char* k_main = "#include <stdio.h>\nint main(void) { puts(\"hi\"); }\n";
        ElfInfo pie = read_ok(testing::compile_c(dir.path(), "pie", k_main, "-pie -fPIE"));
        CHECK(pie.type == elf::k_type_dyn);
        CHECK(pie.interpreter == "/lib64/ld-linux-x86-64.so.2");
        CHECK((pie.flags_1 & elf::k_df_1_pie) != 0);
        CHECK(pie.soname.empty());

        ElfInfo object = read_ok(testing::compile_c(dir.path(), "main.o", k_main, "-c"));
        CHECK(object.type == elf::k_type_rel);
        CHECK_FALSE(object.has_dynamic);

        // libc.a is part of libc6-dev, which the build needs anyway.
        ElfInfo fixed = read_ok(testing::compile_c(dir.path(), "static", k_main, "-static"));
        CHECK(fixed.type == elf::k_type_exec);
        CHECK_FALSE(fixed.has_dynamic);
        CHECK(fixed.interpreter.empty());
    }

    TEST_CASE("reads a library linked without separate code segments") {
        testing::TempDir dir;
        auto bytes = testing::compile_c(dir.path(), "libflat.so", k_lib_source,
                                        "-shared -fPIC -Wl,-z,noseparate-code "
                                        "-Wl,-soname,libflat.so");
        ElfInfo info = read_ok(bytes);
        CHECK(info.soname == "libflat.so");
        CHECK(find_symbol(info, "foo", "").has_value());
    }
}
