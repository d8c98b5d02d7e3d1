// Round trips between the pylock writer and reader: a rich lock with every field, a golden text
// that must come back byte for byte, and 200 generated locks full of awkward strings.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>

#include "pylock/pylock.hpp"

namespace ROOTLOCK_UNIT_ID {

using namespace rootlock;
using namespace std::string_literals;

namespace {

const std::string k_file = "pylock.test.toml";

// A fixed xorshift generator: the same locks on every run and every standard library.
class Random {
  public:
    uint64_t next() {
        m_state ^= m_state << 13;
        m_state ^= m_state >> 7;
        m_state ^= m_state << 17;
        return m_state;
    }
    std::size_t below(std::size_t n) { return static_cast<std::size_t>(next() % n); }
    bool coin() { return below(2) == 0; }

    // Short strings of pieces that stress escaping: quotes, backslashes, controls, multi-byte
    // UTF-8, TOML punctuation.
    std::string text() {
        static const char* const k_pieces[] = {
            "a",
            "Z",
            "0",
            " ",
            "\"",
            "\\",
            "'",
            "\n",
            "\t",
            "\r",
            "\x01",
            "\x1f",
            "\x7f",
            "\xc2\x85",
            "\xc3\xa9",
            "\xe2\x82\xac",
            "\xf0\x9f\x98\x80",
            "#",
            "=",
            "[",
            "]",
            "{",
            "}",
            ",",
            "\"\"\"",
            "'''",
            "\\u0041",
        };
        std::string out;
        const std::size_t count = below(8);
        for (std::size_t i = 0; i < count; ++i)
            out += k_pieces[below(sizeof(k_pieces) / sizeof(k_pieces[0]))];
        if (below(10) == 0)
            out += "\0"s;
        return out;
    }
    std::vector<std::string> texts(std::size_t most) {
        std::vector<std::string> out(below(most + 1));
        for (auto& value : out)
            value = text();
        return out;
    }
    // Some of `items`, in their order (valid values where the reader checks them).
    std::vector<std::string> subsequence(std::initializer_list<const char*> items) {
        std::vector<std::string> out;
        for (const char* item : items) {
            if (coin())
                out.emplace_back(item);
        }
        return out;
    }
    std::optional<std::string> maybe_text() {
        if (coin())
            return std::nullopt;
        return text();
    }
    std::string hex(std::size_t length) {
        std::string out;
        for (std::size_t i = 0; i < length; ++i)
            out += "0123456789abcdef"[below(16)];
        return out;
    }
    // A PEP 503 normalised name: lowercase alphanumerics joined by single hyphens.
    std::string project_name() {
        std::string out;
        const std::size_t parts = 1 + below(3);
        for (std::size_t i = 0; i < parts; ++i) {
            if (i > 0)
                out += '-';
            const std::size_t length = 1 + below(4);
            for (std::size_t k = 0; k < length; ++k)
                out += "abcxyz019"[below(9)];
        }
        return out;
    }
    uint64_t count() {
        switch (below(4)) {
            case 0:
                return 0;
            case 1:
                return 9223372036854775807ULL;  // the largest TOML integer
            default:
                return next() >> 1;
        }
    }

  private:
    uint64_t m_state = 0x9E3779B97F4A7C15ULL;
};

pylock::LockWheel random_wheel(Random& r) {
    static const char* const k_times[] = {"2024-08-18T21:39:56Z", "2024-02-29 00:00:00.120z",
                                          "1999-12-31T23:59:59.123456789+05:30",
                                          "2025-01-01T00:00:00"};
    pylock::LockWheel wheel;
    wheel.name = r.text();
    wheel.url = r.text();
    wheel.path = r.text();
    if (wheel.url.empty() && wheel.path.empty())
        wheel.url = "u";
    if (r.coin())
        wheel.size = r.count();
    if (r.coin())
        wheel.upload_time = k_times[r.below(4)];
    wheel.hashes["sha256"] = r.hex(64);
    if (r.coin())
        wheel.hashes["sha512"] = r.hex(128);
    if (r.coin())
        wheel.hashes["x" + r.text()] = r.text();  // an algorithm nobody knows, odd key included
    return wheel;
}

pylock::LockPackage random_package(Random& r) {
    pylock::LockPackage package;
    package.name = r.project_name();
    package.version =
        r.coin() ? std::to_string(r.below(20)) + "." + std::to_string(r.below(20)) : r.text();
    package.marker = r.maybe_text();
    package.requires_python = r.maybe_text();
    for (std::size_t i = r.below(4); i > 0; --i)
        package.dependencies.push_back(pylock::PackageDependency{r.text(), r.maybe_text()});
    package.index = r.text();
    for (std::size_t i = r.below(3); i > 0; --i)
        package.wheels.push_back(random_wheel(r));
    if (r.coin())
        package.rootlock = pylock::PackageRootlockData{
            r.texts(3),
            r.texts(3),
            r.coin(),
            r.texts(3),
            r.coin() ? std::optional<std::string>(r.coin() ? "" : "bad \"build\"\n") : std::nullopt,
            r.subsequence({"sm_75", "sm_86", "compute_86", "sm_90a", "compute_100f"})};
    return package;
}

pylock::LockRootlockData random_tool(Random& r) {
    pylock::LockRootlockData data;
    data.recipe = r.text();
    data.recipe_sha256 = r.hex(64);
    data.image_name = r.text();
    data.output = r.text();
    data.venv = r.text();
    data.source_date_epoch = r.count();
    data.target =
        pylock::LockTarget{r.text(), r.text(), r.text(), r.text(),
                           r.text(), r.text(), r.text(), r.subsequence({"7.5", "8.6", "9.0"})};
    data.base.kind = r.coin() ? "tarball" : "debian";
    data.base.url = r.text();
    data.base.path = r.text();
    data.base.sha256 = r.coin() ? r.hex(64) : "";
    if (r.coin())
        data.base.size = r.count();
    data.base.suite = r.text();
    data.base.mirror = r.text();
    data.base.variant = r.text();
    data.base.architecture = r.coin() ? r.text() : "";
    data.base.include = r.texts(3);
    for (std::size_t i = r.below(3); i > 0; --i)
        data.indexes.push_back(pylock::LockIndex{r.text(), r.text(), r.texts(3)});
    data.requirements = r.texts(3);
    for (std::size_t i = r.below(3); i > 0; --i)
        data.environment.emplace_back(r.text(), r.text());
    data.host_provides = r.texts(3);
    data.library_paths = r.texts(3);
    for (std::size_t i = r.below(3); i > 0; --i)
        data.files.emplace_back(r.text(), r.text());
    data.compile_bytecode = r.coin();
    data.entrypoint = r.texts(3);
    data.cmd = r.texts(3);
    if (r.coin())
        data.frozen_from = "/opt/" + r.text();
    data.closure_ok = r.coin();
    data.closure_objects = r.count();
    for (std::size_t i = r.below(3); i > 0; --i)
        data.problems.push_back(pylock::LockProblem{r.text(), r.text(), r.text()});
    return data;
}

pylock::Lock random_lock(Random& r) {
    pylock::Lock lock;
    lock.lock_version = "1." + std::to_string(r.below(3));
    lock.created_by = r.text();
    lock.requires_python = r.maybe_text();
    lock.environments = r.texts(3);
    for (std::size_t i = r.below(5); i > 0; --i)
        lock.packages.push_back(random_package(r));
    if (r.coin())
        lock.rootlock = random_tool(r);
    return lock;
}

}  // namespace

TEST_SUITE("rootlock::pylock") {
    TEST_CASE("a lock with every field set comes back equal") {
        pylock::Lock lock;
        lock.lock_version = "1.0";
        lock.created_by = "rootlock 0.1.0";
        lock.requires_python = "==3.11.*";
        lock.environments = {"sys_platform == \"linux\"", "platform_machine == \"x86_64\""};
        pylock::LockPackage torch;
        torch.name = "torch";
        torch.version = "2.8.0+cu128";
        torch.marker = "sys_platform == \"linux\"";
        torch.requires_python = ">=3.9.0";
        torch.dependencies = {{"filelock", std::nullopt}, {"nvidia-cudnn-cu12", "9.10.2.21"}};
        torch.index = "https://download.pytorch.org/whl/cu128";
        pylock::LockWheel wheel;
        wheel.name = "torch-2.8.0+cu128-cp311-cp311-manylinux_2_28_x86_64.whl";
        wheel.url = "https://download.pytorch.org/whl/cu128/torch-2.8.0%2Bcu128-cp311.whl";
        wheel.path = "cache/torch.whl";
        wheel.size = 888000000;
        wheel.upload_time = "2025-08-06T14:53:56.123456Z";
        wheel.hashes = {{"sha256", std::string(64, '1')}, {"sha512", std::string(128, '2')}};
        torch.wheels = {wheel};
        torch.rootlock = pylock::PackageRootlockData{
            {"libc10.so", "libtorch.so"}, {"libcudart.so.12"}, true, {}, std::nullopt,
            {"sm_86", "compute_90"}};
        lock.packages = {torch};
        pylock::LockRootlockData data;
        data.recipe = "recipes/demo.toml";
        data.recipe_sha256 = std::string(64, '3');
        data.image_name = "demo";
        data.output = "out/demo.tar.zst";
        data.venv = "/opt/venv";
        data.source_date_epoch = 1754000000;
        data.target = pylock::LockTarget{"3.11", "3.11.2",     "2.36",        "x86_64",
                                         "12.8", "570.133.07", "2.8.0+cu128", {"8.6", "9.0"}};
        data.base =
            pylock::LockBase{"debian",
                             "",
                             "",
                             std::string(64, '4'),
                             123456,
                             "bookworm",
                             "http://deb.debian.org/debian",
                             "minbase",
                             "arm64",
                             {"ca-certificates", "python3=3.11.2-1+b1"},
                             {{"debian",
                               "http://deb.debian.org/debian",
                               "bookworm",
                               {"main"},
                               "1762077600",
                               "",
                               "",
                               ""},
                              {"security",
                               "http://security.debian.org/debian-security",
                               "bookworm-security",
                               {"main", "non-free-firmware"},
                               "1762164000",
                               "https://snapshot.debian.org/archive/"
                               "debian-security",
                               "keys/security.gpg",
                               std::string(64, 'c')}},
                             {{"libc6", "2.36-9+deb12u13", "amd64", "security", "main",
                               "pool/updates/main/g/glibc/libc6_2.36-9+deb12u13_amd64.deb", 2757936,
                               std::string(64, 'a'), "glibc", ""},
                              {"python3", "3.11.2-1+b1", "amd64", "debian", "main",
                               "pool/main/p/python3-defaults/python3_3.11.2-1+b1_amd64.deb", 26484,
                               std::string(64, 'b'), "python3-defaults", "3.11.2-1"}}};
        data.indexes = {{"pytorch", "https://download.pytorch.org/whl/cu128", {"torch"}},
                        {"pypi", "https://pypi.org/simple", {}}};
        data.requirements = {"torch==2.8.0", "numpy<2"};
        data.environment = {{"CUDA_HOME", "/usr/local/cuda"}, {"LANG", "C.UTF-8"}};
        data.host_provides = {"libcuda.so.1", "libnvidia-ml.so.1"};
        data.closure_ok = false;
        data.closure_objects = 1234;
        data.problems = {{"missing-soname", "libfoo.so.1", "needed by x.so"}};
        lock.rootlock = data;
        REQUIRE(pylock::canonicalize(lock) == lock);

        auto parsed = pylock::read_pylock(pylock::write_pylock(lock), k_file);
        if (!parsed.ok())
            FAIL(parsed.error().text());
        CHECK(parsed.value() == lock);
    }

    TEST_CASE("text the writer produced is written again byte for byte") {
        const std::string golden = R"(# This file is @generated by rootlock. Do not edit it by hand.
lock-version = "1.0"
requires-python = "==3.11.*"
created-by = "rootlock"

[[packages]]
name = "a"
version = "1"
dependencies = [
    { name = "b" },
]
wheels = [
    { name = "a-1-py3-none-any.whl", upload-time = 2024-01-02T03:04:05.120Z, url = "https://f/a-1-py3-none-any.whl", size = 5, hashes = { sha256 = "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee" } },
    { path = "w\\b.whl", hashes = { "odd key" = "\u0000\"" } },
]

[[packages]]
name = "b"
marker = ""

[packages.tool.rootlock]
provides = []
needs = [
    "libc\u000A.so",
]
requested = false

[tool.rootlock]
recipe = "r.toml"
recipe-sha256 = "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee"
image-name = "é€"
output = ""
venv = ""
source-date-epoch = 0
requirements = []
environment = []
host-provides = []
closure-ok = false
closure-objects = 0
problems = []

[tool.rootlock.target]
python = "3.11"
python-full = ""
glibc = "2.36"
arch = "aarch64"
cuda = ""
driver = ""
torch = ""

[tool.rootlock.base]
kind = "debian"
suite = "bookworm"
include = [
    "python3",
]
)";
        auto parsed = pylock::read_pylock(golden, k_file);
        if (!parsed.ok())
            FAIL(parsed.error().text());
        CHECK(parsed->packages[0].wheels[1].hashes.at("odd key") == "\0\""s);
        CHECK(parsed->packages[1].rootlock->needs[0] == "libc\n.so");
        CHECK(pylock::write_pylock(parsed.value()) == golden);
    }

    TEST_CASE("bytes that are not UTF-8 come back as U+FFFD, one for each bad byte") {
        pylock::Lock lock;
        pylock::LockPackage package;
        package.name = "a";
        package.version = "1\xff";
        package.marker = "x\xc3";
        lock.packages = {package};
        auto parsed = pylock::read_pylock(pylock::write_pylock(lock), k_file);
        if (!parsed.ok())
            FAIL(parsed.error().text());
        CHECK(parsed->packages[0].version == "1\xef\xbf\xbd");
        CHECK(parsed->packages[0].marker == "x\xef\xbf\xbd");
    }

    TEST_CASE("200 generated locks with awkward strings survive write, read and write again") {
        Random random;
        for (int round = 0; round < 200; ++round) {
            CAPTURE(round);
            const pylock::Lock lock = random_lock(random);
            const std::string text = pylock::write_pylock(lock);
            auto parsed = pylock::read_pylock(text, k_file);
            if (!parsed.ok())
                FAIL_CHECK(std::string(parsed.error().text() + "\n" + text));
            REQUIRE(parsed.ok());
            CHECK(parsed.value() == pylock::canonicalize(lock));
            CHECK(pylock::write_pylock(parsed.value()) == text);
        }
    }
}

}  // namespace ROOTLOCK_UNIT_ID
