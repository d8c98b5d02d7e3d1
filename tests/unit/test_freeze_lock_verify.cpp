// Tests for compare_with_lock: a live environment against its lock, one case per kind of
// mismatch and the clean case.
#include <doctest/doctest.h>

#include "freeze/lock_verify.hpp"

using namespace rootlock;

namespace {

pylock::LockPackage package(std::string name, std::string version) {
    pylock::LockPackage p;
    p.name = std::move(name);
    p.version = std::move(version);
    return p;
}

}  // namespace

TEST_SUITE("rootlock::freeze") {
    TEST_CASE("an environment that is what its lock says matches, 1.0 and 1.0.0 alike") {
        freeze::FreezeResult live;
        live.lock.packages = {package("numpy", "2.2.6"), package("six", "1.0")};
        pylock::Lock lock;
        lock.packages = {package("six", "1.0.0"), package("numpy", "2.2.6")};
        CHECK(freeze::compare_with_lock(live, lock).empty());
    }

    TEST_CASE("missing, extra, another version and damaged files are each named") {
        freeze::FreezeResult live;
        live.lock.packages = {package("numpy", "2.1.0"), package("extra-pkg", "0.1"),
                              package("torch", "2.8.0+cu128")};
        live.problems = {{"torch", "/opt/venv/lib/python3.11/site-packages/torch/lib/libc10.so",
                          "modified (sha256 differs from RECORD)"}};
        pylock::Lock lock;
        lock.packages = {package("numpy", "2.2.6"), package("torch", "2.8.0+cu128"),
                         package("triton", "3.4.0")};
        const std::vector<freeze::LockMismatch> expected = {
            {"extra-pkg", "extra", "0.1 installed, not in the lock"},
            {"numpy", "version", "installed 2.1.0, locked 2.2.6"},
            {"torch", "damaged",
             "/opt/venv/lib/python3.11/site-packages/torch/lib/libc10.so: modified (sha256 "
             "differs from RECORD)"},
            {"triton", "missing", "locked 3.4.0, not installed"},
        };
        CHECK(freeze::compare_with_lock(live, lock) == expected);
    }
}
