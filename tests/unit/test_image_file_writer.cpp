// Tests for the image's file writer: the same bytes whatever the write sizes, past the page
// cache on a filesystem that takes O_DIRECT, and through it where direct writes cannot be used
// (a device, an unaligned offset, O_APPEND).
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "image/file_writer.hpp"
#include "support/temp_dir.hpp"

namespace ROOTLOCK_UNIT_ID {

using namespace rootlock;
using namespace rootlock::image;
using rootlock::testing::TempDir;

namespace {

std::string read_host(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::span<const std::byte> bytes_of(const std::string& text) {
    return std::as_bytes(std::span(text.data(), text.size()));
}

// Whether the filesystem holding `folder` opens files with O_DIRECT at all.
bool takes_direct_writes(const std::string& folder) {
    const std::string probe = folder + "/probe";
    const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_DIRECT | O_CLOEXEC, 0644);
    if (fd >= 0)
        ::close(fd);
    ::unlink(probe.c_str());
    return fd >= 0;
}

// How many of the file's pages are in the page cache.
size_t resident_pages(const std::string& path, size_t size) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    REQUIRE(fd >= 0);
    void* map = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
    ::close(fd);
    REQUIRE(map != MAP_FAILED);
    const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
    std::vector<unsigned char> pages((size + page - 1) / page);
    REQUIRE(::mincore(map, size, pages.data()) == 0);
    ::munmap(map, size);
    size_t resident = 0;
    for (unsigned char flags : pages)
        resident += flags & 1U;
    return resident;
}

std::string pattern(size_t size, size_t seed) {
    std::string text(size, '\0');
    for (size_t k = 0; k < size; ++k)
        text[k] = static_cast<char>((k * 131 + seed * 7 + k / 4099) & 0xff);
    return text;
}

}  // namespace

TEST_SUITE("rootlock::image") {
    TEST_CASE("the file writer writes every byte in order, whole chunks past the page cache") {
        TempDir tmp;
        const std::string path = tmp / "image";
        const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        REQUIRE(fd >= 0);
        std::string expected;
        {
            FileWriter writer(fd, path);
            CHECK(writer.direct() == takes_direct_writes(tmp.path()));
            // Around the chunk's size and the alignment, and one write of several chunks.
            const std::vector<size_t> sizes = {
                1,    FileWriter::k_alignment - 1,  FileWriter::k_chunk,
                0,    3 * FileWriter::k_chunk + 17, FileWriter::k_chunk - 18,
                12345};
            for (size_t i = 0; i < sizes.size(); ++i) {
                const std::string block = pattern(sizes[i], i);
                REQUIRE(writer.write(bytes_of(block)).ok());
                expected += block;
            }
            REQUIRE(writer.flush().ok());
            CHECK_FALSE(writer.direct());  // the tail went through the cache
        }
        REQUIRE(::close(fd) == 0);
        if (takes_direct_writes(tmp.path())) {
            // Five whole chunks were written directly; only the tail's pages can be cached.
            const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
            CHECK(resident_pages(path, expected.size()) <=
                  (expected.size() - 5 * FileWriter::k_chunk) / page + 1);
        }
        const std::string written = read_host(path);
        CHECK(written.size() == expected.size());
        CHECK(written == expected);
    }

    TEST_CASE("the file writer writes through the cache where direct writes cannot be used") {
        TempDir tmp;
        const std::string text = pattern(FileWriter::k_chunk + 5, 1);
        SUBCASE("a device") {
            const int fd = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
            REQUIRE(fd >= 0);
            FileWriter writer(fd, "/dev/null");
            CHECK_FALSE(writer.direct());
            CHECK(writer.write(bytes_of(text)).ok());
            CHECK(writer.flush().ok());
            ::close(fd);
        }
        SUBCASE("an unaligned offset, or O_APPEND") {
            const std::string path = tmp / "image";
            for (int flags : {O_WRONLY, O_WRONLY | O_APPEND}) {
                const int fd = ::open(path.c_str(), flags | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
                REQUIRE(fd >= 0);
                if ((flags & O_APPEND) == 0)
                    REQUIRE(::write(fd, "x", 1) == 1);
                {
                    FileWriter writer(fd, path);
                    CHECK_FALSE(writer.direct());
                    CHECK(writer.write(bytes_of(text)).ok());
                    CHECK(writer.flush().ok());
                }
                ::close(fd);
                CHECK(read_host(path) == ((flags & O_APPEND) == 0 ? "x" : "") + text);
            }
        }
    }

    TEST_CASE("clone: another file's blocks shared where the filesystem can, else refused") {
        // Shared on XFS or btrfs, refused elsewhere (ext4, tmpfs): the caller writes the same
        // bytes when refused, so the file is the same either way. tests/e2e's reflink cases
        // see the blocks shared.
        TempDir tmp;
        const std::string source_path = tmp / "frame";
        const std::string frame = pattern(2 * FileWriter::k_alignment, 3);
        std::ofstream(source_path, std::ios::binary) << frame;
        const int source = ::open(source_path.c_str(), O_RDONLY | O_CLOEXEC);
        REQUIRE(source >= 0);
        const std::string path = tmp / "image";
        const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        REQUIRE(fd >= 0);
        const std::string head = pattern(FileWriter::k_alignment, 1);
        const std::string tail = pattern(100, 2);
        bool shared = false;
        {
            FileWriter writer(fd, path);
            REQUIRE(writer.write(bytes_of(head)).ok());
            // Never where the image's end or the length is not whole blocks, nor without a file.
            CHECK_FALSE(*writer.clone(source, frame.size() - 1));
            CHECK_FALSE(*writer.clone(-1, frame.size()));
            auto cloned = writer.clone(source, frame.size());
            REQUIRE(cloned.ok());
            shared = *cloned;
            if (!shared)
                REQUIRE(writer.write(bytes_of(frame)).ok());
            CHECK(writer.cloned() == (shared ? frame.size() : 0));
            REQUIRE(writer.write(bytes_of(tail)).ok());
            CHECK_FALSE(*writer.clone(source, frame.size()));  // the end is not aligned now
            REQUIRE(writer.flush().ok());
        }
        ::close(fd);
        ::close(source);
        CHECK(read_host(path) == head + frame + tail);
    }

    TEST_CASE("a full disk is reported with its reason") {
        const int fd = ::open("/dev/full", O_WRONLY | O_CLOEXEC);
        REQUIRE(fd >= 0);
        FileWriter writer(fd, "/dev/full");
        const auto written = writer.write(bytes_of("a few bytes"));
        REQUIRE_FALSE(written.ok());
        CHECK(written.error().text() == "/dev/full: no space left on device");
        ::close(fd);
    }
}

}  // namespace ROOTLOCK_UNIT_ID
