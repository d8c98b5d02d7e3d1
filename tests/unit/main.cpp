// The doctest runner: every tests/unit/test_*.cpp links into this one binary.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
