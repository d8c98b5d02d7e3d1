// The temporaries of dead runs: removed by PID only once their process is gone.
#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "support/temp_dir.hpp"
#include "util/leftovers.hpp"

namespace rootlock::testing::ROOTLOCK_UNIT_ID {
namespace {

// The PID of a child that has exited and been reaped: no process has it now (until reused).
long dead_pid() {
    const pid_t child = ::fork();
    if (child == 0)
        ::_exit(0);
    int status = 0;
    ::waitpid(child, &status, 0);
    return child;
}

void touch(const std::string& path) {
    std::ofstream(path) << "x";
}

}  // namespace

TEST_SUITE("rootlock::util") {
    TEST_CASE("leftovers of dead processes are removed, a live one's and others are kept") {
        TempDir dir;
        const std::string dead = std::to_string(dead_pid());
        const std::string live = std::to_string(::getpid());
        using Names = std::vector<std::string>;
        const Names removed{"part-" + dead + "-a1b2c3", "part-" + dead,
                            "part-" + dead + ".layer-12"};
        const Names kept{"part-" + live + "-a1b2c3", "part-" + dead + "x", "part-abc",
                         "other-" + dead + "-a1", "part-"};
        for (const Names* names : {&removed, &kept}) {
            for (const std::string& name : *names)
                touch(dir / name);
        }
        std::filesystem::create_directory(dir / ("part-" + dead + "-dir"));
        CHECK(util::process_gone(std::stol(dead)));
        CHECK_FALSE(util::process_gone(::getpid()));
        CHECK_FALSE(util::process_gone(0));
        CHECK(util::remove_dead_leftovers(dir.path(), "part-") == 3);
        for (const std::string& name : removed)
            CHECK_FALSE(std::filesystem::exists(dir / name));
        for (const std::string& name : kept)
            CHECK(std::filesystem::exists(dir / name));
        CHECK(std::filesystem::exists(dir / ("part-" + dead + "-dir")));
        CHECK(util::remove_dead_leftovers(dir / "missing", "part-") == 0);
    }
}

}  // namespace rootlock::testing::ROOTLOCK_UNIT_ID
