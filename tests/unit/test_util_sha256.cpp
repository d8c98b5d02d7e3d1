// SHA-256 helpers: known digests (FIPS 180-2 examples), incremental updates equal one-shot ones,
// and the base64url spelling RECORD files use, checked against a digest computed by hand.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "support/temp_dir.hpp"
#include "util/sha256.hpp"

using rootlock::util::Sha256;
using rootlock::util::sha256_hex;

TEST_SUITE("util") {
    TEST_CASE("sha256 gives the published digests") {
        CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
        CHECK(sha256_hex("abc") ==
              "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    }

    TEST_CASE("sha256 updated in pieces equals one call, and digest() leaves it open") {
        Sha256 hasher;
        hasher.update("a");
        CHECK(hasher.hex_digest() == sha256_hex("a"));
        hasher.update("bc");
        CHECK(hasher.hex_digest() == sha256_hex("abc"));
    }

    TEST_CASE("sha256 base64url has no padding, as RECORD writes it") {
        Sha256 hasher;
        CHECK(Sha256::to_base64url(hasher.digest()) ==
              "47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU");
    }

    TEST_CASE("sha256_file hashes a file and names an unreadable one") {
        rootlock::testing::TempDir dir;
        std::string path = dir.path() + "/f";
        std::ofstream(path) << "abc";
        auto digest = rootlock::util::sha256_file(path);
        REQUIRE(digest.ok());
        CHECK(Sha256::to_hex(*digest) == sha256_hex("abc"));
        auto missing = rootlock::util::sha256_file(dir.path() + "/none");
        REQUIRE_FALSE(missing.ok());
        CHECK(missing.error().text() == dir.path() + "/none: No such file or directory");
    }

    TEST_CASE("update_from_file hashes the first SIZE bytes of an open file, in reads") {
        rootlock::testing::TempDir dir;
        const std::string path = dir.path() + "/frame";
        // Larger than two of its reads, and not a multiple of one.
        std::string content((size_t{600} << 10) + 5, '\0');
        for (size_t i = 0; i < content.size(); ++i)
            content[i] = static_cast<char>((i * 2654435761U) >> 13);
        std::ofstream(path, std::ios::binary) << content;
        const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        REQUIRE(fd >= 0);
        for (size_t size :
             {content.size(), size_t{0}, size_t{1}, size_t{256} << 10, (size_t{256} << 10) + 1}) {
            CAPTURE(size);
            Sha256 hasher;
            hasher.update("before ");
            REQUIRE(hasher.update_from_file(fd, size, "frame").ok());
            hasher.update(" after");
            CHECK(hasher.hex_digest() ==
                  sha256_hex("before " + content.substr(0, size) + " after"));
        }
        Sha256 longer;
        auto past = longer.update_from_file(fd, content.size() + 1, "frame");
        REQUIRE_FALSE(past.ok());
        CHECK(past.error().text() ==
              "frame: ends before " + std::to_string(content.size() + 1) + " bytes");
        ::close(fd);
        const int directory = ::open(dir.path().c_str(), O_RDONLY | O_CLOEXEC);
        REQUIRE(directory >= 0);
        Sha256 hasher;
        auto unreadable = hasher.update_from_file(directory, 10, "cache/frames/ab");
        REQUIRE_FALSE(unreadable.ok());
        CHECK(unreadable.error().text() == "cache/frames/ab: Is a directory");
        ::close(directory);
    }

    TEST_CASE("is_sha256_hex accepts only 64 lowercase hex digits") {
        CHECK(rootlock::util::is_sha256_hex(sha256_hex("")));
        CHECK_FALSE(rootlock::util::is_sha256_hex(
            "E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855"));
        CHECK_FALSE(rootlock::util::is_sha256_hex("abc"));
    }
}
