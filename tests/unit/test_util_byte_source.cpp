// FileSource's prefetch: the start of a file read once and served from memory, every other read
// from the file, with the same bounds and errors either way.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "support/temp_dir.hpp"
#include "util/byte_source.hpp"

using rootlock::testing::TempDir;
using rootlock::util::FileSource;

namespace {

std::string pattern(size_t size) {
    std::string text(size, '\0');
    for (size_t k = 0; k < size; ++k)
        text[k] = static_cast<char>('a' + (k * 7 + k / 13) % 26);
    return text;
}

std::string read_at(const FileSource& source, uint64_t offset, size_t length) {
    std::vector<std::byte> out(length);
    auto status = source.read_at(offset, out);
    if (!status.ok())
        return "error: " + status.error().text();
    return {reinterpret_cast<const char*>(out.data()), out.size()};
}

std::unique_ptr<FileSource> adopted(const std::string& path, size_t prefetch) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    REQUIRE(fd >= 0);
    auto source = FileSource::adopt(fd, "obj", prefetch);
    REQUIRE(source.ok());
    return std::move(source).value();
}

}  // namespace

TEST_SUITE("util") {
    TEST_CASE("a prefetched start is served from memory, the rest from the file") {
        TempDir dir;
        const std::string text = pattern(10000);
        const std::string path = dir.write_file("lib.so", text);
        auto source = adopted(path, 4096);
        REQUIRE(source->size() == text.size());
        REQUIRE(source->head().size() == 4096);
        // Changed on disk in place: what the prefetch holds is still the old bytes, and only
        // the reads past it see the new ones. (A probe reads a file at one moment; this shows
        // which reads the prefetch answered.)
        const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
        REQUIRE(fd >= 0);
        const std::string changed(text.size(), 'Z');
        REQUIRE(::pwrite(fd, changed.data(), changed.size(), 0) ==
                static_cast<ssize_t>(changed.size()));
        ::close(fd);
        CHECK(read_at(*source, 0, 64) == text.substr(0, 64));
        CHECK(read_at(*source, 4000, 96) == text.substr(4000, 96));  // ends exactly at the head
        CHECK(read_at(*source, 4000, 97) == std::string(97, 'Z'));   // one byte past: the file
        CHECK(read_at(*source, 9000, 1000) == std::string(1000, 'Z'));
        // Bounds are the file's, whatever was prefetched.
        CHECK(read_at(*source, 9999, 2) ==
              "error: obj@0x270f: read of 2 bytes runs past the end of the file (10000 bytes)");
    }

    TEST_CASE("a prefetch larger than the file holds the whole file, and none holds nothing") {
        TempDir dir;
        const std::string text = pattern(300);
        const std::string path = dir.write_file("small.so", text);
        auto whole = adopted(path, 65536);
        CHECK(whole->head().size() == 300);
        CHECK(read_at(*whole, 0, 300) == text);
        auto none = adopted(path, 0);
        CHECK(none->head().empty());
        CHECK(read_at(*none, 10, 20) == text.substr(10, 20));
        auto empty = adopted(dir.write_file("empty", ""), 4096);
        CHECK(empty->head().empty());
        CHECK(read_at(*empty, 0, 0).empty());
    }
}
