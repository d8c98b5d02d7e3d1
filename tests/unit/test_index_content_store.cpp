// Unit tests for the content store: the on-disk layout and modes, verify-before-serve (a
// poisoned blob is deleted, never returned), temp files and commits, and malformed digests.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "index/content_store.hpp"
#include "support/temp_dir.hpp"
#include "util/sha256.hpp"

using rootlock::index::ContentStore;
using rootlock::testing::TempDir;

namespace {

std::string read_text(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream out;
    out << in.rdbuf();
    return out.str();
}

unsigned mode_of(const std::string& path) {
    struct stat info {};
    REQUIRE(::stat(path.c_str(), &info) == 0);
    return info.st_mode & 07777U;
}

// Entries of `dir`, not counting the lock every store holds while it lives (util/cache_lock).
size_t entries_in(const std::string& dir) {
    if (!std::filesystem::exists(dir))
        return 0;
    size_t count = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir))
        count += entry.path().filename() != ".in-use";
    return count;
}

}  // namespace

TEST_SUITE("rootlock::index") {
    TEST_CASE("put_bytes stores bytes under blobs/sha256/<ab>/<rest> with mode 0644") {
        TempDir dir;
        ContentStore store(dir / "cache");
        auto blob = store.put_bytes("hello\n");
        REQUIRE(blob.ok());
        const std::string sha = rootlock::util::sha256_hex("hello\n");
        CHECK(blob->sha256 == sha);
        CHECK(blob->size == 6U);
        CHECK(blob->path == dir / ("cache/blobs/sha256/" + sha.substr(0, 2) + "/" + sha.substr(2)));
        CHECK(read_text(blob->path) == "hello\n");
        CHECK(mode_of(blob->path) == 0644U);
        mode_t mask = ::umask(0);
        ::umask(mask);
        CHECK(mode_of(dir / "cache/blobs/sha256") == (0755U & ~static_cast<unsigned>(mask)));
        CHECK(entries_in(dir / "cache/tmp") == 0U);
    }

    TEST_CASE("find returns a present blob and nothing for an absent one") {
        TempDir dir;
        ContentStore store(dir.path() + "/");
        auto blob = store.put_bytes("abc");
        REQUIRE(blob.ok());
        auto found = store.find(blob->sha256);
        REQUIRE(found.ok());
        REQUIRE(found->has_value());
        CHECK(**found == blob->path);
        auto absent = store.find(rootlock::util::sha256_hex("other"));
        REQUIRE(absent.ok());
        CHECK_FALSE(absent->has_value());
    }

    TEST_CASE("a blob whose bytes changed is deleted and reported absent") {
        TempDir dir;
        ContentStore store(dir.path());
        auto blob = store.put_bytes("the real bytes");
        REQUIRE(blob.ok());
        SUBCASE("seen by the store that wrote it (size changed)") {
            dir.write_file(blob->path.substr(dir.path().size()), "poison");
            auto found = store.find(blob->sha256);
            REQUIRE(found.ok());
            CHECK_FALSE(found->has_value());
        }
        SUBCASE("seen by a fresh store (same size)") {
            dir.write_file(blob->path.substr(dir.path().size()), "the fake bytes");
            ContentStore fresh(dir.path());
            auto found = fresh.find(blob->sha256);
            REQUIRE(found.ok());
            CHECK_FALSE(found->has_value());
        }
        CHECK_FALSE(std::filesystem::exists(blob->path));
        // The good bytes can come back afterwards.
        auto again = store.put_bytes("the real bytes");
        REQUIRE(again.ok());
        CHECK(read_text(again->path) == "the real bytes");
    }

    TEST_CASE("putting the same bytes twice keeps one blob") {
        TempDir dir;
        ContentStore store(dir.path());
        auto first = store.put_bytes("same");
        auto second = store.put_bytes("same");
        REQUIRE(first.ok());
        REQUIRE(second.ok());
        CHECK(first->path == second->path);
        CHECK(entries_in(dir / "tmp") == 0U);
    }

    TEST_CASE("temp files are unique, empty and in <root>/tmp; commit moves them into place") {
        TempDir dir;
        ContentStore store(dir.path());
        auto a = store.temp_path();
        auto b = store.temp_path();
        REQUIRE(a.ok());
        REQUIRE(b.ok());
        CHECK(*a != *b);
        CHECK(a->rfind(dir / "tmp/", 0) == 0);
        CHECK(std::filesystem::file_size(*a) == 0U);
        {
            std::ofstream out(*a, std::ios::binary);
            out << "payload";
        }
        const std::string sha = rootlock::util::sha256_hex("payload");
        auto committed = store.commit(*a, sha);
        REQUIRE(committed.ok());
        CHECK(*committed == store.blob_path(sha));
        CHECK_FALSE(std::filesystem::exists(*a));
        CHECK(read_text(*committed) == "payload");
        CHECK(mode_of(*committed) == 0644U);
        store.discard(*b);
        CHECK_FALSE(std::filesystem::exists(*b));
        CHECK(entries_in(dir / "tmp") == 0U);
    }

    TEST_CASE("committing a missing temp file is an error naming it") {
        TempDir dir;
        ContentStore store(dir.path());
        auto committed = store.commit(dir / "tmp/nope", rootlock::util::sha256_hex("x"));
        REQUIRE_FALSE(committed.ok());
        CHECK(committed.error().text() == dir / "tmp/nope: No such file or directory");
    }

    TEST_CASE("a root that is a file gives one clear error") {
        TempDir dir;
        std::string file = dir.write_file("plain", "x");
        ContentStore store(file);
        auto blob = store.put_bytes("bytes");
        REQUIRE_FALSE(blob.ok());
        CHECK(blob.error().text() == file + ": not a directory");
    }

    TEST_CASE("malformed digests are refused by find and commit") {
        TempDir dir;
        ContentStore store(dir.path());
        const std::string good = rootlock::util::sha256_hex("x");
        std::string upper = good;
        for (char& c : upper)
            c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        const std::string cases[] = {"",
                                     "abc",
                                     good.substr(1),
                                     good + "0",
                                     std::string(64, 'g'),
                                     upper,
                                     "../../../../etc/passwd"};
        for (const auto& digest : cases) {
            CAPTURE(digest);
            auto found = store.find(digest);
            REQUIRE_FALSE(found.ok());
            const std::string where = digest.empty() ? "\"\"" : digest;
            CHECK(found.error().text() == where + ": not a sha256 digest");
            auto committed = store.commit(dir / "tmp/x", digest);
            REQUIRE_FALSE(committed.ok());
            CHECK(committed.error().text() == where + ": not a sha256 digest");
        }
        CHECK(entries_in(dir.path()) == 0U);
    }
}
