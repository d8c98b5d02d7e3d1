// Tests for the image's output sink: the bytes and digest of what was queued, a full disk
// (/dev/full) reported once with its reason, and a sink dropped unfinished.
#include <doctest/doctest.h>

#include <fcntl.h>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "image/output_sink.hpp"
#include "support/temp_dir.hpp"
#include "util/sha256.hpp"

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

int open_for_writing(const std::string& path) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    REQUIRE(fd >= 0);
    return fd;
}

}  // namespace

TEST_SUITE("rootlock::image") {
    TEST_CASE("the sink writes every block in order and hashes exactly those bytes") {
        TempDir tmp;
        const std::string path = tmp / "out";
        OutputSink sink(open_for_writing(path), path);
        std::string expected;
        // Small blocks, blocks around the queue's bound and one larger than it.
        const std::vector<size_t> sizes = {
            1,    0, 4096, OutputSink::k_max_queued - 1, 3, 1U << 20, OutputSink::k_max_queued + 17,
            65536};
        for (size_t i = 0; i < sizes.size(); ++i) {
            std::string block(sizes[i], '\0');
            for (size_t k = 0; k < block.size(); ++k)
                block[k] = static_cast<char>((k * 131 + i * 7) & 0xff);
            REQUIRE(sink.write(bytes_of(block)).ok());
            expected += block;
        }
        auto digest = sink.finish();
        REQUIRE(digest.ok());
        const std::string written = read_host(path);
        CHECK(written.size() == expected.size());
        CHECK(written == expected);
        CHECK(util::Sha256::to_hex(*digest) == util::sha256_hex(expected));
        CHECK(sink.finish().error().text() == path + ": finished twice (a bug)");
        CHECK(sink.write(bytes_of("x")).error().text() == path + ": written after the end (a bug)");
    }

    TEST_CASE("a mapped block that keeps its descriptor is cloned or written, the same bytes") {
        TempDir tmp;
        // Several of the hashing thread's reads of the frame's file (it reads, not maps, them).
        std::string frame(size_t{3} << 18, '\0');
        for (size_t i = 0; i < frame.size(); ++i)
            frame[i] = static_cast<char>((i * 31) >> 9);
        std::ofstream(tmp / "frame", std::ios::binary) << frame;
        const std::string head(4096, 'h');
        const std::string path = tmp / "image";
        OutputSink sink(open_for_writing(path), path);
        REQUIRE(sink.write(bytes_of(head)).ok());
        auto mapped = util::MappedFile::open(tmp / "frame", /*keep_descriptor=*/true);
        REQUIRE(mapped.has_value());
        CHECK(mapped->descriptor() >= 0);
        REQUIRE(sink.write(std::move(*mapped)).ok());
        REQUIRE(sink.write(bytes_of("end")).ok());
        auto digest = sink.finish();
        REQUIRE(digest.ok());
        CHECK(sink.cloned_blocks() <= 1);  // 1 on XFS or btrfs, 0 where blocks are not shared
        const std::string expected = head + frame + "end";
        CHECK(read_host(path) == expected);
        util::Sha256 hash;
        hash.update(expected);
        CHECK(*digest == hash.digest());
    }

    TEST_CASE("a full disk is reported by a later write or by finish, with its reason") {
        const int fd = ::open("/dev/full", O_WRONLY | O_CLOEXEC);
        REQUIRE(fd >= 0);
        OutputSink sink(fd, "/dev/full");
        const std::string block(1U << 20, 'z');
        std::optional<util::Error> error;
        // 64 MiB: four times the queue's bound, so some write must meet the thread's error.
        for (int i = 0; i < 64 && !error; ++i) {
            auto status = sink.write(bytes_of(block));
            if (!status.ok())
                error = status.error();
        }
        REQUIRE(error.has_value());
        CHECK(error->text() == "/dev/full: no space left on device");
        auto finished = sink.finish();
        REQUIRE_FALSE(finished.ok());
        CHECK(finished.error().text() == "/dev/full: no space left on device");
    }

    TEST_CASE("a small image on a full disk fails at finish") {
        const int fd = ::open("/dev/full", O_WRONLY | O_CLOEXEC);
        REQUIRE(fd >= 0);
        OutputSink sink(fd, "/dev/full");
        REQUIRE(sink.write(bytes_of("a few bytes")).ok());
        auto finished = sink.finish();
        REQUIRE_FALSE(finished.ok());
        CHECK(finished.error().text() == "/dev/full: no space left on device");
    }

    TEST_CASE("a sink dropped unfinished returns at once, whatever it still holds") {
        TempDir tmp;
        const std::string path = tmp / "out";
        {
            OutputSink sink(open_for_writing(path), path);
            const std::string block(1U << 20, 'q');
            for (int i = 0; i < 40; ++i)
                REQUIRE(sink.write(bytes_of(block)).ok());
        }
        // Whatever reached the file is a prefix of what was queued.
        const std::string written = read_host(path);
        CHECK(written.size() <= size_t{40} << 20);
        CHECK(written.find_first_not_of('q') == std::string::npos);
    }
}

}  // namespace ROOTLOCK_UNIT_ID
