// Tests for read_heads() and the batched probe built on it: io_uring and one-file-at-a-time
// reads give the same answers for every kind of entry a root holds or a race swaps in, across
// several submissions, and a batch probe answers as probing each file alone does.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "fs/directory_tree.hpp"
#include "fs/head_reads.hpp"
#include "fs/hiding_tree.hpp"
#include "support/probe_entries.hpp"
#include "support/temp_dir.hpp"

namespace ROOTLOCK_UNIT_ID {

using namespace rootlock;
using namespace rootlock::fs;
using rootlock::testing::TempDir;

namespace {

constexpr const char* k_host_libz = "/lib/x86_64-linux-gnu/libz.so.1";

// A directory holding each kind of entry a listing may call a regular file by the time it is
// opened, and their names (one that does not exist among them).
std::vector<std::string> fill_kinds(TempDir& root) {
    write_probe_entries(root);
    root.write_file("exact", std::string(k_head_size, 'y'));
    root.write_file("short", std::string(10, 'z'));
    return {"libz.so.1", "text",   "exact",   "short",   "empty", "torn.so",
            "link.so",   "dir.so", "fifo.so", "gone.so", "text"};
}

struct Directory {
    int fd = -1;
    explicit Directory(const std::filesystem::path& path)
        : fd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) {
        REQUIRE(fd >= 0);
    }
    Directory(const Directory&) = delete;
    Directory& operator=(const Directory&) = delete;
    ~Directory() { ::close(fd); }
};

void check_same(const std::vector<HeadRead>& fast, const std::vector<HeadRead>& plain,
                const std::vector<std::string_view>& names) {
    REQUIRE(fast.size() == names.size());
    REQUIRE(plain.size() == names.size());
    for (size_t i = 0; i < names.size(); ++i) {
        CAPTURE(names[i]);
        CHECK(fast[i].error == plain[i].error);
        CHECK(fast[i].length == plain[i].length);
        CHECK(fast[i].bytes == plain[i].bytes);
    }
}

}  // namespace

TEST_SUITE("rootlock::fs") {
    TEST_CASE("read_heads: io_uring and plain reads agree on every kind of entry") {
        MESSAGE(
            "io_uring on this machine: " << std::string(head_reads_use_io_uring() ? "yes" : "no"));
        TempDir root;
        const auto owned = fill_kinds(root);
        const std::vector<std::string_view> names(owned.begin(), owned.end());
        Directory dir(root.path());
        const auto fast = read_heads(dir.fd, names);
        const auto plain = read_heads(dir.fd, names, HeadReadMethod::plain);
        check_same(fast, plain, names);

        // What each answer is, not only that the two agree.
        CHECK(fast[0].error == 0);
        CHECK(fast[0].length == k_head_size);
        CHECK(fast[0].bytes[1] == std::byte{'E'});
        CHECK(fast[1].length == k_head_size);
        CHECK(fast[1].bytes[0] == std::byte{'x'});
        CHECK(fast[2].length == k_head_size);  // exactly a header's length: not short
        CHECK(fast[3].length == 10);
        CHECK(fast[4].error == 0);
        CHECK(fast[4].length == 0);
        CHECK(fast[6].error == ELOOP);  // O_NOFOLLOW: a symlink is not read through
        CHECK(fast[7].error != 0);      // a directory does not read
        CHECK(fast[8].error == 0);      // a FIFO without a writer: opened without blocking, empty
        CHECK(fast[8].length == 0);
        CHECK(fast[9].error == ENOENT);
        CHECK(fast[10].bytes == fast[1].bytes);  // a name given twice is read twice

        // Absolute paths, with no directory: the same answers.
        std::vector<std::string> absolute;
        for (std::string_view name : names)
            absolute.push_back(root / name);
        const std::vector<std::string_view> absolute_views(absolute.begin(), absolute.end());
        check_same(read_heads(AT_FDCWD, absolute_views), plain, absolute_views);
    }

    TEST_CASE("read_heads: batches larger than one submission, in the order given") {
        TempDir root;
        std::vector<std::string> owned;
        for (int i = 0; i < 300; ++i) {
            owned.push_back("f" + std::to_string(i));
            // Every fifth file is missing, every seventh short: failures spread over batches.
            if (i % 5 == 0)
                continue;
            root.write_file(owned.back(),
                            std::to_string(i) + std::string(i % 7 == 0 ? 0 : 80, '.'));
        }
        const std::vector<std::string_view> names(owned.begin(), owned.end());
        Directory dir(root.path());
        const auto fast = read_heads(dir.fd, names);
        check_same(fast, read_heads(dir.fd, names, HeadReadMethod::plain), names);
        for (size_t i = 0; i < 300; ++i) {
            CAPTURE(i);
            if (i % 5 == 0) {
                CHECK(fast[i].error == ENOENT);
                continue;
            }
            const std::string number = std::to_string(i);
            CHECK(std::string(reinterpret_cast<const char*>(fast[i].bytes.data()), number.size()) ==
                  number);
        }
        CHECK(read_heads(dir.fd, {}).empty());
    }

    TEST_CASE("probe_regular_elf_batch answers as probe_regular_elf does, name by name") {
        TempDir root;
        root.make_dirs("lib");
        std::filesystem::copy_file(k_host_libz, root / "lib/libz.so.1");
        TempDir scratch;
        const auto owned = fill_kinds(scratch);
        for (const auto& entry : std::filesystem::directory_iterator(scratch.path())) {
            if (entry.path().filename() != "libz.so.1")
                std::filesystem::rename(entry.path(),
                                        root / ("lib/" + entry.path().filename().string()));
        }
        const std::vector<std::string_view> names(owned.begin(), owned.end());
        auto batch_tree = DirectoryTree::create(root.path());
        auto single_tree = DirectoryTree::create(root.path());
        REQUIRE(batch_tree.ok());
        REQUIRE(single_tree.ok());
        const auto batch = (*batch_tree)->probe_regular_elf_batch("/lib", names, true);
        REQUIRE(batch.size() == names.size());
        for (size_t i = 0; i < names.size(); ++i) {
            CAPTURE(names[i]);
            const auto single =
                (*single_tree)->probe_regular_elf("/lib/" + std::string(names[i]), true);
            CHECK(batch[i].outcome == single.outcome);
            CHECK(batch[i].error == single.error);
            CHECK(bool(batch[i].info) == bool(single.info));
        }
        REQUIRE(batch[0].outcome == ElfProbe::Outcome::elf);
        CHECK(batch[0].info->symbols_read);
        // Cached like a single probe: the same parse comes back.
        CHECK((*batch_tree)->probe_elf("/lib/libz.so.1", true).info == batch[0].info);
        CHECK((*batch_tree)->probe_regular_elf_batch("/lib", names, true)[0].info == batch[0].info);
        // A directory that is not there: each name is probed alone, and is missing.
        const auto nowhere = (*batch_tree)->probe_regular_elf_batch("/nowhere", names);
        for (const auto& probe : nowhere)
            CHECK(probe.outcome == ElfProbe::Outcome::missing);

        // Through a HidingTree: hidden names are missing, the rest are the base's answers.
        HidingTree hiding(**batch_tree, {"/lib/libz.so.1", "/lib/text"});
        const auto seen = hiding.probe_regular_elf_batch("/lib", names, true);
        REQUIRE(seen.size() == names.size());
        CHECK(seen[0].outcome == ElfProbe::Outcome::missing);
        CHECK(seen[1].outcome == ElfProbe::Outcome::missing);
        CHECK(seen[10].outcome == ElfProbe::Outcome::missing);
        CHECK(seen[2].outcome == ElfProbe::Outcome::not_elf);
        CHECK(seen[5].outcome == ElfProbe::Outcome::malformed);
    }
}

}  // namespace ROOTLOCK_UNIT_ID
