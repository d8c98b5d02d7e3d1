// Unit tests for the one-pass wheel scan: zip wheels written by the test zip writer (with ELF
// objects from the test ELF writer), every refusal with its exact text, and the JSON cache.
#include <doctest/doctest.h>

#include <cstring>
#include <string>
#include <vector>

#include "python/wheel_scan.hpp"
#include "support/elf_writer.hpp"
#include "support/fatbin_bytes.hpp"
#include "support/section_elf.hpp"
#include "support/temp_dir.hpp"
#include "support/zip_writer.hpp"
#include "util/sha256.hpp"

using rootlock::python::find_entry;
using rootlock::python::scan_from_json;
using rootlock::python::scan_to_json;
using rootlock::python::scan_wheel;
using rootlock::python::ScanOptions;
using rootlock::python::WheelScan;
using rootlock::testing::k_zip_executable_mode;
using rootlock::testing::k_zip_symlink_mode;
using rootlock::testing::TempDir;
using rootlock::testing::ZipMember;

namespace {

const std::string k_wheel = "demo-1.0-py3-none-any.whl";
const std::string k_dist = "demo-1.0.dist-info";

ZipMember member(std::string name, std::string content,
                 uint32_t mode = rootlock::testing::k_zip_file_mode) {
    ZipMember out;
    out.name = std::move(name);
    out.content = std::move(content);
    out.unix_mode = mode;
    return out;
}

std::string as_text(const std::vector<std::byte>& bytes) {
    std::string out(bytes.size(), '\0');
    if (!bytes.empty())
        std::memcpy(out.data(), bytes.data(), bytes.size());
    return out;
}

std::string record_digest(const std::string& bytes) {
    rootlock::util::Sha256 hasher;
    hasher.update(bytes);
    return rootlock::util::Sha256::to_base64url(hasher.digest());
}

std::string library_bytes() {
    rootlock::testing::ElfSpec spec;
    spec.soname = "libdemo.so.1";
    spec.needed = {"libc.so.6"};
    rootlock::testing::SymbolSpec init;
    init.name = "demo_init";
    rootlock::testing::SymbolSpec malloc_symbol;
    malloc_symbol.name = "malloc";
    malloc_symbol.defined = false;
    spec.symbols = {init, malloc_symbol};
    return as_text(rootlock::testing::build_elf(spec));
}

std::string extension_bytes() {
    rootlock::testing::ElfSpec spec;
    spec.needed = {"libdemo.so.1", "libm.so.6"};
    return as_text(rootlock::testing::build_elf(spec));
}

// Every file of a well-formed wheel except RECORD.
std::vector<ZipMember> demo_members() {
    return {
        member("demo/", "", rootlock::testing::k_zip_dir_mode),
        member("demo/__init__.py", "x = 1\n"),
        member("demo/lib/libdemo.so.1", library_bytes()),
        member("demo/_ext.cpython-311-x86_64-linux-gnu.so", extension_bytes()),
        // ELF magic, then nothing an ELF reader can use.
        member("demo/broken.so", std::string("\x7f") + "ELF" + std::string(80, '\x01')),
        member("demo-1.0.data/scripts/tool", "#!python\nprint('tool')\n", k_zip_executable_mode),
        member(k_dist + "/METADATA", "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n"),
        member(k_dist + "/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: false\n"),
        member(k_dist + "/entry_points.txt", "[console_scripts]\ndemo = demo:main\n"),
    };
}

// RECORD for `members` (directories skipped), its own row last.
std::string record_for(const std::vector<ZipMember>& members, const std::string& dist = k_dist) {
    std::string record;
    for (const auto& member : members) {
        if (member.name.back() == '/' || member.unix_mode == k_zip_symlink_mode)
            continue;
        record += member.name + ",sha256=" + record_digest(member.content) + "," +
                  std::to_string(member.content.size()) + "\n";
    }
    return record + dist + "/RECORD,,\n";
}

std::vector<ZipMember> with_record(std::vector<ZipMember> members) {
    std::string record = record_for(members);
    members.push_back(member(k_dist + "/RECORD", record));
    return members;
}

std::string write_wheel(const TempDir& dir, const std::vector<ZipMember>& members,
                        const std::string& name = k_wheel) {
    std::string path = dir / name;
    rootlock::testing::write_zip(path, members);
    return path;
}

std::vector<ZipMember> replace(std::vector<ZipMember> members, const std::string& name,
                               const std::string& content) {
    for (auto& member : members) {
        if (member.name == name)
            member.content = content;
    }
    return members;
}

std::vector<ZipMember> without(std::vector<ZipMember> members, const std::string& name) {
    std::erase_if(members, [&](const ZipMember& member) { return member.name == name; });
    return members;
}

}  // namespace

TEST_SUITE("rootlock::python") {
    TEST_CASE("a wheel scan lists every file with its hash, mode and ELF metadata") {
        TempDir dir;
        auto members = with_record(demo_members());
        std::string path = write_wheel(dir, members);
        auto scan = scan_wheel(path);
        if (!scan.ok())
            FAIL(scan.error().text());

        CHECK(scan->wheel_sha256 ==
              rootlock::util::sha256_hex(rootlock::testing::build_zip(members)));
        CHECK(scan->wheel_size == rootlock::testing::build_zip(members).size());
        CHECK(scan->filename.normalized_name == "demo");
        CHECK(scan->dist_info == k_dist);
        CHECK(scan->data_dir == "demo-1.0.data");
        CHECK(scan->metadata == members[6].content);
        CHECK(scan->wheel == members[7].content);
        CHECK(scan->entry_points == members[8].content);
        CHECK(scan->record == members.back().content);

        std::vector<std::string> paths;
        for (const auto& entry : scan->entries)
            paths.push_back(entry.path);
        CHECK(paths == std::vector<std::string>{"demo-1.0.data/scripts/tool", k_dist + "/METADATA",
                                                k_dist + "/RECORD", k_dist + "/WHEEL",
                                                k_dist + "/entry_points.txt", "demo/__init__.py",
                                                "demo/_ext.cpython-311-x86_64-linux-gnu.so",
                                                "demo/broken.so", "demo/lib/libdemo.so.1"});

        const auto* init = find_entry(*scan, "demo/__init__.py");
        REQUIRE(init != nullptr);
        CHECK(init->size == 6);
        CHECK(init->mode == 0644);
        CHECK_FALSE(init->executable);
        CHECK(init->sha256_base64 == record_digest("x = 1\n"));
        CHECK_FALSE(init->elf.has_value());
        CHECK_FALSE(init->content.has_value());

        const auto* tool = find_entry(*scan, "demo-1.0.data/scripts/tool");
        REQUIRE(tool != nullptr);
        CHECK(tool->executable);
        CHECK(tool->mode == 0755);
        CHECK(tool->content == "#!python\nprint('tool')\n");

        const auto* lib = find_entry(*scan, "demo/lib/libdemo.so.1");
        REQUIRE(lib != nullptr);
        REQUIRE(lib->elf.has_value());
        CHECK(lib->elf->soname == "libdemo.so.1");
        CHECK(lib->elf->needed == std::vector<std::string>{"libc.so.6"});
        CHECK(lib->elf->symbols_read);
        REQUIRE(lib->elf->symbols.size() == 2);
        CHECK(lib->elf->symbols[1].name == "demo_init");  // the writer puts undefined ones first
        CHECK(lib->sha256_base64 == record_digest(library_bytes()));

        const auto* broken = find_entry(*scan, "demo/broken.so");
        REQUIRE(broken != nullptr);
        CHECK_FALSE(broken->elf.has_value());
        CHECK_FALSE(broken->elf_error.empty());

        CHECK(scan->provides ==
              std::vector<std::string>{"_ext.cpython-311-x86_64-linux-gnu.so", "libdemo.so.1"});
        CHECK(scan->needs == std::vector<std::string>{"libc.so.6", "libm.so.6"});
        CHECK(find_entry(*scan, "demo/") == nullptr);
        CHECK(find_entry(*scan, "demo/missing.py") == nullptr);
    }

    TEST_CASE("a deflated wheel, as build backends write them, scans the same") {
        TempDir dir;
        auto members = with_record(demo_members());
        std::string path = dir / k_wheel;
        rootlock::testing::write_deflated_zip(path, members);
        auto scan = scan_wheel(path);
        if (!scan.ok())
            FAIL(scan.error().text());
        TempDir stored_dir;
        auto stored = scan_wheel(write_wheel(stored_dir, members));
        REQUIRE(stored.ok());
        // Everything but the archive's own bytes is the same.
        stored->wheel_sha256 = scan->wheel_sha256;
        stored->wheel_size = scan->wheel_size;
        CHECK(scan_to_json(*scan) == scan_to_json(*stored));
        CHECK(find_entry(*scan, "demo/lib/libdemo.so.1")->elf->soname == "libdemo.so.1");
        CHECK(find_entry(*scan, "demo-1.0.data/scripts/tool")->executable);
    }

    TEST_CASE("an object's device code is read as it streams, stored and cached") {
        // A library with an sm_75 cubin and compute_86 PTX in .nv_fatbin, and one whose fatbin
        // entry names no SM (its device code cannot be read: a note, not a refusal).
        using rootlock::testing::fatbin_bytes;
        auto object_with = [](std::vector<std::byte> fatbin) {
            rootlock::testing::SectionElfSpec spec;
            spec.sections.push_back({".text", 1, std::vector<std::byte>(24), 16, {}});
            spec.sections.push_back({".nv_fatbin", 1, std::move(fatbin), 8, {}});
            return as_text(rootlock::testing::build_section_elf(spec).bytes);
        };
        auto members = demo_members();
        members.push_back(
            member("demo/lib/libkernels.so",
                   object_with(fatbin_bytes({{{{2, 75}, {1, 86, 0x11, 64, 32, 0, 9}}}}))));
        members.push_back(member("demo/lib/libodd.so", object_with(fatbin_bytes({{{{2, 7}}}}))));
        TempDir dir;
        std::string path = dir / k_wheel;
        rootlock::testing::write_deflated_zip(path, with_record(members));
        auto scan = scan_wheel(path);
        REQUIRE(scan.ok());
        const auto* kernels = find_entry(*scan, "demo/lib/libkernels.so");
        REQUIRE(kernels != nullptr);
        CHECK(kernels->architectures == std::vector<std::string>{"sm_75", "compute_86"});
        CHECK(kernels->device_code_error.empty());
        // Read as it streamed, the odd one is a container that does not hold together.
        CHECK(find_entry(*scan, "demo/lib/libodd.so")->architectures.empty());
        CHECK(find_entry(*scan, "demo/lib/libdemo.so.1")->architectures.empty());
        CHECK(rootlock::python::wheel_architectures(*scan) ==
              std::vector<std::string>{"sm_75", "compute_86"});
        auto back = scan_from_json(scan_to_json(*scan));
        REQUIRE(back.ok());
        CHECK(find_entry(*back, "demo/lib/libkernels.so")->architectures == kernels->architectures);
    }

    TEST_CASE("a compiled program in .data/scripts is parsed as ELF, not held as a script") {
        TempDir dir;
        auto members = demo_members();
        members.push_back(
            member("demo-1.0.data/scripts/fast", extension_bytes(), k_zip_executable_mode));
        auto scan = scan_wheel(write_wheel(dir, with_record(members)));
        if (!scan.ok())
            FAIL(scan.error().text());
        const auto* fast = find_entry(*scan, "demo-1.0.data/scripts/fast");
        REQUIRE(fast != nullptr);
        CHECK(fast->elf.has_value());
        CHECK_FALSE(fast->content.has_value());
        CHECK(find_entry(*scan, "demo-1.0.data/scripts/tool")->content.has_value());
    }

    TEST_CASE("entries stored without Unix type bits are regular files") {
        TempDir dir;
        auto members = demo_members();
        members.push_back(member("demo/no_type.py", "a", 0));
        members.push_back(member("demo/exec_no_type", "b", 0755));
        auto scan = scan_wheel(write_wheel(dir, with_record(members)));
        if (!scan.ok())
            FAIL(scan.error().text());
        CHECK_FALSE(find_entry(*scan, "demo/no_type.py")->executable);
        CHECK(find_entry(*scan, "demo/exec_no_type")->executable);
    }

    TEST_CASE("a wheel without a data directory or entry points scans with those empty") {
        TempDir dir;
        auto members = without(without(demo_members(), "demo-1.0.data/scripts/tool"),
                               k_dist + "/entry_points.txt");
        auto scan = scan_wheel(write_wheel(dir, with_record(members)));
        if (!scan.ok())
            FAIL(scan.error().text());
        CHECK(scan->data_dir.empty());
        CHECK(scan->entry_points.empty());
    }

    TEST_CASE("dist-info names match the file name after normalisation") {
        TempDir dir;
        auto members = demo_members();
        for (auto& member : members) {
            if (member.name.rfind(k_dist, 0) == 0)
                member.name = "Demo-1.0.dist-info" + member.name.substr(k_dist.size());
        }
        std::string record = record_for(members, "Demo-1.0.dist-info");
        members.push_back(member("Demo-1.0.dist-info/RECORD", record));
        members = without(members, "demo-1.0.data/scripts/tool");
        // RECORD listed the script; rebuild it without.
        members.back().content = record_for(
            std::vector<ZipMember>(members.begin(), members.end() - 1), "Demo-1.0.dist-info");
        auto scan = scan_wheel(write_wheel(dir, members, "demo-1.0.0-py3-none-any.whl"));
        if (!scan.ok())
            FAIL(scan.error().text());
        CHECK(scan->dist_info == "Demo-1.0.dist-info");
    }

    TEST_CASE("wheels pip would refuse, or that differ from their RECORD, give one exact line") {
        struct Row {
            std::string label;
            std::vector<ZipMember> members;
            std::string expected;
            ScanOptions options = {};
        };
        const std::string w = k_wheel + ": ";
        auto base = demo_members();
        auto add = [](std::vector<ZipMember> members, ZipMember extra) {
            members.push_back(std::move(extra));
            return members;
        };
        std::vector<ZipMember> wrong_hash = with_record(base);
        wrong_hash = replace(wrong_hash, "demo/lib/libdemo.so.1", library_bytes() + "x");
        wrong_hash[2].content.pop_back();  // same size, one byte different
        wrong_hash[2].content.back() = '\x55';
        std::vector<ZipMember> wrong_size = with_record(base);
        std::string record = wrong_size.back().content;
        record.replace(record.find(",6\n"), 3, ",7\n");
        wrong_size.back().content = record;
        std::vector<ZipMember> unlisted = with_record(base);
        unlisted.push_back(member("demo/extra.py", ""));
        std::vector<ZipMember> phantom = base;
        phantom.push_back(member(k_dist + "/RECORD", record_for(base) + "demo/gone.py,,\n"));
        std::vector<ZipMember> unhashed = base;
        unhashed.push_back(member(k_dist + "/RECORD", "demo/__init__.py,,\n"));
        std::vector<ZipMember> other_dist = with_record(base);
        other_dist.push_back(member("other-1.0.dist-info/METADATA", ""));
        std::vector<ZipMember> renamed;
        for (auto member : with_record(base)) {
            if (member.name.rfind(k_dist, 0) == 0)
                member.name = "other-1.0.dist-info" + member.name.substr(k_dist.size());
            renamed.push_back(member);
        }
        std::vector<ZipMember> bomb = with_record(base);
        bomb[1].declared_size = 3;

        auto record_with = [&](const std::string& first_row) {
            auto members = base;
            members.push_back(member(k_dist + "/RECORD", first_row + record_for(base)));
            return members;
        };
        const std::string hex = rootlock::util::sha256_hex("x = 1\n");
        const std::string big_script = "#!python\n" + std::string(1U << 20, '#');

        const std::vector<Row> rows = {
            {"absolute", add(with_record(base), member("/etc/passwd", "x")),
             w + "entry path is absolute: /etc/passwd"},
            {"climbing", add(with_record(base), member("demo/../../x", "x")),
             w + "entry path climbs out with '..': demo/../../x"},
            // libarchive reads '\\' in a zip name as '/', so the entry is demo/x.py and the
            // RECORD naming demo\\x.py no longer matches it.
            {"backslash", with_record(add(base, member("demo\\x.py", "x"))),
             w + "RECORD lists demo\\x.py, which the wheel does not hold"},
            {"not UTF-8", add(with_record(base), member("demo/\xff.py", "x")),
             w + "entry path is not valid UTF-8: demo/\xff.py"},
            {"METADATA not UTF-8",
             with_record(replace(base, k_dist + "/METADATA", "Name: d\xc3\x28mo\n")),
             w + k_dist + "/METADATA is not valid UTF-8"},
            {"empty part", add(with_record(base), member("demo//x.py", "x")),
             w + "entry path has an empty or '.' component: demo//x.py"},
            {"dot part", add(with_record(base), member("./demo/x.py", "x")),
             w + "entry path has an empty or '.' component: ./demo/x.py"},
            {"duplicate", add(with_record(base), member("demo/__init__.py", "y")),
             w + "duplicate entry: demo/__init__.py"},
            {"symlink",
             add(with_record(base), member("demo/link", "/etc/passwd", k_zip_symlink_mode)),
             w + "symlink entry: demo/link"},
            {"no dist-info", {member("demo/__init__.py", "")}, w + "no .dist-info directory"},
            {"two dist-infos", other_dist,
             w + "more than one .dist-info directory: demo-1.0.dist-info, other-1.0.dist-info"},
            {"dist-info of another project", renamed,
             w + "other-1.0.dist-info does not match the file name's project demo version 1.0"},
            {"no METADATA", with_record(without(base, k_dist + "/METADATA")),
             w + k_dist + "/METADATA is missing"},
            {"no WHEEL", with_record(without(base, k_dist + "/WHEEL")),
             w + k_dist + "/WHEEL is missing"},
            {"no RECORD", base, w + k_dist + "/RECORD is missing"},
            {"no Wheel-Version", with_record(replace(base, k_dist + "/WHEEL", "Generator: x\n")),
             w + k_dist + "/WHEEL has no Wheel-Version"},
            {"Wheel-Version 2",
             with_record(replace(base, k_dist + "/WHEEL", "wheel-version: 2.0\n")),
             w + "unsupported Wheel-Version 2.0 (only 1.x is installable)"},
            {"another data directory", with_record(add(base, member("other.data/scripts/x", ""))),
             w + "unexpected data directory other.data (expected demo-1.0.data)"},
            // libarchive checks a stored entry itself; the scanner's own count backs it up.
            {"more bytes than declared", bomb,
             "{host}: ZIP uncompressed data is wrong size (read 6, expected 3)"},
            {"declared sizes over the bound", with_record(base),
             w + "entries declare more than 100 bytes uncompressed",
             ScanOptions{.max_total_size = 100, .filename = ""}},
            {"hash mismatch", wrong_hash, w + "RECORD hash mismatch for demo/lib/libdemo.so.1"},
            {"size mismatch", wrong_size,
             w + "RECORD size mismatch for demo/__init__.py: RECORD says 7, the file has 6"},
            {"file not in RECORD", unlisted, w + "demo/extra.py is not listed in RECORD"},
            {"RECORD names a missing file", phantom,
             w + "RECORD lists demo/gone.py, which the wheel does not hold"},
            {"RECORD row without hash", unhashed, w + "RECORD has no hash for demo/__init__.py"},
            {"RECORD row twice",
             record_with("demo/__init__.py,sha256=" + record_digest("x = 1\n") + ",6\n"),
             w + "RECORD lists demo/__init__.py twice"},
            {"hex digest", record_with("demo/__init__.py,sha256=" + hex + ",6\n"),
             w + "RECORD hash for demo/__init__.py is hex, not the wheel spec's base64"},
            {"sha512 digest",
             record_with("demo/__init__.py,sha512=" + std::string(86, 'A') + ",6\n"),
             w + "RECORD hashes demo/__init__.py with sha512; only sha256 is checked"},
            {"huge #!python script",
             with_record(add(base, member("demo-1.0.data/scripts/big", big_script))),
             w + "script demo-1.0.data/scripts/big is over the 1048576-byte limit for rewriting "
                 "its #!python line"},
            {"huge METADATA", with_record(base), w + k_dist + "/METADATA is over the 10-byte limit",
             ScanOptions{.max_total_size = 1U << 20, .max_text_size = 10, .filename = ""}},
            {"malformed METADATA", with_record(replace(base, k_dist + "/METADATA", "Name: demo\n")),
             k_wheel + "/" + k_dist + "/METADATA: missing Version header"},
        };
        for (const Row& row : rows) {
            CAPTURE(row.label);
            TempDir dir;
            std::string path = write_wheel(dir, row.members);
            auto scan = scan_wheel(path, row.options);
            REQUIRE_FALSE(scan.ok());
            std::string expected = row.expected;
            if (expected.rfind("{host}", 0) == 0)
                expected.replace(0, 6, path);
            CHECK(scan.error().text() == expected);
        }
    }

    TEST_CASE("a file that is no wheel fails on its name or its bytes") {
        TempDir dir;
        auto named = scan_wheel(dir.write_file("demo.zip", "x"));
        REQUIRE_FALSE(named.ok());
        CHECK(named.error().text() == "demo.zip: not a wheel file name (no .whl suffix)");
        std::string path = dir.write_file(k_wheel, "not a zip at all");
        auto garbage = scan_wheel(path);
        REQUIRE_FALSE(garbage.ok());
        CHECK(garbage.error().text() == path + ": Unrecognized archive format");
        auto missing = scan_wheel(dir / "demo-2.0-py3-none-any.whl");
        REQUIRE_FALSE(missing.ok());
        CHECK(missing.error().text() ==
              dir / "demo-2.0-py3-none-any.whl" + ": no such file or directory");
        // A cache blob (named by its hash) names the wheel first, then where its bytes are.
        std::string blob = dir.write_file("0123abcd", "not a zip at all");
        auto cached = scan_wheel(blob, ScanOptions{.filename = k_wheel});
        REQUIRE_FALSE(cached.ok());
        CHECK(cached.error().text() ==
              k_wheel + ": Unrecognized archive format (the copy at " + blob + ")");
    }

    TEST_CASE("the scan cache JSON round-trips every field") {
        TempDir dir;
        auto scan = scan_wheel(write_wheel(dir, with_record(demo_members())));
        REQUIRE(scan.ok());
        std::string json = scan_to_json(*scan);
        auto back = scan_from_json(json);
        if (!back.ok())
            FAIL(back.error().text());
        CHECK(scan_to_json(*back) == json);
        CHECK(back->filename.version == "1.0");
        CHECK(back->entries.size() == scan->entries.size());
        const auto* lib = find_entry(*back, "demo/lib/libdemo.so.1");
        REQUIRE(lib != nullptr);
        REQUIRE(lib->elf.has_value());
        CHECK(lib->elf->soname == "libdemo.so.1");
        CHECK(lib->elf->symbols.size() == 2);
        CHECK(lib->elf->symbols[0].name == "malloc");
        CHECK_FALSE(lib->elf->symbols[0].defined);
        CHECK(lib->elf->symbols[1].defined);
        CHECK(lib->elf->rpath == find_entry(*scan, "demo/lib/libdemo.so.1")->elf->rpath);
        CHECK(find_entry(*back, "demo-1.0.data/scripts/tool")->content ==
              "#!python\nprint('tool')\n");
        CHECK(back->provides == scan->provides);
        CHECK(back->needs == scan->needs);
    }

    TEST_CASE("the scan cache refuses another schema or a field of the wrong shape") {
        TempDir dir;
        auto scan = scan_wheel(write_wheel(dir, with_record(demo_members())));
        REQUIRE(scan.ok());
        const std::string json = scan_to_json(*scan);
        auto edit = [&](const std::string& from, const std::string& to) {
            std::string out = json;
            size_t at = out.find(from);
            REQUIRE(at != std::string::npos);
            out.replace(at, from.size(), to);
            return out;
        };
        const std::vector<std::pair<std::string, std::string>> rows = {
            {"{", "scan cache: not valid JSON"},
            {"[]", "scan cache: $: expected an object"},
            {edit("\"schema\":3", "\"schema\":2"), "scan cache: schema 2 is not 3"},
            {edit("\"schema\":3", "\"schema\":\"3\""), "scan cache: schema \"3\" is not 3"},
            {edit("\"architectures\":[]", "\"architectures\":[\"sm_7\"]"),
             "scan cache: $.entries[0].architectures: not an nvcc architecture name"},
            {edit("\"architectures\":[]", "\"architectures\":\"sm_75\""),
             "scan cache: $.entries[0].architectures: expected an array"},
            {edit("\"device_code_error\":\"\"", "\"device_code_error\":null"),
             "scan cache: $.entries[0].device_code_error: expected a string"},
            {edit("\"wheel_size\":", "\"size_of_wheel\":"), "scan cache: $.wheel_size: missing"},
            {edit("\"dist_info\":\"", "\"dist_info\":1,\"x\":\""),
             "scan cache: $.dist_info: expected a string"},
            {edit("\"filename\":\"demo-1.0", "\"filename\":\"demo"),
             "scan cache: $.filename: demo-py3-none-any.whl: expected 5 or 6 '-'-separated "
             "fields, found 4"},
            {edit("\"class\":2", "\"class\":3"),
             "scan cache: $.entries[6].elf.class: expected 1 or 2"},
            {edit("\"machine\":62", "\"machine\":-62"),
             "scan cache: $.entries[6].elf.machine: expected an unsigned integer of at most 65535"},
            {edit("[\"demo_init\",\"\",true,false,1,2,false]",
                  "[\"demo_init\",\"\",true,false,1,2]"),
             "scan cache: $.entries[8].elf.symbols[1]: expected an array of 7"},
            {edit("\"relocations_read\":true", "\"relocations_read\":1"),
             "scan cache: $.entries[6].elf.relocations_read: expected a boolean"},
            {edit("\"content_hex\":\"2321", "\"content_hex\":\"2G21"),
             "scan cache: $.entries[0].content_hex: expected lowercase hex digits"},
            {edit("\"executable\":false", "\"executable\":0"),
             "scan cache: $.entries[1].executable: expected a boolean"},
            {edit("\"entries\":[", "\"entries\":{}, \"e\":["),
             "scan cache: $.entries: expected an array"},
        };
        for (const auto& [text, expected] : rows) {
            CAPTURE(text.substr(0, 80));
            auto parsed = scan_from_json(text);
            REQUIRE_FALSE(parsed.ok());
            CHECK(parsed.error().text() == expected);
        }
    }

    TEST_CASE("needed versions: from sonames the wheel does not provide, weak ones left out") {
        WheelScan scan;
        scan.provides = {"libtorch.so"};
        auto entry = [](std::vector<rootlock::elf::VersionNeed> needs) {
            rootlock::python::WheelEntry e;
            e.path = "x.so";
            e.elf.emplace();
            e.elf->version_needs = std::move(needs);
            return e;
        };
        rootlock::elf::NeededVersion glibc_217{"GLIBC_2.17", 0, 2, false};
        rootlock::elf::NeededVersion glibc_228{"GLIBC_2.28", 0, 3, false};
        rootlock::elf::NeededVersion weak{"GLIBC_2.99", 0, 4, true};
        rootlock::elf::NeededVersion cxx{"GLIBCXX_3.4.29", 0, 5, false};
        rootlock::elf::NeededVersion own{"TORCH_1", 0, 6, false};
        scan.entries.push_back(entry({{"libc.so.6", {glibc_228, weak}}, {"libtorch.so", {own}}}));
        scan.entries.push_back(entry({{"libc.so.6", {glibc_217}}, {"libstdc++.so.6", {cxx}}}));
        scan.entries.emplace_back();  // not ELF
        CHECK(rootlock::python::needed_versions(scan) ==
              std::vector<std::string>{"GLIBCXX_3.4.29", "GLIBC_2.17", "GLIBC_2.28"});
    }
}
