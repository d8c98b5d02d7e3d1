// Tests for the OCI layer cache: a stored layer comes back at the asked path with its
// descriptor, a changed or half-recorded one does not, and unused layers are pruned.
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <string>

#include "image/layer_cache.hpp"
#include "support/host.hpp"
#include "support/temp_dir.hpp"
#include "util/cache_damage.hpp"

using namespace rootlock::image;
namespace util = rootlock::util;
using rootlock::testing::files_under;
using rootlock::testing::read_host_text;
using rootlock::testing::TempDir;

namespace {

const std::string k_key(64, 'a');
const std::string k_other(64, 'b');

CachedLayer layer_of(const std::string& bytes) {
    return CachedLayer{"sha256:" + std::string(64, '1'), bytes.size(),
                       "sha256:" + std::string(64, '2')};
}

}  // namespace

TEST_SUITE("rootlock::image") {
    TEST_CASE("layer cache: a stored layer comes back where asked, with its descriptor") {
        TempDir tmp;
        LayerCache cache(tmp / "cache");
        const std::string bytes = "compressed layer bytes";
        const std::string written = tmp.write_file("out/layer-0", bytes);
        CHECK_FALSE(cache.take(k_key, tmp / "out/none")->has_value());
        cache.store(k_key, written, layer_of(bytes));
        ::unlink(written.c_str());  // the build moves or deletes its layer files
        auto taken = cache.take(k_key, tmp / "out/layer-1");
        REQUIRE(taken.ok());
        REQUIRE(taken->has_value());
        CHECK((*taken)->digest == layer_of(bytes).digest);
        CHECK((*taken)->size == bytes.size());
        CHECK((*taken)->diff_id == layer_of(bytes).diff_id);
        CHECK(read_host_text(tmp / "out/layer-1") == bytes);
        CHECK_FALSE(cache.take(k_other, tmp / "out/layer-2")->has_value());
    }

    TEST_CASE("layer cache: a blob changed since it was stored, or its record torn, is damaged") {
        TempDir tmp;
        LayerCache cache(tmp / "cache");
        (void)util::take_cache_damage();
        const std::string bytes = "compressed layer bytes";
        cache.store(k_key, tmp.write_file("layer", bytes), layer_of(bytes));
        // The same size, other bytes, written later: the recorded mtime no longer matches.
        const std::string blob = tmp / ("cache/layers/blobs/aa/" + k_key);
        REQUIRE(std::filesystem::exists(blob));
        ::usleep(20000);
        tmp.write_file("cache/layers/blobs/aa/" + k_key + ".x", std::string(bytes.size(), 'x'));
        std::filesystem::rename(blob + ".x", blob);
        // Offline: refused, named, and left in place for the user to see.
        LayerCache offline(tmp / "cache");
        offline.set_offline(true);
        auto refused = offline.take(k_key, tmp / "taken");
        REQUIRE_FALSE(refused.ok());
        CHECK(refused.error().kind == util::ErrorKind::integrity);
        CHECK(refused.error().where == blob);
        CHECK(std::filesystem::exists(blob));
        // Online: removed (record and blob), reported once, and absent.
        CHECK_FALSE(cache.take(k_key, tmp / "taken")->has_value());
        CHECK_FALSE(std::filesystem::exists(tmp / "taken"));
        CHECK_FALSE(std::filesystem::exists(blob));
        auto damage = util::take_cache_damage();
        REQUIRE(damage.size() == 1);
        CHECK(damage[0].find(blob + ": damaged") == 0);

        cache.store(k_other, tmp.write_file("layer2", bytes), layer_of(bytes));
        tmp.write_file("cache/layers/meta/bb/" + k_other, "sha256:1 22");  // torn
        CHECK_FALSE(cache.take(k_other, tmp / "taken")->has_value());
        CHECK(util::take_cache_damage().size() == 1);
    }

    TEST_CASE("layer cache: layers no recorded image uses are deleted") {
        TempDir tmp;
        LayerCache cache(tmp / "cache");
        cache.store(k_key, tmp.write_file("a", "A"), layer_of("A"));
        cache.store(k_other, tmp.write_file("b", "B"), layer_of("B"));
        CHECK(files_under(tmp / "cache/layers/blobs") == 2);
        cache.keep_only_used(tmp / "image.oci.tar", {k_key});
        CHECK(files_under(tmp / "cache/layers/blobs") == 1);
        CHECK(files_under(tmp / "cache/layers/meta") == 1);
        CHECK(cache.take(k_key, tmp / "again")->has_value());
    }
}
