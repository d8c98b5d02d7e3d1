// The name pool: one id per distinct name, names read back exactly (long ones, empty ones, many
// of them past several growths of the table), and two threads interning at once agree.
#include <doctest/doctest.h>

#include <string>
#include <thread>
#include <vector>

#include "elf/name_pool.hpp"

namespace rootlock::testing {

TEST_SUITE("rootlock::elf") {
    TEST_CASE("a name pool gives one id per distinct name and reads names back") {
        elf::NamePool pool;
        CHECK(pool.view(elf::NamePool::k_empty).empty());
        CHECK(pool.intern("") == elf::NamePool::k_empty);
        const auto a = pool.intern("_ZN3c105ErrorC2Ev");
        const auto b = pool.intern("malloc");
        CHECK(a != b);
        CHECK(pool.intern("_ZN3c105ErrorC2Ev") == a);
        CHECK(pool.view(a) == "_ZN3c105ErrorC2Ev");
        CHECK(pool.view(b) == "malloc");
        CHECK(pool.find("malloc") == b);
        CHECK_FALSE(pool.find("free").has_value());
        CHECK(pool.size() == 3);
    }

    TEST_CASE("names longer than a varint byte or a chunk read back whole") {
        elf::NamePool pool;
        const std::string medium(300, 'm');                  // a two-byte length
        const std::string huge((size_t{1} << 20) + 5, 'h');  // more than a chunk: one of its own
        const auto m = pool.intern(medium);
        const auto h = pool.intern(huge);
        const auto after = pool.intern("after");
        CHECK(pool.view(m) == medium);
        CHECK(pool.view(h) == huge);
        CHECK(pool.view(after) == "after");
        CHECK(pool.intern(huge) == h);
    }

    TEST_CASE("a pool of a hundred thousand names keeps every id through its growth") {
        elf::NamePool pool;
        std::vector<std::string> names;
        std::vector<elf::NamePool::Id> ids;
        for (int i = 0; i < 100000; ++i) {
            names.push_back("_ZN5torch3jit" + std::to_string(i) + "Ev");
            ids.push_back(pool.intern(names.back()));
        }
        size_t same = 0;
        for (size_t i = 0; i < names.size(); ++i) {
            same += pool.intern(names[i]) == ids[i] && pool.view(ids[i]) == names[i] ? 1U : 0U;
        }
        CHECK(same == names.size());
        CHECK(pool.size() == names.size() + 1);  // and the empty name
    }

    TEST_CASE("interning a table at once gives the ids one at a time would") {
        elf::NamePool pool;
        const std::vector<std::string_view> names{"b", "a", "b", "", "c"};
        std::vector<elf::NamePool::Id> ids(names.size());
        pool.intern(names, ids);
        CHECK(ids[0] == ids[2]);
        CHECK(ids[3] == elf::NamePool::k_empty);
        CHECK(pool.intern("a") == ids[1]);
        CHECK(pool.intern("c") == ids[4]);
    }

    TEST_CASE("two threads interning the same names agree on their ids") {
        elf::NamePool pool;
        std::vector<std::string> names;
        for (int i = 0; i < 20000; ++i)
            names.push_back("name" + std::to_string(i));
        std::vector<elf::NamePool::Id> first(names.size());
        std::vector<elf::NamePool::Id> second(names.size());
        auto work = [&](std::vector<elf::NamePool::Id>& out, bool backwards) {
            for (size_t k = 0; k < names.size(); ++k) {
                const size_t i = backwards ? names.size() - 1 - k : k;
                out[i] = pool.intern(names[i]);
            }
        };
        std::thread other(work, std::ref(second), true);
        work(first, false);
        other.join();
        CHECK(first == second);
        CHECK(pool.size() == names.size() + 1);
    }
}

}  // namespace rootlock::testing
