// PEP 508 requirements and markers: torch's METADATA lines for x86_64 and aarch64 targets,
// extras, version-like comparisons, located errors, and a differential check against packaging.
#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "python/pep508.hpp"
#include "support/packaging_referee.hpp"
#include "support/temp_dir.hpp"

namespace ROOTLOCK_UNIT_ID {

using rootlock::python::evaluate;
using rootlock::python::linux_cpython;
using rootlock::python::MarkerEnvironment;
using rootlock::python::parse_marker;
using rootlock::python::parse_requirement;
using rootlock::python::Requirement;
using rootlock::python::to_string;

namespace {

Requirement must_parse(const std::string& text) {
    auto parsed = parse_requirement(text);
    if (!parsed.ok())
        FAIL(text << ": " << parsed.error().text());
    return *parsed;
}

bool marker_true(const std::string& marker, const MarkerEnvironment& environment,
                 const std::string& extra = "") {
    auto parsed = parse_marker(marker);
    if (!parsed.ok())
        FAIL(marker << ": " << parsed.error().text());
    return evaluate(*parsed, environment, extra);
}

std::string sorted_specifier_text(const Requirement& requirement) {
    std::vector<std::string> clauses;
    for (const auto& specifier : requirement.specifiers.specifiers)
        clauses.push_back(to_string(specifier));
    std::sort(clauses.begin(), clauses.end());
    std::string out;
    for (const auto& clause : clauses)
        out += (out.empty() ? "" : ",") + clause;
    return out;
}

// The referee reads one requirement per line and answers "P version", then per line "err" or
// "ok\tNAME\tEXTRAS\tSPECIFIER\tURL\tMARKER\tA\tB\tG": extras canonicalised, sorted, joined by ','
// ; the specifier clauses sorted; A, B the marker on the two targets, G on the first with extra
// "gpu" ("1", "0", "x" when packaging raises, "-" without a marker).
const char* const k_referee = R"PY(import sys
try:
    from pip._vendor.packaging.requirements import Requirement
    from pip._vendor.packaging.utils import canonicalize_name
    from pip._vendor.packaging import __version__ as pv
except ImportError:
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name
    from packaging import __version__ as pv
print("P", pv)
def env(py, full, machine):
    return {"python_version": py, "python_full_version": full, "os_name": "posix",
            "sys_platform": "linux", "platform_release": "", "platform_system": "Linux",
            "platform_version": "", "platform_machine": machine,
            "platform_python_implementation": "CPython", "implementation_name": "cpython",
            "implementation_version": full, "extra": ""}
a = env("3.12", "3.12.1", "x86_64")
b = env("3.9", "3.9.18", "aarch64")
g = dict(a, extra="gpu")
def ev(m, e):
    if m is None:
        return "-"
    try:
        return "1" if m.evaluate(e) else "0"
    except Exception:
        return "x"
for line in open(sys.argv[1], encoding="utf-8").read().split("\n")[:-1]:
    try:
        r = Requirement(line)
    except Exception:
        print("err")
        continue
    extras = ",".join(sorted(set(canonicalize_name(x) for x in r.extras)))
    spec = ",".join(sorted(str(s) for s in r.specifier))
    print("\t".join(["ok", r.name, extras, spec, r.url or "", str(r.marker) if r.marker else "",
                     ev(r.marker, a), ev(r.marker, b), ev(r.marker, g)]))
)PY";

std::vector<std::string> requirement_corpus() {
    return {
        "torch",
        "torch==2.8.0",
        "torch (==2.8.0)",
        "torch(==2.8.0)",
        "torch ( >= 2.8 , < 3 )",
        "torch>=2.8,<3",
        "torch >= 2.8.0, != 2.8.1",
        "Torch_Vision.Extra-Name>=0.23",
        "nvidia-cudnn-cu12==9.10.2.21; platform_system == \"Linux\" and platform_machine == "
        "\"x86_64\"",
        "nvidia-cudnn-cu12 (==9.1.0.70) ; platform_system == \"Linux\" and platform_machine == "
        "\"x86_64\"",
        "cuda-toolkit[cublas,cudart,cufft]==13.0.2; platform_system == \"Linux\"",
        "triton==3.4.0; platform_system == \"Linux\" and platform_machine == \"x86_64\"",
        "nvidia-nccl-cu12==2.27.3; platform_system == \"Linux\" and platform_machine == \"x86_64\"",
        "sympy>=1.13.3",
        "typing-extensions>=4.10.0",
        "setuptools; python_version >= \"3.12\"",
        "opt-einsum>=3.3; extra == \"opt-einsum\"",
        "optree>=0.13.0; extra == \"optree\"",
        "pytest; extra == 'GPU'",
        "pytest; extra == \"Gpu_Support\"",
        "pytest; extra == \"gpu\" or extra == \"cuda\"",
        "pytest; extra != \"gpu\"",
        "pytest; \"gpu\" == extra",
        "pytest; \"gp\" in extra",
        "pytest; extra in \"gpu cuda\"",
        "pytest; extra not in \"cpu\"",
        "requests[security, socks]>=2.31",
        "requests[Security,SOCKS,security]",
        "requests[]",
        "requests [ security ] >= 2",
        "a.b-c_d",
        "A",
        "0",
        "name @ https://example.com/name-1.0-py3-none-any.whl",
        "name@https://example.com/name.whl",
        "name[x] @ file:///tmp/name.whl ; python_version < \"3.10\"",
        "name @ https://example.com/n.whl ; sys_platform == 'linux'",
        "name @ https://example.com/n.whl; python_version < \"3.10\"",
        "foo; python_version < \"3.10\"",
        "foo; python_version < '3.10'",
        "foo; python_version <= \"3.9\"",
        "foo; python_version > \"3.9\"",
        "foo; python_version >= \"3.9\"",
        "foo; python_version == \"3.12\"",
        "foo; python_version == \"3.12.0\"",
        "foo; python_version != \"3.9\"",
        "foo; python_version == \"3.*\"",
        "foo; python_version != \"3.1*\"",
        "foo; python_version ~= \"3.9\"",
        "foo; python_version ~= \"3.12\"",
        "foo; python_full_version >= \"3.12.1\"",
        "foo; python_full_version < \"3.9.18\"",
        "foo; python_full_version === \"3.12.1\"",
        "foo; \"3.10\" < python_version",
        "foo; \"3.10\" >= python_version",
        "foo; \"3.1\" in python_version",
        "foo; \"3.1\" not in python_version",
        "foo; python_version in \"3.9 3.10 3.11\"",
        "foo; python_version not in \"3.9, 3.10\"",
        "foo; implementation_name == \"cpython\"",
        "foo; implementation_version >= \"3.10\"",
        "foo; platform_python_implementation == \"CPython\"",
        "foo; platform_python_implementation != \"PyPy\"",
        "foo; python_implementation == \"CPython\"",
        "foo; os.name == \"posix\"",
        "foo; sys.platform == \"linux\"",
        "foo; platform.machine == \"aarch64\"",
        "foo; os_name == \"nt\"",
        "foo; sys_platform == \"win32\" or sys_platform == \"darwin\"",
        "foo; sys_platform != \"win32\"",
        "foo; sys_platform < \"m\"",
        "foo; platform_machine > \"b\"",
        "foo; platform_machine in \"x86_64 amd64\"",
        "foo; platform_machine in 'aarch64 arm64'",
        "foo; \"arm\" in platform_machine",
        "foo; platform_release == \"\"",
        "foo; platform_version == \"\"",
        "foo; (python_version < \"3.10\")",
        "foo; (python_version < \"3.10\" or platform_machine == \"x86_64\") and os_name == "
        "\"posix\"",
        "foo; python_version < \"3.10\" or platform_machine == \"x86_64\" and os_name == \"nt\"",
        "foo; python_version<\"3.10\"and(os_name==\"posix\")",
        "foo; ((os_name == \"posix\") and (sys_platform == \"linux\")) or extra == \"gpu\"",
        "foo; os_name == \"posix\" and (extra == \"gpu\" or extra == \"x\")",
        "foo;python_version>'3'",
        "foo ;\tpython_version > \"3\"",
        "foo>=1.0rc1; python_version >= \"3.9\"",
        "foo===1.0.weird",
        "foo~=1.4.2",
        "foo==2.*",
        "foo!=1.5.*,>=1",
        "name @ foo",
        "name @ file:foo",
        "  foo ",
        "foo >=1 ;os_name=='posix' ",
        "zope.interface (>=1, <2)",
        "foo[a.b-c]",
        "foo ( )",
        "foo[bar]==1;extra=='A_B'",
        "foo; python_version<'3'and os_name=='x'",
        "foo; platform_release >= \"5\"",
        "foo; os_name == \"1.0\"",
        // rejected by both
        "foo[a b]",
        "foo (>=1) (>=2)",
        "foo==1.0 rc1",
        "foo[bar]baz",
        "foo; python_version < '3' andos_name=='x'",
        "",
        "-foo",
        "foo-",
        "foo bar",
        "foo 1.0",
        "foo[",
        "foo[bar",
        "foo[bar,]",
        "foo[-bar]",
        "foo (==1.0",
        "foo==",
        "foo=>1.0",
        "foo>=1.0+local",
        "foo @",
        "foo @ https://x.whl;python_version<\"3\" bar",
        "foo @ https://x.whl extra",
        "foo;",
        "foo; python_version",
        "foo; python_version <",
        "foo; python_version < 3.10",
        "foo; python_version = \"3.10\"",
        "foo; python_versio == \"3.10\"",
        "foo; \"a\" == \"b\"",
        "foo; python_version == python_full_version",
        "foo; (python_version < \"3.10\"",
        "foo; python_version < \"3.10",
        "foo; python_version not \"3.10\"",
        "foo; os_name == \"posix\" and",
        "foo; os_name == \"posix\" xor os_name == \"nt\"",
    };
}

// Comparisons without exactly one variable side, which rootlock rejects when parsing.
bool is_deliberately_stricter(const std::string& text) {
    return text == "foo; \"a\" == \"b\"" || text == "foo; python_version == python_full_version";
}

std::vector<std::string> split_tabs(const std::string& line) {
    std::vector<std::string> out(1);
    for (char c : line) {
        if (c == '\t')
            out.emplace_back();
        else
            out.back().push_back(c);
    }
    return out;
}

}  // namespace

TEST_SUITE("rootlock::python") {
    TEST_CASE("torch's METADATA requirements select the CUDA wheels on x86_64 only") {
        const MarkerEnvironment x86 = linux_cpython(3, 12, 1, "x86_64");
        const MarkerEnvironment arm = linux_cpython(3, 12, 1, "aarch64");

        const Requirement cudnn = must_parse(
            "nvidia-cudnn-cu12==9.10.2.21; platform_system == \"Linux\" and platform_machine == "
            "\"x86_64\"");
        CHECK(cudnn.name == "nvidia-cudnn-cu12");
        CHECK(cudnn.normalized_name == "nvidia-cudnn-cu12");
        CHECK(cudnn.extras.empty());
        CHECK(to_string(cudnn.specifiers) == "==9.10.2.21");
        CHECK(!cudnn.url);
        REQUIRE(cudnn.marker);
        CHECK(to_string(*cudnn.marker) ==
              "platform_system == \"Linux\" and platform_machine == \"x86_64\"");
        CHECK(applies(cudnn, x86));
        CHECK(!applies(cudnn, arm));

        const Requirement old_style = must_parse(
            "nvidia-cudnn-cu12 (==9.1.0.70) ; platform_system == \"Linux\" and platform_machine == "
            "\"x86_64\"");
        CHECK(old_style.name == "nvidia-cudnn-cu12");
        CHECK(to_string(old_style.specifiers) == "==9.1.0.70");
        CHECK(applies(old_style, x86));
        CHECK(!applies(old_style, arm));

        const Requirement toolkit =
            must_parse("cuda-toolkit[cublas,cudart,cufft]==13.0.2; platform_system == \"Linux\"");
        CHECK(toolkit.normalized_name == "cuda-toolkit");
        CHECK(toolkit.extras == std::vector<std::string>{"cublas", "cudart", "cufft"});
        CHECK(to_string(toolkit.specifiers) == "==13.0.2");
        CHECK(applies(toolkit, x86));
        CHECK(applies(toolkit, arm));
        CHECK(to_string(toolkit) ==
              "cuda-toolkit[cublas,cudart,cufft]==13.0.2; platform_system == \"Linux\"");
    }

    TEST_CASE("linux_cpython describes the declared target") {
        const MarkerEnvironment env = linux_cpython(3, 12, 1, "aarch64");
        CHECK(env.python_version == "3.12");
        CHECK(env.python_full_version == "3.12.1");
        CHECK(env.implementation_version == "3.12.1");
        CHECK(env.os_name == "posix");
        CHECK(env.sys_platform == "linux");
        CHECK(env.platform_system == "Linux");
        CHECK(env.platform_machine == "aarch64");
        CHECK(env.platform_python_implementation == "CPython");
        CHECK(env.implementation_name == "cpython");
    }

    TEST_CASE("extras are normalised, sorted and unique; extra markers compare normalised") {
        const Requirement r = must_parse("Requests[Security, socks,SECURITY , Zed_Extra.x]>=2");
        CHECK(r.name == "Requests");
        CHECK(r.normalized_name == "requests");
        CHECK(r.extras == std::vector<std::string>{"security", "socks", "zed-extra-x"});
        CHECK(must_parse("foo[]").extras.empty());

        const MarkerEnvironment env = linux_cpython(3, 11, 7, "x86_64");
        CHECK(marker_true("extra == \"gpu\"", env, "gpu"));
        CHECK(marker_true("extra == \"GPU\"", env, "gpu"));
        CHECK(marker_true("extra == \"gpu_support\"", env, "Gpu.Support"));
        CHECK(!marker_true("extra == \"gpu\"", env));
        CHECK(!marker_true("extra == \"gpu\"", env, "cpu"));
        CHECK(marker_true("extra != \"gpu\"", env));
        CHECK(marker_true("\"gpu\" == extra", env, "GPU"));
    }

    TEST_CASE("version-like variables compare as PEP 440 versions, others as strings") {
        const MarkerEnvironment py312 = linux_cpython(3, 12, 1, "x86_64");
        const MarkerEnvironment py39 = linux_cpython(3, 9, 18, "x86_64");
        CHECK(!marker_true("python_version < \"3.10\"", py312));  // "3.12" < "3.10" as strings
        CHECK(marker_true("python_version < \"3.10\"", py39));
        CHECK(marker_true("python_version >= \"3.10\"", py312));
        CHECK(marker_true("python_version == \"3.12.0\"", py312));  // 3.12 == 3.12.0
        CHECK(marker_true("python_version == \"3.*\"", py39));
        CHECK(marker_true("python_version ~= \"3.9\"", py312));
        CHECK(!marker_true("python_version ~= \"3.10\"", py39));
        CHECK(marker_true("python_full_version >= \"3.9.18\"", py39));
        CHECK(marker_true("\"3.10\" < python_version", py312));
        CHECK(!marker_true("\"3.10\" < python_version", py39));
        CHECK(marker_true("python_version in \"3.8 3.9\"", py39));
        CHECK(marker_true("\"3.1\" in python_version", py312));
        CHECK(marker_true("platform_machine not in \"aarch64 arm64\"", py312));
        CHECK(marker_true("sys_platform < \"m\"", py312));   // "linux" < "m"
        CHECK(!marker_true("os_name ~= \"posix\"", py312));  // no specifier: false
    }

    TEST_CASE("and binds tighter than or; parentheses group; the string form is packaging's") {
        const MarkerEnvironment env = linux_cpython(3, 12, 1, "aarch64");
        CHECK(marker_true("os_name == \"nt\" and os_name == \"x\" or os_name == \"posix\"", env));
        CHECK(
            !marker_true("os_name == \"nt\" and (os_name == \"x\" or os_name == \"posix\")", env));
        CHECK(marker_true("(((os_name == 'posix')))", env));
        auto marker = parse_marker(
            "(python_version<'3.10' or platform_machine=='aarch64')and os.name=='posix'");
        REQUIRE(marker.ok());
        CHECK(to_string(*marker) ==
              "(python_version < \"3.10\" or platform_machine == \"aarch64\") and os_name == "
              "\"posix\"");
        CHECK(evaluate(*marker, env));
        auto lone = parse_marker("( \"3.9\" not in python_full_version )");
        REQUIRE(lone.ok());
        CHECK(to_string(*lone) == "\"3.9\" not in python_full_version");
    }

    TEST_CASE("URL requirements and their markers") {
        const Requirement r = must_parse(
            "torch[Cuda] @ https://download.pytorch.org/whl/torch-2.8.0.whl ; "
            "platform_machine == 'x86_64'");
        CHECK(r.extras == std::vector<std::string>{"cuda"});
        REQUIRE(r.url);
        CHECK(*r.url == "https://download.pytorch.org/whl/torch-2.8.0.whl");
        CHECK(r.specifiers.specifiers.empty());
        REQUIRE(r.marker);
        CHECK(to_string(r) ==
              "torch[cuda]@ https://download.pytorch.org/whl/torch-2.8.0.whl ; platform_machine "
              "== \"x86_64\"");
    }

    TEST_CASE("malformed requirements and markers are rejected with located messages") {
        struct Case {
            const char* text;
            const char* message;
        };
        const Case cases[] = {
            {"", "\"\":1: expected a project name"},
            {"-foo", "\"-foo\":1: expected a project name"},
            {"foo-",
             "\"foo-\":4: expected '[', a version specifier, '@', ';' or the end after the "
             "project name"},
            {"foo 1.0",
             "\"foo 1.0\":5: expected '[', a version specifier, '@', ';' or the end "
             "after the project name"},
            {"foo[", "\"foo[\":5: expected an extra name"},
            {"foo[bar", "\"foo[bar\":8: expected ',' or ']' after an extra"},
            {"foo[bar,]", "\"foo[bar,]\":9: expected an extra name"},
            {"foo (==1.0", "\"foo (==1.0\":11: expected ')' to close the '(' at column 5"},
            {"foo (==1.0) bar",
             "\"foo (==1.0) bar\":13: expected ';' or the end after the "
             "version specifier"},
            {"foo==", "\"foo==\":6: expected a version after '=='"},
            {"foo=>1.0", "\"foo=>1.0\":4: expected an operator (~=, ==, !=, <=, >=, <, >, ===)"},
            {"foo>=1.0+local", "\"foo>=1.0+local\":6: '>=' does not allow a local version"},
            {"foo (~=1)",
             "\"foo (~=1)\":8: '~=' needs a version with at least two release "
             "numbers"},
            {"foo @", "\"foo @\":6: expected a URL after '@'"},
            {"foo @ https://x.whl extra",
             "\"foo @ https://x.whl extra\":21: expected ';' or the "
             "end after the URL"},
            {"foo;", "\"foo;\":5: expected a marker after ';'"},
            {"foo; python_version", "\"foo; python_version\":20: expected a comparison operator"},
            {"foo; python_version <",
             "\"foo; python_version <\":22: expected a marker variable or "
             "a quoted string"},
            {"foo; python_version < 3.10",
             "\"foo; python_version < 3.10\":23: unknown marker "
             "variable '3.10'"},
            {"foo; python_version = '3'",
             "\"foo; python_version = '3'\":21: expected a "
             "comparison operator"},
            {"foo; python_versio == '3'",
             "\"foo; python_versio == '3'\":6: unknown marker "
             "variable 'python_versio'"},
            {"foo; 'a' == 'b'",
             "\"foo; 'a' == 'b'\":6: a comparison needs a marker variable "
             "on one side"},
            {"foo; os_name == sys_platform",
             "\"foo; os_name == sys_platform\":17: a comparison "
             "needs a quoted string on one side"},
            {"foo; (os_name == 'nt'",
             "\"foo; (os_name == 'nt'\":22: expected ')' to close the "
             "'(' at column 6"},
            {"foo; os_name == \"nt",
             "\"foo; os_name == \\\"nt\":17: unterminated string, expected "
             "a closing '\"'"},
            {"foo; os_name not 'nt'", "\"foo; os_name not 'nt'\":18: expected 'in' after 'not'"},
            {"foo; os_name == 'nt' and",
             "\"foo; os_name == 'nt' and\":25: expected a marker "
             "variable or a quoted string"},
            {"foo; os_name == 'nt' xor os_name == 'x'",
             "\"foo; os_name == 'nt' xor os_name == "
             "'x'\":22: expected 'and', 'or' or the "
             "end of the marker"},
        };
        for (const Case& c : cases) {
            auto parsed = parse_requirement(c.text);
            REQUIRE_MESSAGE(!parsed.ok(), c.text);
            CHECK(parsed.error().text() == c.message);
        }
        auto marker = parse_marker("os_name ==");
        REQUIRE(!marker.ok());
        CHECK(marker.error().text() ==
              "\"os_name ==\":11: expected a marker variable or a quoted string");
        const std::string deep = std::string(65, '(') + "os_name == 'nt'" + std::string(65, ')');
        auto too_deep = parse_marker(deep);
        REQUIRE(!too_deep.ok());
        CHECK(too_deep.error().message == "parentheses nested deeper than 64 levels");
        CHECK(too_deep.error().where.substr(too_deep.error().where.rfind(':')) == ":65");
        CHECK(parse_marker(std::string(64, '(') + "os_name == 'nt'" + std::string(64, ')')).ok());
        auto empty = parse_marker("  ");
        REQUIRE(!empty.ok());
        CHECK(empty.error().text() == "\"  \":3: expected a marker");
    }

    TEST_CASE("requirements and markers agree with packaging, the reference implementation") {
        const rootlock::testing::TempDir dir;
        const std::vector<std::string> corpus = requirement_corpus();
        std::string lines;
        for (const auto& text : corpus)
            lines += text + "\n";
        const std::string output = rootlock::testing::run_packaging_referee(
            dir.write_file("referee.py", k_referee), dir.write_file("corpus.txt", lines));
        if (rootlock::testing::packaging_major(output) < 22) {
            MESSAGE(
                "no python3 with packaging 22 or later: the differential PEP 508 check is "
                "skipped");
            return;
        }
        std::istringstream in(output);
        std::string line;
        std::getline(in, line);
        MESSAGE("referee: packaging ", line.substr(2));

        const MarkerEnvironment a = linux_cpython(3, 12, 1, "x86_64");
        const MarkerEnvironment b = linux_cpython(3, 9, 18, "aarch64");
        size_t accepted = 0;
        size_t rejected = 0;
        size_t evaluations = 0;
        for (const auto& text : corpus) {
            REQUIRE(std::getline(in, line));
            auto mine = parse_requirement(text);
            if (line != "err" && !mine.ok() && is_deliberately_stricter(text)) {
                ++rejected;  // packaging parses these and raises when evaluating them
                continue;
            }
            if (line == "err") {
                CHECK_MESSAGE(!mine.ok(), "packaging rejects \"", text, "\"");
                ++rejected;
                continue;
            }
            if (!mine.ok())
                FAIL("packaging accepts \"" << text << "\": " << mine.error().text());
            const std::vector<std::string> fields = split_tabs(line);
            REQUIRE(fields.size() == 9);
            ++accepted;
            std::string extras;
            for (const auto& extra : mine->extras)
                extras += (extras.empty() ? "" : ",") + extra;
            CHECK_MESSAGE(fields[1] == mine->name, text);
            CHECK_MESSAGE(fields[2] == extras, text);
            CHECK_MESSAGE(fields[3] == sorted_specifier_text(*mine), text);
            CHECK_MESSAGE(fields[4] == mine->url.value_or(""), text);
            CHECK_MESSAGE(fields[5] == (mine->marker ? to_string(*mine->marker) : ""), text);
            const std::string answers[] = {
                mine->marker ? (evaluate(*mine->marker, a) ? "1" : "0") : "-",
                mine->marker ? (evaluate(*mine->marker, b) ? "1" : "0") : "-",
                mine->marker ? (evaluate(*mine->marker, a, "gpu") ? "1" : "0") : "-",
            };
            for (size_t i = 0; i < 3; ++i) {
                if (fields[6 + i] == "x")
                    continue;  // packaging raises; rootlock answers (documented in pep508.hpp)
                ++evaluations;
                CHECK_MESSAGE(fields[6 + i] == answers[i], text, " on target ", i);
            }
        }
        CHECK(accepted > 80);
        CHECK(rejected > 20);
        MESSAGE(accepted, " accepted, ", rejected, " rejected, ", evaluations,
                " marker evaluations compared");
    }
}

}  // namespace ROOTLOCK_UNIT_ID
