// Sealed text: what is sealed unseals to itself; any change to a sealed file is found.
#include <doctest/doctest.h>

#include <string>

#include "util/sealed_text.hpp"

namespace rootlock::testing::ROOTLOCK_UNIT_ID {

TEST_SUITE("rootlock::util") {
    TEST_CASE("sealed text: round trip, and every one-byte change is refused") {
        for (const std::string& content : {std::string(), std::string("{\"a\":1}\n"),
                                           std::string(1000, 'x'), std::string("\0\n\xff", 3)}) {
            CAPTURE(content.size());
            const std::string sealed = util::seal_text(content);
            CHECK(util::looks_sealed(sealed));
            auto back = util::unseal_text(sealed);
            REQUIRE(back.has_value());
            CHECK(*back == content);
            for (size_t i = 0; i < sealed.size(); i += 7) {
                std::string changed = sealed;
                changed[i] = static_cast<char>(changed[i] ^ 0x04);
                CAPTURE(i);
                CHECK_FALSE(util::unseal_text(changed).has_value());
            }
            CHECK_FALSE(util::unseal_text(sealed + "x").has_value());
            if (!content.empty())
                CHECK_FALSE(util::unseal_text(sealed.substr(0, sealed.size() - 1)).has_value());
        }
    }

    TEST_CASE("sealed text: malformed headers are not sealed text") {
        const std::string cases[] = {
            "",
            "{\"version\":1}",
            "rootlock-sealed sha256:",
            "rootlock-sealed sha256:" + std::string(64, '0'),
            "rootlock-sealed sha256:" + std::string(64, '0') + "x",
            "rootlock-sealed sha256:" + std::string(63, '0') + "\n",
            "rootlock-sealed sha256:" + std::string(64, 'G') + "\n",
        };
        for (const auto& text : cases) {
            CAPTURE(text);
            CHECK_FALSE(util::unseal_text(text).has_value());
        }
        CHECK_FALSE(util::looks_sealed("{\"version\":1}"));
    }
}

}  // namespace rootlock::testing::ROOTLOCK_UNIT_ID
