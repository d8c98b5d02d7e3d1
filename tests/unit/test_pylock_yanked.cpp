// [packages.tool.rootlock] yanked: a yanked wheel chosen for an exact pin is recorded with the
// index's reason (PEP 751 has no field for it); written canonically, read back in both of PEP
// 592's spellings, and a wrong type is one located error.
#include <doctest/doctest.h>

#include <string>

#include "pylock/pylock.hpp"

namespace ROOTLOCK_UNIT_ID {

using namespace rootlock;

namespace {

const std::string k_file = "pylock.yanked.toml";

pylock::Lock lock_with(std::optional<std::string> yanked) {
    pylock::Lock lock;
    pylock::LockPackage nccl;
    nccl.name = "nvidia-nccl-cu12";
    nccl.version = "2.27.3";
    pylock::LockWheel wheel;
    wheel.name = "nvidia_nccl_cu12-2.27.3-py3-none-manylinux_2_18_x86_64.whl";
    wheel.url = "https://files.example/" + wheel.name;
    wheel.hashes["sha256"] = std::string(64, 'a');
    nccl.wheels.push_back(wheel);
    nccl.rootlock = pylock::PackageRootlockData{{}, {}, false, {}, std::move(yanked), {}};
    lock.packages.push_back(nccl);
    return lock;
}

std::string tool_table(const std::string& text) {
    const auto start = text.find("[packages.tool.rootlock]");
    REQUIRE(start != std::string::npos);
    return text.substr(start);
}

std::string with_tool(const std::string& value) {
    return "lock-version = \"1.0\"\ncreated-by = \"x\"\n\n[[packages]]\nname = \"a\"\n\n"
           "[packages.tool.rootlock]\nyanked = " +
           value + "\n";
}

}  // namespace

TEST_SUITE("rootlock::pylock") {
    TEST_CASE("a yanked wheel is written with its reason, or as true without one") {
        CHECK(tool_table(pylock::write_pylock(lock_with("NCCL 2.27.3 hangs \"all_reduce\""))) ==
              "[packages.tool.rootlock]\nprovides = []\nneeds = []\nrequested = false\n"
              "yanked = \"NCCL 2.27.3 hangs \\\"all_reduce\\\"\"\n");
        CHECK(tool_table(pylock::write_pylock(lock_with("")))
                  .ends_with("requested = false\nyanked = true\n"));
        // Not yanked: no key at all, so every lock written before this field reads the same.
        CHECK(tool_table(pylock::write_pylock(lock_with(std::nullopt)))
                  .ends_with("requested = false\n"));
    }

    TEST_CASE("the yanked record reads back as written") {
        for (const auto& yanked : {std::optional<std::string>("bad build\nsee #1"),
                                   std::optional<std::string>(""), std::optional<std::string>()}) {
            const pylock::Lock lock = lock_with(yanked);
            auto read = pylock::read_pylock(pylock::write_pylock(lock), k_file);
            REQUIRE(read.ok());
            REQUIRE(read->packages.size() == 1);
            CHECK(read->packages[0].rootlock->yanked == yanked);
            CHECK(*read == pylock::canonicalize(lock));
        }
    }

    TEST_CASE("yanked = false reads as not yanked; another type is a located error") {
        auto no = pylock::read_pylock(with_tool("false"), k_file);
        REQUIRE(no.ok());
        CHECK_FALSE(no->packages[0].rootlock->yanked.has_value());
        auto wrong = pylock::read_pylock(with_tool("1"), k_file);
        REQUIRE_FALSE(wrong.ok());
        CHECK(wrong.error().text() == k_file +
                                          ":8:10: packages[0].tool.rootlock.yanked: expected a "
                                          "boolean or a string, found an integer");
    }
}

}  // namespace ROOTLOCK_UNIT_ID
