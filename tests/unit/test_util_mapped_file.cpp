// MappedFile: a whole file's bytes, still readable after the file is replaced by rename or
// unlinked (what the frame cache relies on), and nothing for what cannot be mapped whole.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "support/temp_dir.hpp"
#include "util/mapped_file.hpp"

using rootlock::testing::TempDir;
using rootlock::util::MappedFile;

namespace {
std::string text_of(const MappedFile& file) {
    auto bytes = file.bytes();
    return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}
}  // namespace

TEST_SUITE("util") {
    TEST_CASE("a mapped file holds the file's bytes, also once it is replaced and unlinked") {
        TempDir dir;
        const std::string path = dir.write_file("frame", "first frame bytes");
        auto mapped = MappedFile::open(path);
        REQUIRE(mapped.has_value());
        CHECK(text_of(*mapped) == "first frame bytes");
        const std::string other = dir.write_file("other", "second");
        REQUIRE(std::rename(other.c_str(), path.c_str()) == 0);
        CHECK(text_of(*mapped) == "first frame bytes");
        REQUIRE(std::remove(path.c_str()) == 0);
        CHECK(text_of(*mapped) == "first frame bytes");
        MappedFile moved = std::move(*mapped);
        CHECK(text_of(moved) == "first frame bytes");
        CHECK(moved.path() == path);  // what errors name it by
        CHECK(mapped->bytes().empty());
    }

    TEST_CASE("a mapped file keeps its descriptor only when asked, and closes it once") {
        TempDir dir;
        const std::string path = dir.write_file("frame", "frame bytes");
        auto plain = MappedFile::open(path);
        REQUIRE(plain.has_value());
        CHECK(plain->descriptor() == -1);
        auto kept = MappedFile::open(path, /*keep_descriptor=*/true);
        REQUIRE(kept.has_value());
        const int fd = kept->descriptor();
        REQUIRE(fd >= 0);
        char first = 0;
        CHECK(::pread(fd, &first, 1, 0) == 1);  // the file itself, open for reading
        CHECK(first == 'f');
        MappedFile moved = std::move(*kept);
        CHECK(moved.descriptor() == fd);
        CHECK(kept->descriptor() == -1);
        moved = std::move(*plain);  // the kept descriptor is closed with its mapping
        CHECK(moved.descriptor() == -1);
        CHECK(::fcntl(fd, F_GETFD) == -1);
    }

    TEST_CASE("nothing is mapped for a missing or empty file, a directory or a symlink") {
        TempDir dir;
        CHECK_FALSE(MappedFile::open(dir / "missing").has_value());
        CHECK_FALSE(MappedFile::open(dir.write_file("empty", "")).has_value());
        CHECK_FALSE(MappedFile::open(dir.make_dirs("folder")).has_value());
        dir.write_file("target", "bytes");
        CHECK_FALSE(MappedFile::open(dir.make_symlink("link", "target")).has_value());
    }
}
