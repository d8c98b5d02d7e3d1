// Tests for compare_with_lock: a live environment against its lock, one case per kind of
// mismatch and the clean case.
#include <doctest/doctest.h>

#include "lock/lock_verify.hpp"

using namespace rootlock::lock;

namespace {

LockPackage package(std::string name, std::string version) {
    LockPackage p;
    p.name = std::move(name);
    p.version = std::move(version);
    return p;
}

}  // namespace

TEST_SUITE("rootlock::lock") {
    TEST_CASE("an environment that is what its lock says matches, 1.0 and 1.0.0 alike") {
        FreezeResult live;
        live.lock.packages = {package("numpy", "2.2.6"), package("six", "1.0")};
        Lock lock;
        lock.packages = {package("six", "1.0.0"), package("numpy", "2.2.6")};
        CHECK(compare_with_lock(live, lock).empty());
    }

    TEST_CASE("missing, extra, another version and damaged files are each named") {
        FreezeResult live;
        live.lock.packages = {package("numpy", "2.1.0"), package("extra-pkg", "0.1"),
                              package("torch", "2.8.0+cu128")};
        live.problems = {{"torch", "/opt/venv/lib/python3.11/site-packages/torch/lib/libc10.so",
                          "modified (sha256 differs from RECORD)"}};
        Lock lock;
        lock.packages = {package("numpy", "2.2.6"), package("torch", "2.8.0+cu128"),
                         package("triton", "3.4.0")};
        const std::vector<LockMismatch> expected = {
            {"extra-pkg", "extra", "0.1 installed, not in the lock"},
            {"numpy", "version", "installed 2.1.0, locked 2.2.6"},
            {"torch", "damaged",
             "/opt/venv/lib/python3.11/site-packages/torch/lib/libc10.so: modified (sha256 "
             "differs from RECORD)"},
            {"triton", "missing", "locked 3.4.0, not installed"},
        };
        CHECK(compare_with_lock(live, lock) == expected);
    }
}
