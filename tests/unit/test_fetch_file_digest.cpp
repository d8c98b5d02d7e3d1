// Files rootlock makes in its cache: used while their digest is the one recorded when they were
// made; made again (damage reported) when not; refused offline.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "fetch/file_digest.hpp"
#include "index/page_cache.hpp"
#include "support/temp_dir.hpp"
#include "util/cache_damage.hpp"
#include "util/sha256.hpp"

namespace rootlock::testing::ROOTLOCK_UNIT_ID {

TEST_SUITE("rootlock::fetch") {
    TEST_CASE("made files: whole, unrecorded, damaged, and damaged offline") {
        TempDir tmp;
        index::PageCache pages(tmp / "cache");
        const std::string path = tmp.write_file("cache/bases/plain-x.tar", "the base's bytes");
        (void)util::take_cache_damage();

        // Made by an earlier version (no record): removed for the caller to make again, quietly.
        auto unrecorded = fetch::check_made_file(path, pages, false);
        REQUIRE(unrecorded.ok());
        CHECK_FALSE(*unrecorded);
        CHECK_FALSE(std::filesystem::exists(path));
        CHECK(util::take_cache_damage().empty());

        tmp.write_file("cache/bases/plain-x.tar", "the base's bytes");
        REQUIRE(fetch::record_made_file(path, util::sha256_hex("the base's bytes")).ok());
        auto whole = fetch::check_made_file(path, pages, false);
        REQUIRE(whole.ok());
        CHECK(*whole);

        tmp.write_file("cache/bases/plain-x.tar", "the base's bytez");
        auto refused = fetch::check_made_file(path, pages, true);
        REQUIRE_FALSE(refused.ok());
        CHECK(refused.error().kind == util::ErrorKind::integrity);
        CHECK(refused.error().where == path);
        CHECK(std::filesystem::exists(path));

        auto damaged = fetch::check_made_file(path, pages, false);
        REQUIRE(damaged.ok());
        CHECK_FALSE(*damaged);
        CHECK_FALSE(std::filesystem::exists(path));
        CHECK_FALSE(std::filesystem::exists(path + ".sha256"));
        auto damage = util::take_cache_damage();
        REQUIRE(damage.size() == 1);
        CHECK(damage[0].find(path + ": damaged: its sha256 is ") == 0);

        auto absent = fetch::check_made_file(path, pages, false);
        REQUIRE(absent.ok());
        CHECK_FALSE(*absent);
    }

    TEST_CASE("remembered digests: a remembered one is not read again, a changed file is") {
        TempDir tmp;
        index::PageCache pages(tmp / "cache");
        const std::string path = tmp.write_file("big", "one");
        fetch::remember_sha256(path, std::string(64, 'a'), pages);
        auto remembered = fetch::remembered_sha256(path, pages);
        REQUIRE(remembered.ok());
        CHECK(*remembered == std::string(64, 'a'));  // taken from the memo, not the file
        tmp.write_file("big", "two");
        auto hashed = fetch::remembered_sha256(path, pages);
        REQUIRE(hashed.ok());
        CHECK(*hashed == util::sha256_hex("two"));
    }
}

}  // namespace rootlock::testing::ROOTLOCK_UNIT_ID
