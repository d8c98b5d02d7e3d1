// The words of an impossible resolution: each message names the package whose requirements
// clash and lists the requirements the proof used, including chains several levels deep.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "python/pep508.hpp"
#include "resolve/resolver.hpp"
#include "support/fake_source.hpp"

namespace ROOTLOCK_UNIT_ID {

using rootlock::python::linux_cpython;
using rootlock::resolve::resolve;
using rootlock::resolve::ResolveOptions;
using rootlock::testing::FakeSource;
using rootlock::testing::requirements;

namespace {

std::string failure(FakeSource& source, const std::vector<std::string>& roots) {
    ResolveOptions options;
    options.environment = linux_cpython(3, 12, 1, "x86_64");
    auto result = resolve(requirements(roots), source, options);
    REQUIRE_FALSE(result.ok());
    CHECK(result.error().kind == rootlock::util::ErrorKind::input);
    return result.error().text();
}

}  // namespace

TEST_SUITE("rootlock::resolve") {
    TEST_CASE("every version of a requirer asking the same thing is summed up in one line") {
        FakeSource source;
        source.add("app", "1.0", {"tokenizers>=0.22"});
        for (const char* v : {"4.54.0", "4.54.1", "4.55.0"})
            source.add("transformers", v, {"tokenizers<0.22,>=0.21"});
        source.add("tokenizers", "0.21.0").add("tokenizers", "0.21.4").add("tokenizers", "0.22.0");
        CHECK(failure(source, {"app", "transformers"}) ==
              "no version of tokenizers satisfies every requirement:\n"
              "  app 1.0 requires tokenizers>=0.22\n"
              "  transformers 4.55.0 requires tokenizers<0.22,>=0.21\n"
              "  and every other version of transformers (4.54.1, 4.54.0) also requires "
              "tokenizers<0.22,>=0.21\n"
              "  the recipe requires app\n"
              "  the recipe requires transformers");
    }

    TEST_CASE("a root requirement that no candidate matches lists what is available") {
        FakeSource source;
        source.add("numpy", "1.0").add("numpy", "1.1").add("numpy", "2.0rc1");
        CHECK(failure(source, {"numpy>=3"}) ==
              "no version of numpy matches numpy>=3 (available: 1.0, 1.1, 2.0rc1)");
    }

    TEST_CASE("two root requirements on one package that cannot both hold") {
        FakeSource source;
        source.add("c", "1.0").add("c", "2.0");
        CHECK(failure(source, {"c>=2", "c<2"}) ==
              "no version of c satisfies every requirement:\n"
              "  the recipe requires c>=2\n"
              "  the recipe requires c<2");
    }

    TEST_CASE("a conflict three levels deep is explained as a chain back to the recipe") {
        FakeSource source;
        source.add("a", "1.0", {"b>=2"});
        source.add("b", "1.0").add("b", "2.0", {"c<1"});
        source.add("c", "0.5").add("c", "1.0").add("c", "1.5");
        CHECK(failure(source, {"a", "c>=1"}) ==
              "no version of c satisfies every requirement:\n"
              "  b 2.0 requires c<1\n"
              "  the recipe requires c>=1\n"
              "  a 1.0 requires b>=2\n"
              "  the recipe requires a");
    }

    TEST_CASE("a transitive requirement that nothing matches names what is available") {
        FakeSource source;
        source.add("a", "1.0", {"b>=5"}).add("a", "0.9", {"b>=6"});
        source.add("b", "1.0").add("b", "2.0");
        CHECK(failure(source, {"a"}) ==
              "no version of b satisfies every requirement:\n"
              "  a 1.0 requires b>=5, which no version of b matches (available: 1.0, 2.0)\n"
              "  a 0.9 requires b>=6, which no version of b matches (available: 1.0, 2.0)\n"
              "  the recipe requires a");
    }

    TEST_CASE("the explanation names the root cause, not the last version tried") {
        // Many versions of x are tried in turn, but the reason is one fact about y and z.
        FakeSource source;
        for (int minor = 0; minor < 8; ++minor)
            source.add("x", "1." + std::to_string(minor), {"y"});
        source.add("y", "1.0", {"z>=2"}).add("z", "1.0").add("z", "3.0");
        CHECK(failure(source, {"x", "z<2"}) ==
              "no version of z satisfies every requirement:\n"
              "  y 1.0 requires z>=2\n"
              "  the recipe requires z<2\n"
              "  x 1.7 requires y\n"
              "  and every other version of x (1.6, 1.5, 1.4, 1.3, 1.2, 1.1, 1.0) also requires y\n"
              "  the recipe requires x");
    }

    TEST_CASE("an extra whose requirement clashes is named with its extra") {
        FakeSource source;
        source.add("app", "1.0", {"torch[cuda]"});
        source.add("torch", "2.8.0", {"nvidia-cudnn>=9; extra == 'cuda'"});
        source.add("nvidia-cudnn", "8.9").add("nvidia-cudnn", "9.1");
        CHECK(failure(source, {"app", "nvidia-cudnn<9"}) ==
              "no version of nvidia-cudnn satisfies every requirement:\n"
              "  torch[cuda] 2.8.0 requires nvidia-cudnn>=9\n"
              "  the recipe requires nvidia-cudnn<9\n"
              "  app 1.0 requires torch[cuda]\n"
              "  the recipe requires app");
    }
}

}  // namespace ROOTLOCK_UNIT_ID
