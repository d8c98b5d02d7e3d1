// Tests for unchecked-hash .pyc compilation: cache paths, the bytes against what py_compile
// itself writes for the same source and path, sources that do not compile, the same bytes
// whatever the caller's hash seed, and the interpreter checks.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>

#include "python/bytecode.hpp"
#include "support/temp_dir.hpp"

using namespace rootlock;
using rootlock::python::BytecodeJob;
using rootlock::python::BytecodeOptions;
using rootlock::python::compile_bytecode;
using rootlock::python::pyc_path_for;
using rootlock::testing::TempDir;

namespace {

std::string run(const std::string& command) {
    std::unique_ptr<FILE, int (*)(FILE*)> pipe(::popen(command.c_str(), "r"), ::pclose);
    REQUIRE(pipe != nullptr);
    std::string text;
    char buffer[4096];
    size_t got = 0;
    while ((got = std::fread(buffer, 1, sizeof buffer, pipe.get())) > 0)
        text.append(buffer, got);
    REQUIRE(::pclose(pipe.release()) == 0);
    return text;
}

std::string read_host(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The host's python3.11 full version ("3.11.2").
std::string host_python_full() {
    std::string text =
        run("python3.11 -c 'import sys; print(\"%d.%d.%d\" % sys.version_info[:3])'");
    while (!text.empty() && text.back() == '\n')
        text.pop_back();
    return text;
}

const char* const k_source =
    "import os\n"
    "NAMES = {'b', 'a', 'c', 'd'}\n"
    "def f(x):\n"
    "    return x in {'q', 'r', 's'} or x in NAMES\n";

}  // namespace

TEST_SUITE("rootlock::python") {
    TEST_CASE("a source's bytecode is cached in __pycache__ under the interpreter's tag") {
        CHECK(pyc_path_for("/opt/venv/lib/python3.11/site-packages/a/b.py", "3.11") ==
              "/opt/venv/lib/python3.11/site-packages/a/__pycache__/b.cpython-311.pyc");
        CHECK(pyc_path_for("/x/__init__.py", "3.12") == "/x/__pycache__/__init__.cpython-312.pyc");
    }

    TEST_CASE("the bytes are py_compile's unchecked-hash pyc for the same source and path") {
        TempDir tmp;
        const std::string path = "/opt/venv/lib/python3.11/site-packages/demo/mod.py";
        BytecodeOptions options{"3.11", host_python_full(), tmp.path()};
        auto results = compile_bytecode(
            {{path, k_source}, {"/opt/venv/bad.py", "def broken(:\n"}, {"/e.py", ""}}, options);
        REQUIRE_MESSAGE(results.ok(), (results.ok() ? "" : results.error().text()));
        REQUIRE(results->size() == 3);
        REQUIRE((*results)[0].has_value());
        CHECK_FALSE((*results)[1].has_value());  // a syntax error is skipped, as pip skips it
        REQUIRE((*results)[2].has_value());      // an empty module compiles
        const std::string& pyc = *(*results)[0];
        CHECK(pyc.substr(4, 4) == std::string("\x01\0\0\0", 4));  // hash-based, unchecked

        // The referee: py_compile with the same dfile, writing a file we read back.
        std::ofstream(tmp / "mod.py", std::ios::binary) << k_source;
        run("PYTHONHASHSEED=7 python3.11 -c 'import py_compile, sys; "
            "py_compile.compile(sys.argv[1],"
            " cfile=sys.argv[2], dfile=sys.argv[3], doraise=True, invalidation_mode="
            "py_compile.PycInvalidationMode.UNCHECKED_HASH)' " +
            tmp / "mod.py" + " " + tmp / "mod.pyc" + " " + path);
        CHECK(pyc == read_host(tmp / "mod.pyc"));
        // The scratch files are gone.
        CHECK(run("ls -A " + tmp.path()) == "mod.py\nmod.pyc\n");
    }

    TEST_CASE("the caller's PYTHONHASHSEED and PYTHONOPTIMIZE change nothing") {
        TempDir tmp;
        BytecodeOptions options{"3.11", "", tmp.path()};
        auto first = compile_bytecode({{"/m.py", k_source}}, options);
        REQUIRE(first.ok());
        ::setenv("PYTHONHASHSEED", "12345", 1);
        ::setenv("PYTHONOPTIMIZE", "2", 1);
        auto second = compile_bytecode({{"/m.py", k_source}}, options);
        ::unsetenv("PYTHONHASHSEED");
        ::unsetenv("PYTHONOPTIMIZE");
        REQUIRE(second.ok());
        CHECK(*first == *second);
    }

    TEST_CASE("another interpreter version, or none, is refused with the reason") {
        TempDir tmp;
        const std::string host = host_python_full();
        auto other = compile_bytecode({{"/m.py", "x = 1\n"}}, {"3.11", "3.11.99", tmp.path()});
        REQUIRE_FALSE(other.ok());
        CHECK(other.error().text().rfind(
                  "python3.11: the base's 3.11.99 is needed (another version compiles other "
                  "bytes); found " +
                      host + " at /",
                  0) == 0);
        // With several in PATH, the one of the right version is used whatever comes first.
        TempDir bin;
        const std::string shim = bin / "python3.11";
        std::ofstream(shim) << "#!/bin/sh\necho 'version 3.10.1'\nexit 3\n";
        REQUIRE(::chmod(shim.c_str(), 0755) == 0);
        const std::string saved = std::getenv("PATH");
        ::setenv("PATH", (bin.path() + ":" + saved).c_str(), 1);
        auto picked = compile_bytecode({{"/m.py", "x = 1\n"}}, {"3.11", host, tmp.path()});
        auto none_right = compile_bytecode({{"/m.py", "x = 1\n"}}, {"3.11", "3.11.99", tmp.path()});
        ::setenv("PATH", saved.c_str(), 1);
        CHECK(picked.ok());
        REQUIRE_FALSE(none_right.ok());
        CHECK(none_right.error().text().find("found 3.10.1 at " + shim + ", " + host + " at /") !=
              std::string::npos);
        auto missing = compile_bytecode({{"/m.py", "x = 1\n"}}, {"3.99", "", tmp.path()});
        REQUIRE_FALSE(missing.ok());
        CHECK(missing.error().text() == "python3.99: not found; install it with apt-get");
        // No job, no interpreter needed.
        auto none = compile_bytecode({}, {"3.99", "", tmp.path()});
        REQUIRE(none.ok());
        CHECK(none->empty());
    }
}
