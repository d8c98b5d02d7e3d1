// Unit tests for PEP 440 versions and specifiers: normalisation, the total order, exact error
// texts for malformed input, and every matching rule of SpecifierSet::contains.
#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

#include "python/pep440.hpp"

using rootlock::python::parse_specifiers;
using rootlock::python::parse_version;
using rootlock::python::to_string;
using rootlock::python::Version;

namespace {

Version v(const std::string& text) {
    auto parsed = parse_version(text);
    if (!parsed.ok())
        FAIL(text);
    return *parsed;
}

bool contains(const std::string& specifiers, const std::string& version, bool allow = false) {
    auto set = parse_specifiers(specifiers);
    if (!set.ok())
        FAIL(specifiers);
    return set->contains(v(version), allow);
}

}  // namespace

TEST_SUITE("rootlock::python") {
    TEST_CASE("versions are normalised the way PEP 440 spells them") {
        const std::vector<std::pair<std::string, std::string>> table = {
            {"1.0", "1.0"},
            {"  v1.0  ", "1.0"},
            {"V1.0", "1.0"},
            {"1.0.0", "1.0.0"},
            {"1!2.0", "1!2.0"},
            {"0!2.0", "2.0"},
            {"1.0a", "1.0a0"},
            {"1.0ALPHA1", "1.0a1"},
            {"1.0-beta.2", "1.0b2"},
            {"1.0c1", "1.0rc1"},
            {"1.0pre1", "1.0rc1"},
            {"1.0-preview_3", "1.0rc3"},
            {"1.0RC1", "1.0rc1"},
            {"1.0-1", "1.0.post1"},
            {"1.0_post", "1.0.post0"},
            {"1.0.rev4", "1.0.post4"},
            {"1.0r", "1.0.post0"},
            {"1.0.post1.dev2", "1.0.post1.dev2"},
            {"1.0-dev", "1.0.dev0"},
            {"1.0a.-1", "1.0a0.post1"},
            {"1.0a.", "1.0a0"},
            {"1.0+Ubuntu-1_2.X", "1.0+ubuntu.1.2.x"},
            {"2.8.0+cu128", "2.8.0+cu128"},
            {"1.0+007.abc", "1.0+7.abc"},
            {"9.10.2.21", "9.10.2.21"},
            {"01.002", "1.2"},
            {"1.0a1.post2.dev3+local.7", "1.0a1.post2.dev3+local.7"},
        };
        for (const auto& [text, normalised] : table) {
            auto parsed = parse_version(text);
            if (!parsed.ok())
                FAIL(text);
            CHECK_MESSAGE(to_string(*parsed) == normalised, text);
        }
    }

    TEST_CASE("malformed versions and specifiers give one located message each") {
        const std::vector<std::pair<std::string, std::string>> versions = {
            {"", "\"\":1: expected a version"},
            {"   ", "\"   \":4: expected a version"},
            {"2.8.0+", "\"2.8.0+\":7: expected a local version segment after '+'"},
            {"abc", "\"abc\":1: expected a release number"},
            {"v", "\"v\":2: expected a release number"},
            {"v 1.0", "\"v 1.0\":2: expected a release number"},
            {"1!", "\"1!\":3: expected a release number after '!'"},
            {"1.0+abc.", "\"1.0+abc.\":9: expected a local version segment after '.'"},
            {"1.0+abc..x", "\"1.0+abc..x\":9: expected a local version segment after '.'"},
            {"1.0-", "\"1.0-\":4: a version cannot end with '-'"},
            {"1.0.", "\"1.0.\":4: a version cannot end with '.'"},
            {"1.0 1", "\"1.0 1\":4: unexpected whitespace inside a version"},
            {"1.0foo", "\"1.0foo\":4: unexpected character 'f'"},
            {"1.0+abc!", "\"1.0+abc!\":8: unexpected character '!'"},
            {"1.*", "\"1.*\":2: unexpected character '.'"},
            {"1.0\x01", "\"1.0\\x01\":4: unexpected character '\\x01'"},
            {"99999999999999999999", "\"99999999999999999999\":1: number is too large"},
            {"1.0a1a2", "\"1.0a1a2\":6: unexpected character 'a'"},
            {"1.0.post1.post2", "\"1.0.post1.post2\":10: unexpected character '.'"},
            {"1..0", "\"1..0\":2: unexpected character '.'"},
            {"1.0+a+b", "\"1.0+a+b\":6: unexpected character '+'"},
            {std::string(70, '1') + "x",
             "\"" + std::string(60, '1') + "...\":1: number is too large"},
        };
        for (const auto& [text, message] : versions) {
            auto parsed = parse_version(text);
            REQUIRE_MESSAGE(!parsed.ok(), text);
            CHECK(parsed.error().text() == message);
        }
        const std::vector<std::pair<std::string, std::string>> specifiers = {
            {"1.0", "\"1.0\":1: expected an operator (~=, ==, !=, <=, >=, <, >, ===)"},
            {">=", "\">=\":3: expected a version after '>='"},
            {">=1.0,<", "\">=1.0,<\":8: expected a version after '<'"},
            {"===", "\"===\":4: expected a version after '==='"},
            {"~=1", "\"~=1\":3: '~=' needs a version with at least two release numbers"},
            {"~=1.0.*", "\"~=1.0.*\":3: a '.*' wildcard is only allowed after '==' or '!='"},
            {">=1.0.*", "\">=1.0.*\":3: a '.*' wildcard is only allowed after '==' or '!='"},
            {"<2.0+local", "\"<2.0+local\":2: '<' does not allow a local version"},
            {"~=1.0+local", "\"~=1.0+local\":3: '~=' does not allow a local version"},
            {"==1.0.dev1.*", "\"==1.0.dev1.*\":3: a '.*' wildcard may only follow release numbers"},
            {"==1.0rc1.*", "\"==1.0rc1.*\":3: a '.*' wildcard may only follow release numbers"},
            {"!=1.0.post1.*",
             "\"!=1.0.post1.*\":3: a '.*' wildcard may only follow release numbers"},
            {"==1.0+abc.*", "\"==1.0+abc.*\":3: a '.*' wildcard cannot follow a local version"},
            {"==1.0 .*", "\"==1.0 .*\":6: unexpected whitespace inside a version"},
            {"=== 1.0 x", "\"=== 1.0 x\":8: unexpected whitespace inside a version"},
            {">=1.0,=<2.0",
             "\">=1.0,=<2.0\":7: expected an operator (~=, ==, !=, <=, >=, <, >, ===)"},
            {">=1.0;<2", "\">=1.0;<2\":6: unexpected character ';'"},
            {">= 1.0 2.0", "\">= 1.0 2.0\":7: unexpected whitespace inside a version"},
            {"!=1.*.0", "\"!=1.*.0\":4: unexpected character '.'"},
            {"==2.8.0+", "\"==2.8.0+\":9: expected a local version segment after '+'"},
        };
        for (const auto& [text, message] : specifiers) {
            auto parsed = parse_specifiers(text);
            REQUIRE_MESSAGE(!parsed.ok(), text);
            CHECK(parsed.error().text() == message);
        }
    }

    TEST_CASE("versions sort dev before pre before final before local before post") {
        const std::vector<std::string> ascending = {
            "0.9",       "1.0.dev0",    "1.0.dev1",    "1.0a0.dev0",    "1.0a0",
            "1.0a1",     "1.0a1.post0", "1.0a2",       "1.0b1",         "1.0rc1.dev5",
            "1.0rc1",    "1.0",         "1.0+abc",     "1.0+abc.1",     "1.0+abd",
            "1.0+0",     "1.0+1.abc",   "1.0+2",       "1.0+10",        "1.0.post0.dev0",
            "1.0.post0", "1.0.post1",   "1.0.1a1",     "1.0.1",         "1.1",
            "2.8.0",     "2.8.0+cu126", "2.8.0+cu128", "2.8.0+cu128.1", "2.9.1+cu130",
            "12.8.93",   "1!0.1",       "1!2.0",
        };
        for (size_t i = 0; i < ascending.size(); ++i) {
            for (size_t j = 0; j < ascending.size(); ++j) {
                const Version a = v(ascending[i]);
                const Version b = v(ascending[j]);
                CHECK_MESSAGE((a < b) == (i < j), ascending[i], " < ", ascending[j]);
                CHECK_MESSAGE((a == b) == (i == j), ascending[i], " == ", ascending[j]);
            }
        }
    }

    TEST_CASE("trailing zeros and spellings compare equal") {
        CHECK(v("1.0") == v("1"));
        CHECK(v("1.0.0.0") == v("1"));
        CHECK(v("1.0alpha") == v("1.0a0"));
        CHECK(v("1.0-1") == v("1.0.post1"));
        CHECK(v("1.0+01") == v("1.0+1"));
        CHECK(v("1.0+a") != v("1.0"));
        CHECK(v("0!1.0") == v("1.0"));
    }

    TEST_CASE("public and base versions drop the local part and the suffixes") {
        const Version full = v("1!2.0rc1.post2.dev3+cu128");
        CHECK(to_string(full.public_version()) == "1!2.0rc1.post2.dev3");
        CHECK(to_string(full.base_version()) == "1!2.0");
        CHECK(full.is_prerelease());
        CHECK(full.is_postrelease());
        CHECK(full.is_devrelease());
        CHECK(v("1.0.dev1").is_prerelease());
        CHECK(v("1.0rc1").is_prerelease());
        CHECK_FALSE(v("1.0.post1").is_prerelease());
        CHECK_FALSE(v("2.8.0+cu128").is_prerelease());
    }

    TEST_CASE("specifier sets keep each clause and print them back") {
        auto set = parse_specifiers(" >= 2.8.0 , <3 ,, !=2.8.1.* , ===weird-1.0 ");
        REQUIRE(set.ok());
        REQUIRE(set->specifiers.size() == 4);
        CHECK(set->specifiers[0].op == ">=");
        CHECK(set->specifiers[0].version_text == "2.8.0");
        CHECK(set->specifiers[2].wildcard);
        CHECK(to_string(set->specifiers[2].version) == "2.8.1");
        CHECK_FALSE(set->specifiers[3].has_version);
        CHECK(to_string(*set) == ">=2.8.0,<3,!=2.8.1.*,===weird-1.0");
        auto empty = parse_specifiers("  ");
        REQUIRE(empty.ok());
        CHECK(empty->specifiers.empty());
        CHECK(empty->contains(v("1.0"), false));
        CHECK_FALSE(empty->contains(v("1.0rc1"), false));
        CHECK(empty->contains(v("1.0rc1"), true));
    }

    TEST_CASE("equality ignores the candidate's local version unless the specifier has one") {
        CHECK(contains("==2.8.0", "2.8.0+cu128"));
        CHECK(contains("==2.8", "2.8.0"));
        CHECK(contains("==2.8.0+cu128", "2.8.0+cu128"));
        CHECK_FALSE(contains("==2.8.0+cu128", "2.8.0+cu126"));
        CHECK_FALSE(contains("==2.8.0+cu128", "2.8.0"));
        CHECK_FALSE(contains("!=2.8.0", "2.8.0+cu128"));
        CHECK(contains("!=2.8.0+cu126", "2.8.0+cu128"));
        CHECK(contains("<=2.8.0", "2.8.0+cu128"));
        CHECK(contains(">=2.8.0", "2.8.0+cu128"));
    }

    TEST_CASE("wildcards match by prefix with the candidate padded with zeros") {
        CHECK(contains("==2.8.*", "2.8.0+cu128"));
        CHECK(contains("==2.8.*", "2.8"));
        CHECK(contains("==2.8.0.*", "2.8"));
        CHECK_FALSE(contains("==2.8.*", "2.9.0"));
        CHECK_FALSE(contains("==2.8.*", "2.80"));
        CHECK(contains("!=2.8.*", "2.9.1"));
        CHECK_FALSE(contains("!=2.8.*", "2.8.1"));
        CHECK(contains("==1!2.*", "1!2.5"));
        CHECK(contains("==1.0.*", "1rc1", true));
        CHECK(contains("==1.0.*", "1.post1"));
        CHECK_FALSE(contains("==2.*", "1!2.5"));
    }

    TEST_CASE("exclusive ordering leaves out post, pre and local releases of the bound") {
        CHECK_FALSE(contains(">2.8.0", "2.8.0.post1"));
        CHECK_FALSE(contains(">2.8.0", "2.8.0+cu128"));
        CHECK(contains(">2.8.0", "2.8.1"));
        CHECK(contains(">2.8.0.post1", "2.8.0.post2"));
        CHECK_FALSE(contains(">2.8.0.post1", "2.8.0.post1+cu128"));
        CHECK_FALSE(contains("<3.0", "3.0rc1", true));
        CHECK_FALSE(contains("<3.0", "3.0.dev1", true));
        CHECK(contains("<3.0", "2.9.9rc1", true));
        CHECK(contains("<3.0rc2", "3.0rc1", true));
        CHECK_FALSE(contains("<3.0", "3.0+local"));
        CHECK(contains("<3.0", "2.9+local"));
    }

    TEST_CASE("compatible release means at least V and the same prefix") {
        CHECK(contains("~=2.2", "2.9"));
        CHECK_FALSE(contains("~=2.2", "3.0"));
        CHECK(contains("~=1.4.5", "1.4.9"));
        CHECK_FALSE(contains("~=1.4.5", "1.5.0"));
        CHECK_FALSE(contains("~=1.4.5", "1.4.4"));
        CHECK(contains("~=2.2.post3", "2.3"));
        CHECK(contains("~=1.4.5a4", "1.4.5"));
        CHECK_FALSE(contains("~=1.4.5a4", "1.5.0"));
        CHECK(contains("~=12.8", "12.8.93+local"));
    }

    TEST_CASE("arbitrary equality compares the normalised text without case") {
        CHECK(contains("===2.8.0", "2.8.0"));
        CHECK_FALSE(contains("===2.8.0", "2.8"));
        CHECK_FALSE(contains("===2.8.0", "2.8.0+cu128"));
        CHECK(contains("===2.8.0+CU128", "2.8.0+cu128"));
        CHECK_FALSE(contains("===foobar", "1.0"));
    }

    TEST_CASE("pre-releases are excluded unless allowed or named by an inclusive clause") {
        CHECK_FALSE(contains(">=1.0", "2.0rc1"));
        CHECK(contains(">=1.0", "2.0rc1", true));
        CHECK(contains(">=1.0rc1", "2.0rc1"));
        CHECK(contains(">=1.0,!=1.5rc1", "2.0rc1") == false);
        CHECK(contains("<=2.0,>=1.0.dev0", "1.5.dev3"));
        CHECK(contains("==2.0rc1", "2.0rc1"));
        CHECK(contains("~=2.0rc1", "2.1rc1"));
        CHECK(contains("===2.0rc1", "2.0rc1"));
        CHECK_FALSE(contains(">1.0rc1", "2.0rc1"));
        CHECK_FALSE(contains("<3.0rc1", "2.0rc1"));
        CHECK_FALSE(contains("!=3.0rc1", "2.0rc1"));
        CHECK(contains(">=1.0", "2.0.post1"));
    }
}
