// The cache listing's memory of the image it was written for: trusted only for exactly the same
// keys and an untouched file; a listing it did not write (torn, edited) is never trusted.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <string>
#include <vector>

#include "image/cache_listing.hpp"
#include "support/temp_dir.hpp"
#include "util/atomic_file.hpp"
#include "util/sha256.hpp"

using rootlock::image::keep_listed;
using rootlock::image::listed_image;
using rootlock::image::ListedImage;
using rootlock::testing::TempDir;

namespace {
const std::string k_a(64, 'a');
const std::string k_b(64, 'b');
const std::string k_digest(64, 'c');
}  // namespace

TEST_SUITE("rootlock::image") {
    TEST_CASE("a listing with the image it built names it for the same keys only") {
        TempDir dir;
        const std::string image = dir.write_file("out/image.tar.zst", "image bytes");
        const std::vector<std::string> keys{k_a, "", k_b};
        const ListedImage built{k_digest, 42};
        keep_listed(dir / "frames", image, keys, {"zstd"}, &built);
        auto found = listed_image(dir / "frames", image, keys);
        REQUIRE(found.has_value());
        CHECK(found->sha256 == k_digest);
        CHECK(found->entries == 42);
        CHECK_FALSE(listed_image(dir / "frames", image, {k_a, "", k_a}).has_value());
        CHECK_FALSE(listed_image(dir / "frames", image, {k_a, ""}).has_value());
        CHECK_FALSE(listed_image(dir / "frames", image, {k_a, "", k_b, k_b}).has_value());
        CHECK_FALSE(listed_image(dir / "frames", dir / "out/other.tar.zst", keys).has_value());
    }

    TEST_CASE("a touched image or a listing without its build is not trusted") {
        TempDir dir;
        const std::string image = dir.write_file("image.tar.zst", "image bytes");
        const std::vector<std::string> keys{k_a};
        keep_listed(dir / "frames", image, keys, {"zstd"});  // no image recorded
        CHECK_FALSE(listed_image(dir / "frames", image, keys).has_value());
        const ListedImage built{k_digest, 1};
        keep_listed(dir / "frames", image, keys, {"zstd"}, &built);
        REQUIRE(listed_image(dir / "frames", image, keys).has_value());
        REQUIRE(::chmod(image.c_str(), 0600) == 0);  // moves ctime only
        CHECK_FALSE(listed_image(dir / "frames", image, keys).has_value());
    }

    TEST_CASE("malformed built lines are never trusted") {
        TempDir dir;
        const std::string image = dir.write_file("image.tar.zst", "image bytes");
        const std::vector<std::string> keys{k_a};
        const ListedImage built{k_digest, 7};
        keep_listed(dir / "frames", image, keys, {"zstd"}, &built);
        const std::string listing = dir / ("frames/images/" + rootlock::util::sha256_hex(image));
        auto text = rootlock::util::read_host_file(listing);
        REQUIRE(text.ok());
        const std::string good = *text;
        const std::string line = good.substr(k_a.size() + 1);
        const std::string stamp = line.substr(line.find(" 7 ") + 3);
        const std::vector<std::string> bad{
            k_a + "\n",                                               // no built line
            k_a + "\nbuilt\n",                                        // nothing after it
            k_a + "\nbuilt " + std::string(64, 'C') + " 7 " + stamp,  // not lowercase hex
            k_a + "\nbuilt " + k_digest + " x7 " + stamp,             // not a count
            k_a + "\nbuilt " + k_digest + "  " + stamp,               // an empty count
            k_a + "\nbuilt " + k_digest + " 7 " + stamp + "extra\n",  // more after the stamp
            k_a + "\nbuilt " + k_digest + " 7 " + stamp.substr(1),    // another stamp
            k_a + "\n" + line + line,                                 // two built lines
        };
        for (const auto& text_of_listing : bad) {
            CAPTURE(text_of_listing);
            REQUIRE(rootlock::util::write_file_atomically(listing, text_of_listing).ok());
            CHECK_FALSE(listed_image(dir / "frames", image, keys).has_value());
        }
        REQUIRE(rootlock::util::write_file_atomically(listing, good).ok());
        CHECK(listed_image(dir / "frames", image, keys).has_value());
    }
}
