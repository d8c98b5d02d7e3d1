// Differential test of PEP 440 versions and specifiers against packaging (pip's vendored copy, or
// a standalone one) run once as a referee: normalised forms, the order and contains() agree.
#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "python/pep440.hpp"
#include "support/packaging_referee.hpp"
#include "support/temp_dir.hpp"

using rootlock::python::parse_specifiers;
using rootlock::python::parse_version;
using rootlock::python::SpecifierSet;
using rootlock::python::to_string;
using rootlock::python::Version;

namespace {

// The referee reads "V text" and "S text" lines and answers, in order: "P packaging-version",
// "V ok NORMALISED" or "V err" per version, "R rank..." (rank among distinct valid versions), then
// "S ok BITS BITS" (contains with prereleases=None, then True, over valid versions) or "S err".
const char* const k_referee = R"PY(import sys, bisect
try:
    from pip._vendor.packaging.version import Version, InvalidVersion
    from pip._vendor.packaging.specifiers import Specifier, SpecifierSet
    from pip._vendor.packaging import __version__ as pv
except ImportError:
    from packaging.version import Version, InvalidVersion
    from packaging.specifiers import Specifier, SpecifierSet
    from packaging import __version__ as pv
print("P", pv)
lines = open(sys.argv[1], encoding="utf-8").read().split("\n")
versions = []
for line in lines:
    if line.startswith("V "):
        try:
            v = Version(line[2:])
            versions.append(v)
            print("V ok", v)
        except InvalidVersion:
            print("V err")
distinct = sorted(set(versions))
print("R", " ".join(str(bisect.bisect_left(distinct, v)) for v in versions))
for line in lines:
    if line.startswith("S "):
        clauses = [c.strip() for c in line[2:].split(",") if c.strip()]
        try:
            for c in clauses:
                Specifier(c)
        except Exception:
            print("S err")
            continue
        s = SpecifierSet(",".join(clauses))
        a = "".join("1" if s.contains(v) else "0" for v in versions)
        b = "".join("1" if s.contains(v, prereleases=True) else "0" for v in versions)
        print("S ok", a or "-", b or "-")
)PY";

std::vector<std::string> version_corpus() {
    const std::vector<std::string> releases = {"0",       "1",         "1.0",   "1.0.0",
                                               "1.2",     "2.8.0",     "2.8.1", "2.9.1",
                                               "12.8.93", "9.10.2.21", "1!2.0", "3"};
    const std::vector<std::string> suffixes = {
        "",         "a1",     "b2",     "rc1", ".dev2", ".post1",     ".post1.dev2",
        "rc1.dev1", "+cu128", "+cu130", "-1",  "ALPHA", "_pre3",      ".post1+local.7",
        "a1+abc",   "+1.abc", "+abc",   "c",   "-r2",   "+Ubuntu-1_2"};
    std::vector<std::string> out;
    for (const auto& r : releases) {
        for (const auto& s : suffixes)
            out.push_back(r + s);
    }
    for (const char* extra : {" v2.8.0+cu128 ",
                              "1.0a.-1",
                              "1.0a.",
                              "01.002",
                              "1.0+007.x",
                              "1!1.0.dev0",
                              "1.0-",
                              "1.0.",
                              "1.*",
                              "1.0+",
                              "1.0+a..b",
                              "1..0",
                              "abc",
                              "",
                              "1.0 1",
                              "1.0.post1.post2",
                              "1.0a1a1",
                              "2.8.0+cu128.1",
                              "2.8.0+cu128.A",
                              "1.0+0",
                              "1.0+10",
                              "1.0+9"})
        out.push_back(extra);
    return out;
}

std::vector<std::string> specifier_corpus() {
    return {"",
            "==2.8.0",
            "==2.8.0+cu128",
            "==2.8.*",
            "!=2.8.*",
            "==1.0.*",
            "==1.*",
            "!=1.0",
            ">2.8.0",
            ">=2.8.0",
            "<2.9.1",
            "<=2.9.1",
            "~=2.8",
            "~=2.8.0",
            "~=12.8",
            ">1.0.post1",
            "<1.0rc1",
            ">=1.0rc1",
            "<=1.0.dev2",
            "==1.0rc1.*",
            "==1.0.*,<2",
            "===2.8.0+cu128",
            "===1.0",
            ">=1.0,<2.0",
            ">=2.8.0,!=2.8.1,<3",
            "~=1!2.0",
            ">1!1",
            "==1.0a1",
            "!=1.0a1",
            ">=9.10.2.21",
            "==9.10.2.*",
            "<3",
            ">0.dev0",
            "==1.0.post1.*",
            " >= 1.0 , , < 3 ",
            "<1.0",
            ">1.0",
            "<=1.0",
            "==1.0+abc",
            "!=1!2.*",
            "~=1.0.0",
            "~=1",
            ">=1.0.*",
            "<1.0+abc",
            "==1.0.dev1.*",
            "=>1.0",
            "1.0",
            ">=1.0;<2",
            "~=1.0.*"};
}

}  // namespace

TEST_SUITE("rootlock::python") {
    TEST_CASE("versions and specifiers agree with packaging, the reference implementation") {
        const rootlock::testing::TempDir dir;
        const std::vector<std::string> versions = version_corpus();
        const std::vector<std::string> specifiers = specifier_corpus();
        std::string corpus;
        for (const auto& text : versions)
            corpus += "V " + text + "\n";
        for (const auto& text : specifiers)
            corpus += "S " + text + "\n";
        const std::string output = rootlock::testing::run_packaging_referee(
            dir.write_file("referee.py", k_referee), dir.write_file("corpus.txt", corpus));
        if (output.empty()) {
            MESSAGE(
                "no python3 with packaging (pip's vendored copy or standalone): the "
                "differential PEP 440 check is skipped");
            return;
        }
        std::istringstream in(output);
        std::string line;
        std::getline(in, line);
        MESSAGE("referee: packaging ", line.substr(2));

        std::vector<Version> valid;
        for (const auto& text : versions) {
            REQUIRE(std::getline(in, line));
            auto mine = parse_version(text);
            if (line == "V err") {
                CHECK_MESSAGE(!mine.ok(), "packaging rejects \"", text, "\"");
                continue;
            }
            if (!mine.ok())
                FAIL("packaging accepts \"" << text << "\": " << mine.error().text());
            CHECK_MESSAGE(line == "V ok " + to_string(*mine), text);
            valid.push_back(*mine);
        }

        REQUIRE(std::getline(in, line));
        std::istringstream ranks_in(line.substr(2));
        std::vector<int> ranks;
        for (int rank = 0; ranks_in >> rank;)
            ranks.push_back(rank);
        REQUIRE(ranks.size() == valid.size());
        CHECK(valid.size() > 200);
        size_t order_mismatches = 0;
        for (size_t i = 0; i < valid.size(); ++i) {
            for (size_t j = 0; j < valid.size(); ++j) {
                const bool same = (valid[i] < valid[j]) == (ranks[i] < ranks[j]) &&
                                  (valid[i] == valid[j]) == (ranks[i] == ranks[j]);
                if (!same && order_mismatches++ < 10)
                    FAIL_CHECK(to_string(valid[i]), " vs ", to_string(valid[j]));
            }
        }
        CHECK(order_mismatches == 0);

        if (rootlock::testing::packaging_major(output) < 22) {
            MESSAGE(
                "packaging before 22 answers specifiers differently (pre-release suffixes "
                "before '.*', the unpadded wildcard split, '~=' with a pre-release): the "
                "specifier half of the differential check is skipped");
            return;
        }
        size_t sets = 0;
        size_t answers = 0;
        size_t contains_mismatches = 0;
        for (const auto& text : specifiers) {
            REQUIRE(std::getline(in, line));
            auto mine = parse_specifiers(text);
            if (line == "S err") {
                CHECK_MESSAGE(!mine.ok(), "packaging rejects \"", text, "\"");
                continue;
            }
            if (!mine.ok())
                FAIL("packaging accepts \"" << text << "\": " << mine.error().text());
            std::istringstream fields(line.substr(5));
            std::string by_default;
            std::string allowed;
            fields >> by_default >> allowed;
            REQUIRE(by_default.size() == valid.size());
            REQUIRE(allowed.size() == valid.size());
            ++sets;
            for (size_t i = 0; i < valid.size(); ++i) {
                for (const bool allow : {false, true}) {
                    const char expected = (allow ? allowed : by_default)[i];
                    const char got = mine->contains(valid[i], allow) ? '1' : '0';
                    ++answers;
                    if (got != expected && contains_mismatches++ < 10)
                        FAIL_CHECK("\"", text, "\" contains ", to_string(valid[i]),
                                   " (prereleases allowed: ", allow, "): packaging says ",
                                   expected);
                }
            }
        }
        CHECK(contains_mismatches == 0);
        CHECK(sets > 35);
        MESSAGE(valid.size(), " valid versions, ", sets, " valid specifier sets, ", answers,
                " contains() answers compared");
    }
}
