// Tests for freeze_environment: venvs written on disk (and one in a fake Debian root in memory)
// whose RECORDs the tests write, then damaged file by file to get every exact problem text.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "freeze/freeze.hpp"
#include "fs/directory_tree.hpp"
#include "fs/memory_tree.hpp"
#include "support/elf_writer.hpp"
#include "support/fake_root.hpp"
#include "support/temp_dir.hpp"
#include "util/sha256.hpp"

using namespace rootlock;
using rootlock::freeze::freeze_environment;
using rootlock::freeze::FreezeOptions;
using rootlock::freeze::FreezeResult;
using rootlock::freeze::RecordProblem;
using rootlock::testing::TempDir;

namespace {

const std::string k_site = "/opt/venv/lib/python3.11/site-packages";

struct FileSpec {
    FileSpec(std::string path_, std::string content_, bool hashed_ = true, std::string digest_ = {})
        : path(std::move(path_)),
          content(std::move(content_)),
          hashed(hashed_),
          digest(std::move(digest_)) {}

    std::string path;  // as RECORD spells it, relative to site-packages
    std::string content;
    bool hashed = true;
    std::string digest;  // as RECORD spells it; empty: the sha256 of content, computed here
};

struct DistSpec {
    std::string name;  // as METADATA spells it
    std::string version;
    std::vector<FileSpec> files;
    bool requested = false;
    std::string algorithm = "sha256";
    bool hex = false;  // dh-python's hexdigest() spelling
};

std::string bytes_text(const std::vector<std::byte>& bytes) {
    std::string text(bytes.size(), '\0');
    std::transform(bytes.begin(), bytes.end(), text.begin(),
                   [](std::byte b) { return static_cast<char>(b); });
    return text;
}

std::string elf_text(const testing::ElfSpec& spec) {
    return bytes_text(testing::build_elf(spec));
}

std::string record_digest(const std::string& content, bool hex) {
    util::Sha256 hasher;
    hasher.update(content);
    return hex ? hasher.hex_digest() : util::Sha256::to_base64url(hasher.digest());
}

std::string dist_info_of(const DistSpec& spec) {
    return spec.name + "-" + spec.version + ".dist-info";
}

// Writes one file at a root-absolute path through `write` (a TempDir or a MemoryTree).
template <class Write>
void write_dist(const Write& write, const DistSpec& spec) {
    const std::string dist_info = dist_info_of(spec);
    std::vector<FileSpec> files = spec.files;
    // The test computes only sha256 itself; other algorithms' digests are given by the caller.
    const bool hashed = spec.algorithm == "sha256";
    files.push_back(
        {dist_info + "/METADATA",
         "Metadata-Version: 2.1\nName: " + spec.name + "\nVersion: " + spec.version + "\n",
         hashed});
    files.push_back({dist_info + "/INSTALLER", "pip\n", hashed});
    if (spec.requested)
        files.push_back({dist_info + "/REQUESTED", "", hashed});
    std::string record;
    for (const FileSpec& file : files) {
        write(std::filesystem::path(k_site + "/" + file.path).lexically_normal().string(),
              file.content);
        record += file.path + ",";
        if (file.hashed) {
            record += spec.algorithm + "=" +
                      (file.digest.empty() ? record_digest(file.content, spec.hex) : file.digest) +
                      "," + std::to_string(file.content.size());
        } else {
            record += ",";
        }
        record += "\n";
    }
    record += dist_info + "/RECORD,,\n";
    write(k_site + "/" + dist_info + "/RECORD", record);
}

// alpha-pkg: two ELF objects (a library with a soname and the extension module that needs it),
// REQUESTED; beta: pure Python with a console script outside site-packages and a .pyc listed
// without hash (absent, as after a --no-compile copy).
std::vector<DistSpec> sample_dists() {
    testing::ElfSpec library = testing::library_spec("libalpha.so.1", {"libz.so.1", "libc.so.6"});
    library.version_needs = {{"libc.so.6", {{"GLIBC_2.17", 2, false}, {"GLIBC_2.99", 3, true}}}};
    testing::ElfSpec module = testing::library_spec("", {"libalpha.so.1", "libc.so.6"});
    module.version_needs = {{"libalpha.so.1", {{"ALPHA_1.0", 2, false}}}};
    DistSpec alpha{"Alpha_Pkg",
                   "1.0",
                   {{"alpha/__init__.py", "from alpha._speedups import *\n"},
                    {"alpha/libalpha.so.1", elf_text(library)},
                    {"alpha/_speedups.cpython-311-x86_64-linux-gnu.so", elf_text(module)}},
                   true};
    DistSpec beta{"beta",
                  "2.0.RC1",
                  {{"beta/__init__.py", "VALUE = 1\n"},
                   {"beta/data.txt", "some data\n"},
                   {"beta/__pycache__/__init__.cpython-311.pyc", "", false},
                   {"../../../bin/beta-cli", "#!/opt/venv/bin/python3\nimport beta\n"}}};
    return {alpha, beta};
}

void write_venv(const TempDir& root, const std::vector<DistSpec>& dists,
                const std::string& cfg = "home = /usr/bin\nversion = 3.11.2\n") {
    root.write_file("opt/venv/pyvenv.cfg", cfg);
    root.make_dirs("opt/venv/bin");
    root.make_dirs(k_site.substr(1));
    auto write = [&](const std::string& path, const std::string& content) {
        root.write_file(path.substr(1), content);
    };
    for (const DistSpec& dist : dists)
        write_dist(write, dist);
}

freeze::FreezeResult freeze_ok(const fs::FileTree& tree, const freeze::FreezeOptions& options) {
    auto result = freeze::freeze_environment(tree, options);
    if (!result.ok())
        FAIL(result.error().text());
    return std::move(result).value();
}

std::unique_ptr<fs::DirectoryTree> open_tree(const TempDir& root) {
    auto tree = fs::DirectoryTree::create(root.path());
    REQUIRE(tree.ok());
    return std::move(tree).value();
}

std::vector<std::string> names_of(const pylock::Lock& lock) {
    std::vector<std::string> names;
    for (const auto& package : lock.packages)
        names.push_back(package.name + "==" + package.version);
    return names;
}

using Problems = std::vector<freeze::RecordProblem>;

}  // namespace

TEST_SUITE("rootlock::freeze") {
    TEST_CASE("freezing a venv locks every distribution with its sonames and verifies its files") {
        TempDir root;
        write_venv(root, sample_dists());
        auto tree = open_tree(root);
        const freeze::FreezeResult result = freeze_ok(*tree, {"/opt/venv", 2});

        CHECK(result.problems == Problems{});
        // alpha: 3 files + METADATA + INSTALLER + REQUESTED; beta: 3 hashed + METADATA + INSTALLER.
        CHECK(result.files_hashed == 11U);
        uint64_t bytes = 0;
        for (const DistSpec& dist : sample_dists()) {
            for (const FileSpec& file : dist.files)
                bytes += file.content.size();
            bytes += std::string("Metadata-Version: 2.1\nName: \nVersion: \n").size() +
                     dist.name.size() + dist.version.size() + 4;  // + "pip\n"
        }
        CHECK(result.bytes_hashed == bytes);

        const pylock::Lock& lock = result.lock;
        CHECK(names_of(lock) == std::vector<std::string>{"alpha-pkg==1.0", "beta==2.0rc1"});
        CHECK(lock.requires_python == "==3.11.*");
        REQUIRE(lock.packages.size() == 2);
        const pylock::LockPackage& alpha = lock.packages[0];
        CHECK(alpha.index.empty());
        CHECK(alpha.wheels.empty());
        REQUIRE(alpha.rootlock.has_value());
        CHECK(alpha.rootlock->requested);
        CHECK(
            alpha.rootlock->provides ==
            std::vector<std::string>{"_speedups.cpython-311-x86_64-linux-gnu.so", "libalpha.so.1"});
        CHECK(alpha.rootlock->needs == std::vector<std::string>{"libc.so.6", "libz.so.1"});
        // GLIBC_2.99 is weak; ALPHA_1.0 comes from its own library.
        CHECK(alpha.rootlock->needs_versions == std::vector<std::string>{"GLIBC_2.17"});
        const pylock::LockPackage& beta = lock.packages[1];
        REQUIRE(beta.rootlock.has_value());
        CHECK_FALSE(beta.rootlock->requested);
        CHECK(beta.rootlock->provides.empty());
        CHECK(beta.rootlock->needs.empty());

        REQUIRE(lock.rootlock.has_value());
        const pylock::LockRootlockData& data = *lock.rootlock;
        CHECK(data.target.python == "3.11");
        CHECK(data.target.python_full == "3.11.2");
        CHECK(data.target.glibc.empty());
        CHECK(data.target.arch.empty());
        CHECK(data.venv == "/opt/venv");
        CHECK(data.frozen_from == "/opt/venv");
        CHECK(data.closure_ok);
        CHECK(data.recipe.empty());
        CHECK(data.base == pylock::LockBase{});
        // No /bin/sh nor /usr/bin/python3.11 here: the target facts are a note, not a failure.
        CHECK(result.notes ==
              std::vector<std::string>{
                  "/opt/venv/bin/python3: the venv's interpreter does not resolve inside the root",
                  root.path() +
                      ": cannot tell the target machine: no ELF /bin/sh or dynamic loader in the "
                      "root (glibc and architecture unknown)"});
    }

    TEST_CASE("a site-packages path freezes the same environment as its prefix") {
        TempDir root;
        write_venv(root, sample_dists());
        auto tree = open_tree(root);
        const freeze::FreezeResult by_prefix = freeze_ok(*tree, {"/opt/venv", 1});
        const freeze::FreezeResult by_site = freeze_ok(*tree, {k_site, 3});
        CHECK(by_site.lock == by_prefix.lock);
        CHECK(by_site.files_hashed == by_prefix.files_hashed);
    }

    TEST_CASE("damaged, missing and replaced files are reported with exact texts, sorted") {
        TempDir root;
        std::vector<DistSpec> dists = sample_dists();
        dists.push_back(DistSpec{"gamma", "0.1", {{"gamma.py", "pass\n"}}});
        dists.push_back(DistSpec{"delta", "3", {{"delta/d.py", "d\n"}, {"delta/link.py", "x\n"}}});
        write_venv(root, dists);
        const std::string site = k_site.substr(1);
        std::filesystem::remove(root / (site + "/alpha/__init__.py"));
        root.write_file(site + "/beta/data.txt", "some data\n!");
        root.write_file(site + "/beta/__init__.py", "VALUE = 2\n");  // same size
        std::filesystem::remove(root / (site + "/gamma-0.1.dist-info/RECORD"));
        std::filesystem::remove(root / (site + "/delta/d.py"));
        root.make_dirs(site + "/delta/d.py");
        // A symlink is followed within the root: its target's bytes are what matter.
        root.write_file(site + "/delta/real.py", "x\n");
        std::filesystem::remove(root / (site + "/delta/link.py"));
        root.make_symlink(site + "/delta/link.py", "real.py");
        root.write_file(site + "/beta/__pycache__/__init__.cpython-311.pyc", "garbage");

        auto tree = open_tree(root);
        const freeze::FreezeResult result = freeze_ok(*tree, {"/opt/venv", 2});
        CHECK(result.problems ==
              Problems{
                  {"alpha-pkg", k_site + "/alpha/__init__.py", "missing"},
                  {"beta", k_site + "/beta/__init__.py", "modified (sha256 differs from RECORD)"},
                  {"beta", k_site + "/beta/data.txt", "size 11, RECORD says 10"},
                  {"delta", k_site + "/delta/d.py", "not a regular file"},
                  {"gamma", k_site + "/gamma-0.1.dist-info",
                   "no RECORD: its files cannot be verified"}});
        CHECK(names_of(result.lock) ==
              std::vector<std::string>{"alpha-pkg==1.0", "beta==2.0rc1", "delta==3", "gamma==0.1"});
        // The missing file and the size mismatch are not read (the size settles it); delta's
        // link.py, METADATA and INSTALLER are; gamma has nothing to hash.
        CHECK(result.files_hashed == 11U - 2U + 3U);
    }

    TEST_CASE("a malformed RECORD makes its distribution unverifiable") {
        TempDir root;
        write_venv(root, {DistSpec{"gamma", "0.1", {{"gamma.py", "pass\n"}}}});
        root.write_file(k_site.substr(1) + "/gamma-0.1.dist-info/RECORD", "gamma.py,md5=x,1\n");
        auto tree = open_tree(root);
        const freeze::FreezeResult result = freeze_ok(*tree, {"/opt/venv", 2});
        CHECK(result.problems == Problems{{"gamma", k_site + "/gamma-0.1.dist-info",
                                           "malformed RECORD: its files cannot be verified"}});
        CHECK(result.files_hashed == 0U);
        REQUIRE(result.notes.size() == 3);
        CHECK(result.notes[1] == k_site +
                                     "/gamma-0.1.dist-info/RECORD:1: hash algorithm md5 is not "
                                     "allowed (the wheel spec asks for sha256 or stronger)");
    }

    TEST_CASE(
        "hex digests, sha384 and sha512 verify, and a row climbing out of the root is "
        "reported unread") {
        TempDir root;
        DistSpec hex{"hexdist", "1", {{"hexdist.py", "import os\n"}}};
        hex.hex = true;
        // Digests from Python's hashlib, an independent implementation.
        DistSpec sha384{"long384",
                        "1",
                        {{"long384.py", "a = 384\n", true,
                          "1e0d828d2e849c9f23c6bbc7ea92d480da17ac487872fcc0786fa7c5b1de5b31ee60c736"
                          "62f9351a3f05d63babe8f7b6"}}};
        sha384.algorithm = "sha384";
        sha384.hex = true;
        DistSpec sha512{"long512",
                        "1",
                        {{"long512.py", "a = 512\n", true,
                          "E5BJS69t0EMkz9I1Ko-6GkdnKaQGYkUT0oHZtrV4o4hpHaIDw3VCO7tfM8_x3HhC_"
                          "W5hm01mqqdrEEWG6mzoHQ"},
                         {"other.py", "b\n", true,
                          "hopqxuHQKT10-tB_bZWVKz4B09MVPbZ3p12Ad5g_1OMNtr_Im3YIqT-"
                          "yZGkjOp8aCVctaHqcXaeLID6xUQQKFQ"}}};
        sha512.algorithm = "sha512";
        write_venv(root, {hex, sha384, sha512}, "home = /usr/bin\nversion = 3.11\n");
        root.write_file(k_site.substr(1) + "/other.py", "c\n");  // same size, other bytes
        // A RECORD naming a host file: the root's own /etc/passwd must not be read either.
        root.write_file("etc/passwd", "root:x:0:0::/root:/bin/sh\n");
        const std::string escaping = "../../../../../../../etc/passwd";
        {
            const std::string record_path = k_site.substr(1) + "/hexdist-1.dist-info/RECORD";
            std::string record =
                "hexdist.py,sha256=" + record_digest("import os\n", true) + ",10\n";
            record += escaping + ",sha256=" + record_digest("x", true) + ",1\n";
            root.write_file(record_path, record);
        }
        auto tree = open_tree(root);
        const freeze::FreezeResult result = freeze_ok(*tree, {"/opt/venv", 2});
        CHECK(result.problems ==
              Problems{{"hexdist", k_site + "/" + escaping, "outside the root"},
                       {"long512", k_site + "/other.py", "modified (sha512 differs from RECORD)"}});
        CHECK(result.files_hashed == 1U + 1U + 2U);
        REQUIRE(result.lock.rootlock.has_value());
        CHECK(result.lock.rootlock->target.python_full.empty());  // "3.11" has two components
    }

    TEST_CASE("a venv in a Debian root gets the target's arch and glibc from the root") {
        auto root = testing::make_fake_root();
        testing::add_elf(*root, "/usr/bin/python3.11", testing::program_spec({"libc.so.6"}));
        root->add_file("/opt/venv/pyvenv.cfg", "home = /usr/bin\nversion = 3.11.2\n");
        root->add_symlink("/opt/venv/bin/python3", "/usr/bin/python3.11");
        auto write = [&](const std::string& path, const std::string& content) {
            root->add_file(path, content);
        };
        DistSpec dist = sample_dists()[0];
        write_dist(write, dist);
        root->add_file(k_site + "/alpha/__init__.py", "tampered = True\n");
        const freeze::FreezeResult result = freeze_ok(*root, {"/opt/venv", 2});
        CHECK(result.notes.empty());
        REQUIRE(result.lock.rootlock.has_value());
        CHECK(result.lock.rootlock->target.arch == "x86_64");
        CHECK(result.lock.rootlock->target.glibc == "2.34");
        CHECK(result.lock.rootlock->target.python_full == "3.11.2");
        CHECK(result.problems ==
              Problems{{"alpha-pkg", k_site + "/alpha/__init__.py", "size 16, RECORD says 30"}});
        REQUIRE(result.lock.packages.size() == 1);
        CHECK(result.lock.packages[0].rootlock->needs ==
              std::vector<std::string>{"libc.so.6", "libz.so.1"});
    }

    TEST_CASE("a path without exactly one environment is refused with the exact message") {
        TempDir root;
        root.make_dirs("srv/empty");
        write_venv(root, sample_dists());
        root.write_file("opt/other/pyvenv.cfg", "home = /usr/bin\nversion = 3.11.2\n");
        root.make_dirs("opt/other/lib/python3.11/site-packages");
        auto tree = open_tree(root);
        const std::vector<std::pair<std::string, std::string>> cases = {
            {"/srv", "/srv: no Python environment here"},
            {"/srv/empty", "/srv/empty: no Python environment here"},
            {"/nowhere", "/nowhere: no such file or directory"},
            {"/opt", "/opt: 2 environments here; name one site-packages"},
        };
        for (const auto& [path, message] : cases) {
            CAPTURE(path);
            auto result = freeze::freeze_environment(*tree, {path, 2});
            REQUIRE_FALSE(result.ok());
            CHECK(result.error().text() == message);
        }
    }

    TEST_CASE("a large file is hashed in pieces, and one changed byte in it is found") {
        constexpr size_t k_size = size_t{64} << 20;
        std::string big(k_size, '\0');
        for (size_t i = 0; i < big.size(); ++i)
            big[i] = static_cast<char>((i * 2654435761U) >> 13U);
        TempDir root;
        write_venv(root, {DistSpec{"bigdist", "1", {{"big.bin", big}, {"small.py", "s\n"}}}});
        auto tree = open_tree(root);

        const auto start = std::chrono::steady_clock::now();
        const freeze::FreezeResult result = freeze_ok(*tree, {"/opt/venv", 2});
        const std::chrono::duration<double> seconds = std::chrono::steady_clock::now() - start;
        CHECK(result.problems == Problems{});
        CHECK(result.bytes_hashed > k_size);
        const double megabytes = static_cast<double>(result.bytes_hashed) / 1e6;
        MESSAGE("hashed " << megabytes << " MB at " << megabytes / std::max(seconds.count(), 1e-9)
                          << " MB/s with 2 threads");

        big[k_size / 2] = static_cast<char>(big[k_size / 2] ^ 1);
        root.write_file(k_site.substr(1) + "/big.bin", big);
        auto changed_tree = open_tree(root);
        const freeze::FreezeResult changed = freeze_ok(*changed_tree, {"/opt/venv", 2});
        CHECK(changed.problems ==
              Problems{{"bigdist", k_site + "/big.bin", "modified (sha256 differs from RECORD)"}});
    }
}
