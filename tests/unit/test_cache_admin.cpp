// The cache as a whole: verify finds each kind's damage and removes only that; du counts by
// kind; prune keeps what a kept lock needs.
#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>

#include "cache/cache_admin.hpp"
#include "image/frame_cache.hpp"
#include "index/page_cache.hpp"
#include "support/host.hpp"
#include "support/temp_dir.hpp"
#include "util/cache_lock.hpp"
#include "util/sealed_text.hpp"
#include "util/sha256.hpp"

namespace rootlock::testing::ROOTLOCK_UNIT_ID {

namespace {

// A blob under its own sha256, as the content store keeps it.
std::string put_blob(TempDir& tmp, const std::string& bytes) {
    const std::string sha = util::sha256_hex(bytes);
    return tmp.write_file("cache/blobs/sha256/" + sha.substr(0, 2) + "/" + sha.substr(2), bytes);
}

void flip_last_byte(TempDir& tmp, const std::string& path) {
    std::string bytes = read_host_text(path);
    bytes.back() = static_cast<char>(bytes.back() ^ 0x01);
    tmp.write_file(std::filesystem::relative(path, tmp.path()).string(), bytes);
}

}  // namespace

TEST_SUITE("rootlock::cache") {
    TEST_CASE("cache verify: each kind's damage is named and removed, the rest kept") {
        TempDir tmp;
        const std::string cache = tmp / "cache";
        const std::string good_blob = put_blob(tmp, "a wheel");
        const std::string bad_blob = put_blob(tmp, "another wheel");
        flip_last_byte(tmp, bad_blob);
        image::FrameCache frames(cache, image::FrameCodec::zstd);
        const std::string content(9000, 'f');
        auto frame = image::compress_frame(image::FrameCodec::zstd, 3,
                                           std::as_bytes(std::span(content)), "t");
        REQUIRE(frame.ok());
        const std::string key(64, 'a');
        frames.store(key, *frame);
        const std::string frame_path = cache + "/frames/zstd/aa/" + key;
        REQUIRE(std::filesystem::exists(frame_path));
        index::PageCache pages(cache);
        REQUIRE(pages.put("k1", index::CachedPage{"u", "t", "", "", "one"}).ok());
        REQUIRE(pages.put("k2", index::CachedPage{"u", "t", "", "", "two"}).ok());
        flip_last_byte(tmp, pages.path_for("k2"));
        const std::string base = tmp.write_file("cache/bases/plain-x.tar", "base bytes");
        tmp.write_file("cache/bases/plain-x.tar.sha256", util::sha256_hex("base bytez") + "\n");

        auto report = cache::verify_cache(cache);
        REQUIRE(report.ok());
        REQUIRE(report->damaged.size() == 3);
        CHECK(report->damaged[0].find(bad_blob + ": damaged") == 0);
        CHECK(report->damaged[1].find(base + ": damaged") == 0);
        CHECK(report->damaged[2].find(pages.path_for("k2") + ": damaged") == 0);
        CHECK(std::filesystem::exists(good_blob));
        CHECK_FALSE(std::filesystem::exists(bad_blob));
        CHECK(std::filesystem::exists(frame_path));
        CHECK_FALSE(std::filesystem::exists(base));
        CHECK(report->checked[0].entries == 2);  // blobs
        CHECK(report->checked[1].entries == 1);  // frames
        CHECK(report->bytes_read > 0);

        // A frame changed in place: its checksum tells.
        flip_last_byte(tmp, frame_path);
        auto again = cache::verify_cache(cache);
        REQUIRE(again.ok());
        REQUIRE(again->damaged.size() == 1);
        CHECK(again->damaged[0].find(frame_path + ": damaged") == 0);
        CHECK_FALSE(std::filesystem::exists(frame_path));
        auto clean = cache::verify_cache(cache);
        REQUIRE(clean.ok());
        CHECK(clean->damaged.empty());
    }

    TEST_CASE("cache lock: verify and prune wait for a run that holds the cache") {
        TempDir tmp;
        std::filesystem::create_directories(tmp / "cache");
        int ready[2];
        REQUIRE(::pipe(ready) == 0);
        const pid_t run = ::fork();
        if (run == 0) {  // a run: holds the cache shared for 300 ms
            util::CacheLock held(tmp / "cache", /*exclusive=*/false);
            (void)::write(ready[1], "x", 1);
            ::usleep(300000);
            ::_exit(held.held() ? 0 : 1);
        }
        char byte = 0;
        REQUIRE(::read(ready[0], &byte, 1) == 1);
        const auto started = std::chrono::steady_clock::now();
        util::CacheLock exclusive(tmp / "cache", /*exclusive=*/true);
        const auto waited = std::chrono::steady_clock::now() - started;
        int status = 0;
        ::waitpid(run, &status, 0);
        ::close(ready[0]);
        ::close(ready[1]);
        CHECK(exclusive.held());
        CHECK(WIFEXITED(status));
        CHECK(WEXITSTATUS(status) == 0);
        // It waited for the run to let go (not a timing aim: the run sleeps 300 ms).
        CHECK(waited >= std::chrono::milliseconds(150));
    }

    TEST_CASE("cache du: sizes by kind; a missing cache is one error") {
        TempDir tmp;
        put_blob(tmp, "12345");
        tmp.write_file("cache/pages/x.json", "123");
        tmp.write_file("cache/tmp/part-1-x", "1");
        auto usage = cache::cache_usage(tmp / "cache");
        REQUIRE(usage.ok());
        REQUIRE(usage->size() == 7);
        CHECK((*usage)[0].kind == "blobs");
        CHECK((*usage)[0].bytes == 5);
        CHECK((*usage)[3].kind == "pages");
        CHECK((*usage)[3].bytes == 3);
        CHECK((*usage)[6].kind == "other");
        CHECK((*usage)[6].entries == 1);
        auto missing = cache::cache_usage(tmp / "nothing");
        REQUIRE_FALSE(missing.ok());
        CHECK(missing.error().text() == tmp / "nothing" + ": no such cache directory");
    }

    TEST_CASE("cache prune: a kept lock's wheels, base and scans stay, the rest goes") {
        TempDir tmp;
        const std::string cache = tmp / "cache";
        const std::string kept = put_blob(tmp, "kept wheel");
        const std::string gone = put_blob(tmp, "old wheel");
        const std::string base_sha = util::sha256_hex("base");
        const std::string kept_base = put_blob(tmp, "base");
        const std::string kept_sha = util::sha256_hex("kept wheel");
        const std::string old_sha = util::sha256_hex("old wheel");
        const std::string kept_scan = tmp.write_file(
            "cache/scans/v2/" + kept_sha.substr(0, 2) + "/" + kept_sha.substr(2) + ".json", "s");
        const std::string old_scan = tmp.write_file(
            "cache/scans/v2/" + old_sha.substr(0, 2) + "/" + old_sha.substr(2) + ".json", "s");
        const std::string plain = tmp.write_file("cache/bases/plain-" + base_sha + ".tar", "p");
        const std::string other_plain =
            tmp.write_file("cache/bases/plain-" + std::string(64, '0') + ".tar", "p");
        pylock::Lock lock;
        pylock::LockPackage package;
        pylock::LockWheel wheel;
        wheel.hashes["sha256"] = kept_sha;
        package.wheels.push_back(wheel);
        lock.packages.push_back(package);
        lock.rootlock.emplace();
        lock.rootlock->base.kind = "tarball";
        lock.rootlock->base.sha256 = base_sha;
        auto report = cache::prune_cache(cache, {lock});
        REQUIRE(report.ok());
        CHECK(std::filesystem::exists(kept));
        CHECK(std::filesystem::exists(kept_base));
        CHECK(std::filesystem::exists(kept_scan));
        CHECK(std::filesystem::exists(plain));
        CHECK_FALSE(std::filesystem::exists(gone));
        CHECK_FALSE(std::filesystem::exists(old_scan));
        CHECK_FALSE(std::filesystem::exists(other_plain));
        CHECK(report->removed_entries == 3);
    }
}

}  // namespace rootlock::testing::ROOTLOCK_UNIT_ID
