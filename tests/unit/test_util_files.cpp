// Atomic writes and subprocesses: a write replaces the target whole and leaves no temporary file,
// a failed write leaves the old content, and a child's exit code and output come back.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <filesystem>

#include "support/temp_dir.hpp"
#include "util/atomic_file.hpp"
#include "util/subprocess.hpp"

using namespace rootlock;

TEST_SUITE("util") {
    TEST_CASE("write_file_atomically creates parents, replaces content, leaves nothing else") {
        testing::TempDir dir;
        const std::string path = dir / "a/b/lock.toml";
        REQUIRE(util::write_file_atomically(path, "one\n").ok());
        REQUIRE(util::write_file_atomically(path, "two\n").ok());
        auto text = util::read_host_file(path);
        REQUIRE(text.ok());
        CHECK(*text == "two\n");
        size_t entries = 0;
        for (const auto& entry : std::filesystem::directory_iterator(dir / "a/b")) {
            (void)entry;
            ++entries;
        }
        CHECK(entries == 1);
        struct stat info {};
        REQUIRE(::stat(path.c_str(), &info) == 0);
        CHECK((info.st_mode & 0777) == 0644);
    }

    TEST_CASE("write_file_atomically fails cleanly where a directory cannot be made") {
        testing::TempDir dir;
        dir.write_file("file", "x");
        auto result = util::write_file_atomically(dir / "file/lock.toml", "y");
        REQUIRE_FALSE(result.ok());
        CHECK(result.error().text() == dir / "file" + ": exists and is not a directory");
    }

    TEST_CASE("read_host_file names a missing file") {
        auto result = util::read_host_file("/nonexistent/x");
        REQUIRE_FALSE(result.ok());
        CHECK(result.error().text() == "/nonexistent/x: No such file or directory");
    }

    TEST_CASE("run_process returns the exit code and the output, with extra environment") {
        auto result =
            util::run_process({"sh", "-c", "echo out; echo err >&2; echo $ROOTLOCK_X; exit 3"},
                              {{"ROOTLOCK_X", "seen"}});
        REQUIRE(result.ok());
        CHECK(result->exit_code == 3);
        CHECK(result->output == "out\nerr\nseen\n");
        CHECK(util::last_line(result->output) == "seen");
    }

    TEST_CASE("run_process says when the program does not exist") {
        auto result = util::run_process({"rootlock-no-such-program"}, {});
        REQUIRE_FALSE(result.ok());
        CHECK(result.error().text() ==
              "rootlock-no-such-program: not found; install it with apt-get");
    }

    TEST_CASE("last_line skips trailing blank lines") {
        CHECK(util::last_line("a\nb\n\n  \n") == "b");
        CHECK(util::last_line("") == "");
        CHECK(util::last_line("only") == "only");
    }
}
