// Untrusted text in one-line messages (util/quote.hpp), and the location escaping every Error
// gets from make_error.
#include <doctest/doctest.h>

#include <string>

#include "util/quote.hpp"
#include "util/result.hpp"

using namespace rootlock::util;

TEST_SUITE("rootlock::util") {
    TEST_CASE("quote escapes quotes, backslashes and control bytes, and nothing else") {
        CHECK(quote("plain") == "\"plain\"");
        CHECK(quote("a\"b\\c") == "\"a\\\"b\\\\c\"");
        CHECK(quote(std::string("x\0y\n\x1b[31m\x7f", 10)) == "\"x\\x00y\\x0a\\x1b[31m\\x7f\"");
        CHECK(quote("caf\xc3\xa9 \xff") == "\"caf\xc3\xa9 \xff\"");  // bytes >= 0x80 as they are
        CHECK(quote("") == "\"\"");
    }

    TEST_CASE("quote_prefix cuts long text inside the quotes") {
        CHECK(quote_prefix("abcdef", 6) == "\"abcdef\"");
        CHECK(quote_prefix("abcdefg", 3) == "\"abc...\"");
        CHECK(quote_prefix("a\nbcdef", 2) == "\"a\\x0a...\"");
    }

    TEST_CASE("printable escapes control bytes only; is_one_line finds them") {
        CHECK(printable("it's \"x\"") == "it's \"x\"");
        CHECK(printable("a\tb\r\n") == "a\\x09b\\x0d\\x0a");
        CHECK(is_one_line("a b \"c\" \xff"));
        CHECK_FALSE(is_one_line("a\nb"));
        CHECK_FALSE(is_one_line(std::string("a\0b", 3)));
        CHECK(is_one_line(printable(std::string("\x01\x02\n", 3))));
    }

    TEST_CASE("an error's location is always one line; its message is the caller's") {
        const auto error = make_error("wheel\n.whl", "two\nlines on purpose");
        CHECK(error.where == "wheel\\x0a.whl");
        CHECK(error.message == "two\nlines on purpose");
        CHECK(make_network_error("https://h/\x1b", "refused").text() == "https://h/\\x1b: refused");
    }
}
