// Unit tests for the Debian base's pure parts: what a failing mmdebstrap run is shown as (its
// E: lines, the fetch failures behind them), and the apt sources an image gets from its lock.
#include <doctest/doctest.h>

#include "fetch/debian_base.hpp"

using namespace rootlock;

TEST_SUITE("rootlock::fetch") {
    TEST_CASE("a failing mmdebstrap shows apt's E: lines and the fetch failure behind them") {
        const std::string output =
            "I: automatically chosen mode: root\n"
            "W: Failed to fetch http://deb.example/debian/dists/bookworm/InRelease  Temporary "
            "failure resolving 'deb.example'\n"
            "W: Some index files failed to download. They have been ignored\n"
            "E: apt-get update --error-on=any failed\n"
            "E: mmdebstrap failed to run\n";
        CHECK(fetch::apt_complaints(output) ==
              "  W: Failed to fetch http://deb.example/debian/dists/bookworm/InRelease  "
              "Temporary failure resolving 'deb.example'\n"
              "  E: apt-get update --error-on=any failed\n"
              "  E: mmdebstrap failed to run");
    }

    TEST_CASE("without E: lines the W: lines are shown, and without either the last line") {
        CHECK(fetch::apt_complaints("I: x\nW: one\nW: two\n") == "  W: one\n  W: two");
        CHECK(fetch::apt_complaints("I: x\nsomething broke\n") == "  something broke");
    }

    TEST_CASE("the image's apt sources name the lock's archives, signed-by for their own keys") {
        pylock::LockBase base;
        base.archives = {
            {"debian", "http://deb.debian.org/debian", "bookworm", {"main"}, "1", "", "", ""},
            {"vendor",
             "https://apt.example/debian",
             "stable",
             {"main", "extra"},
             "2",
             "",
             "keys/vendor.gpg",
             std::string(64, 'a')}};
        CHECK(fetch::apt_sources(base) ==
              "# Written by rootlock from the lock's archives.\n"
              "deb http://deb.debian.org/debian bookworm main\n"
              "deb [signed-by=/etc/apt/keyrings/rootlock-vendor.gpg] https://apt.example/debian "
              "stable main extra\n");
    }
}
