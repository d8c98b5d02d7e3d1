// Unit tests for the pylock reader: foreign PEP 751 locks as uv and pip write them, lock-version
// rules, verbatim upload times, and one exact located error for every kind of malformed lock.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>

#include "pylock/pylock.hpp"

using namespace rootlock;

namespace {

const std::string k_file = "pylock.demo.toml";
const std::string k_sha = std::string(64, 'e');

// The smallest valid lock with one package, before `tail`.
std::string lock_with(const std::string& package_lines, const std::string& tail = "") {
    return "lock-version = \"1.0\"\ncreated-by = \"x\"\n\n[[packages]]\n" + package_lines + tail;
}

const std::string k_wheel =
    "wheels = [{ url = \"https://f/a-1-py3-none-any.whl\", hashes = { sha256 = \"" +
    std::string(64, 'e') + "\" } }]\n";

const std::string k_tool = "\n[tool.rootlock]\nrecipe = \"r.toml\"\nrecipe-sha256 = \"" +
                           std::string(64, 'e') +
                           "\"\nsource-date-epoch = 0\n\n[tool.rootlock.target]\npython = "
                           "\"3.11\"\nglibc = \"2.36\"\narch = \"x86_64\"\n\n"
                           "[tool.rootlock.base]\nkind = \"tarball\"\n";

const std::string k_archive =
    "archives = [{ name = \"debian\", url = \"http://d\", suite = \"bookworm\", components = "
    "[\"main\"], date = \"1\" }]\n";

// One debs entry of a Debian base with the given hash field, pool file and archive.
std::string deb_with(const std::string& hash, const std::string& filename = "p/x.deb",
                     const std::string& archive = "debian") {
    return "debs = [{ name = \"x\", version = \"1\", architecture = \"all\", archive = \"" +
           archive + "\", component = \"main\", filename = \"" + filename + "\", size = 1, " +
           hash + " }]\n";
}

}  // namespace

TEST_SUITE("rootlock::pylock") {
    TEST_CASE("a foreign lock keeps what the model holds and skips sdists, vcs and other tools") {
        const std::string text = R"(# written by another tool
lock-version = '1.0'
environments = ["sys_platform == 'linux'", "sys_platform == 'darwin'"]
requires-python = '>=3.9'
extras = []
dependency-groups = ['dev']
default-groups = ['default']
created-by = 'uv'
future-key = { anything = [1, 2.5, true] }

[[packages]]
name = 'attrs'
version = '25.3.0'
index = 'https://pypi.org/simple'
sdist = { url = 'https://f/attrs-25.3.0.tar.gz', upload-time = 2025-03-13T11:10:22Z, size = 810032, hashes = { sha256 = 'eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee' } }
wheels = [
    { url = 'https://f/attrs-25.3.0-py3-none-any.whl', upload-time = 2025-03-13T11:10:21.000Z, size = 63815, hashes = { sha256 = 'eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee' } },
    { name = 'attrs-25.3.0-py2-none-any.whl', path = 'local/attrs.whl', hashes = { sha512 = 'dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd', blake2b = 'xyz' } },
]
attestation-identities = [{ kind = 'GitHub', repository = 'python-attrs/attrs' }]

[packages.tool.other]
setting = 1

[[packages]]
name = 'my-project'
directory = { path = '.', editable = true }
dependencies = [{ name = 'attrs' }, { name = 'spam', vcs = { url = 'https://g/spam' } }]

[[packages]]
name = 'spam'
marker = "sys_platform == 'linux'"
requires-python = '>=3.8'
vcs = { type = 'git', url = 'https://g/spam', commit-id = 'abc' }

[tool.pdm]
hashes = 'whatever'
)";
        auto parsed = pylock::read_pylock(text, k_file);
        if (!parsed.ok())
            FAIL(parsed.error().text());
        const pylock::Lock& lock = parsed.value();
        CHECK(lock.lock_version == "1.0");
        CHECK(lock.created_by == "uv");
        CHECK(lock.requires_python == ">=3.9");
        CHECK(lock.environments.size() == 2);
        CHECK_FALSE(lock.rootlock.has_value());
        REQUIRE(lock.packages.size() == 3);
        const pylock::LockPackage& attrs = lock.packages[0];
        CHECK(attrs.version == "25.3.0");
        CHECK(attrs.index == "https://pypi.org/simple");
        CHECK_FALSE(attrs.rootlock.has_value());
        REQUIRE(attrs.wheels.size() == 2);
        CHECK(attrs.wheels[0].name.empty());
        CHECK(attrs.wheels[0].upload_time == "2025-03-13T11:10:21.000Z");
        CHECK(attrs.wheels[0].size == 63815U);
        CHECK(attrs.wheels[0].hashes.at("sha256") == k_sha);
        CHECK(attrs.wheels[1].path == "local/attrs.whl");
        CHECK_FALSE(attrs.wheels[1].size.has_value());
        CHECK(attrs.wheels[1].hashes.size() == 2);
        CHECK(attrs.wheels[1].hashes.at("blake2b") == "xyz");
        const pylock::LockPackage& project = lock.packages[1];
        CHECK(project.version.empty());
        CHECK(project.wheels.empty());
        CHECK(project.dependencies == std::vector<pylock::PackageDependency>{
                                          {"attrs", std::nullopt}, {"spam", std::nullopt}});
        CHECK(lock.packages[2].marker == "sys_platform == 'linux'");
        CHECK(lock.packages[2].requires_python == ">=3.8");
    }

    TEST_CASE("a newer minor lock-version is read, and an empty packages array is valid") {
        auto parsed = pylock::read_pylock(
            "lock-version = \"1.1\"\ncreated-by = \"pip\"\npackages = []\n", k_file);
        REQUIRE(parsed.ok());
        CHECK(parsed->lock_version == "1.1");
        CHECK(parsed->packages.empty());
    }

    TEST_CASE("upload times are kept as written, even after non-ASCII text on the line") {
        const std::string text = lock_with(
            "name = \"a\"\nwheels = [{ name = \"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80.whl\", "
            "upload-time = 2024-01-02 03:04:05.120000z, path = \"p\", hashes = { sha256 = \"" +
            k_sha + "\" } }]\n");
        auto parsed = pylock::read_pylock(text, k_file);
        if (!parsed.ok())
            FAIL(parsed.error().text());
        CHECK(parsed->packages[0].wheels[0].upload_time == "2024-01-02 03:04:05.120000z");
    }

    TEST_CASE("malformed locks are rejected with one located error") {
        struct Case {
            std::string text;
            std::string error;
        };
        const std::string e = k_file + ":";
        const std::string head = "lock-version = \"1.0\"\ncreated-by = \"x\"\n";
        const std::string wheel_head = "name = \"a\"\nwheels = [{ url = \"u\", ";
        const Case cases[] = {
            {"lock-version = \"1.0\n",
             e + "1:20: Error while parsing string: unescaped control characters other than TAB "
                 "(U+0009) are explicitly prohibited"},
            {"created-by = \"x\"\npackages = []\n",
             e + "1:1: missing required key \"lock-version\""},
            {"lock-version = 1\ncreated-by = \"x\"\npackages = []\n",
             e + "1:16: lock-version: expected a string, found an integer"},
            {"lock-version = \"2.0\"\ncreated-by = \"x\"\npackages = []\n",
             e + "1:16: unsupported lock-version 2.0: this rootlock reads 1.x"},
            {"lock-version = \"1\"\ncreated-by = \"x\"\npackages = []\n",
             e + "1:16: lock-version \"1\" is not of the form MAJOR.MINOR"},
            {"lock-version = \"1.0\"\npackages = []\n",
             e + "1:1: missing required key \"created-by\""},
            {head, e + "1:1: missing required key \"packages\""},
            {head + "[packages]\nname = \"a\"\n",
             e + "3:1: packages: expected an array of tables, found a table"},
            {head + "packages = [1]\n",
             e + "3:13: packages[0]: expected a table, found an integer"},
            {lock_with("version = \"1\"\n"),
             e + "4:1: packages[0] is missing required key \"name\""},
            {lock_with("name = \"Foo_Bar\"\n"),
             e + "5:8: packages[0].name \"Foo_Bar\" is not normalized (PEP 503: \"foo-bar\")"},
            {lock_with("name = \"\"\n"), e + "5:8: packages[0].name is empty"},
            {lock_with("name = \"a\"\nversion = 1.0\n"),
             e + "6:11: packages[0].version: expected a string, found a float"},
            {lock_with("name = \"a\"\nwheels = { url = \"u\" }\n"),
             e + "6:10: packages[0].wheels: expected an array of tables, found a table"},
            {lock_with(wheel_head + "size = 1 }]\n"),
             e + "6:11: packages[0].wheels[0] is missing required key \"hashes\""},
            {lock_with(wheel_head + "hashes = {} }]\n"),
             e + "6:33: 1 artifact has an empty hashes table (PEP 751 requires a hash, and an "
                 "unverified file is not installed): a: wheel u (6:33)"},
            {lock_with("name = \"a\"\nvcs = { type = \"git\", url = \"u\" }\n"),
             e + "6:7: packages[0].vcs is missing required key \"commit-id\""},
            {lock_with("name = \"a\"\nvcs = { url = \"u\", commit-id = \"c\" }\n"),
             e + "6:7: packages[0].vcs is missing required key \"type\""},
            {lock_with("name = \"a\"\nvcs = { type = \"git\", commit-id = \"c\" }\n"),
             e + "6:7: packages[0].vcs has neither \"url\" nor \"path\""},
            {lock_with("name = \"a\"\nvcs = \"git+https://u\"\n"),
             e + "6:7: packages[0].vcs: expected a table, found a string"},
            {lock_with("name = \"a\"\ndirectory = { editable = true }\n"),
             e + "6:13: packages[0].directory is missing required key \"path\""},
            {lock_with("name = \"a\"\ndirectory = { path = \".\", editable = \"yes\" }\n"),
             e + "6:38: packages[0].directory.editable: expected a boolean, found a string"},
            {lock_with("name = \"a\"\narchive = { url = \"u\" }\n"),
             e + "6:11: packages[0].archive is missing required key \"hashes\""},
            {lock_with("name = \"a\"\nsdist = { hashes = { sha256 = \"" + k_sha + "\" } }\n"),
             e + "6:9: packages[0].sdist has neither \"url\" nor \"path\""},
            {lock_with("name = \"a\"\nsdist = { url = \"u\", size = -2, hashes = { sha256 = \"" +
                       k_sha + "\" } }\n"),
             e + "6:29: packages[0].sdist.size -2 is negative"},
            {lock_with("name = \"a\"\ndirectory = { path = \".\" }\nwheels = [{ url = \"u\", "
                       "hashes = { sha256 = \"" +
                       k_sha + "\" } }]\n"),
             e + "7:10: packages[0] has both \"directory\" and \"wheels\" (PEP 751: vcs, "
                 "directory and archive each exclude every other source)"},
            {lock_with(wheel_head + "hashes = { sha256 = \"abc\" } }]\n"),
             e + "6:44: packages[0].wheels[0].hashes.sha256 \"abc\" is not 64 lowercase hex "
                 "digits"},
            {lock_with(wheel_head + "hashes = { sha256 = \"" + std::string(64, 'E') + "\" } }]\n"),
             e + "6:44: packages[0].wheels[0].hashes.sha256 \"" + std::string(64, 'E') +
                 "\" is not 64 lowercase hex digits"},
            {lock_with(wheel_head + "hashes = { sha256 = 1 } }]\n"),
             e + "6:44: packages[0].wheels[0].hashes.sha256: expected a string, found an integer"},
            {lock_with(wheel_head + "size = -1, hashes = { sha256 = \"" + k_sha + "\" } }]\n"),
             e + "6:31: packages[0].wheels[0].size -1 is negative"},
            {lock_with(wheel_head + "size = \"1\", hashes = { sha256 = \"" + k_sha + "\" } }]\n"),
             e + "6:31: packages[0].wheels[0].size: expected an integer, found a string"},
            {lock_with("name = \"a\"\nwheels = [{ name = \"n\", hashes = { sha256 = \"" + k_sha +
                       "\" } }]\n"),
             e + "6:11: packages[0].wheels[0] has neither \"url\" nor \"path\""},
            {lock_with(wheel_head +
                       "upload-time = \"2024-01-01T00:00:00Z\", hashes = { sha256 = \"" + k_sha +
                       "\" } }]\n"),
             e + "6:38: packages[0].wheels[0].upload-time: expected a date-time, found a string"},
            {lock_with(wheel_head + "upload-time = 2024-01-01, hashes = { sha256 = \"" + k_sha +
                       "\" } }]\n"),
             e + "6:38: packages[0].wheels[0].upload-time: expected a date-time, found a date"},
            {lock_with("name = \"a\"\ndependencies = [{ version = \"1\" }]\n"),
             e + "6:17: packages[0].dependencies[0] is missing required key \"name\""},
            {lock_with("name = \"a\"\n" + k_wheel, k_tool + "colour = \"blue\"\n"),
             e + "20:1: unknown key \"colour\" in tool.rootlock.base"},
            {lock_with("name = \"a\"\n" + k_wheel,
                       "\n[tool.rootlock]\nrecipe = \"r\"\nsource-date-epoch = 0\n"),
             e + "8:1: tool.rootlock is missing required key \"recipe-sha256\""},
            {lock_with(
                 "name = \"a\"\n" + k_wheel,
                 "\n[tool.rootlock]\nrecipe = \"r\"\nrecipe-sha256 = \"" + k_sha +
                     "\"\nsource-date-epoch = \"0\"\ntarget = 1\nbase = {kind = \"debian\"}\n"),
             e + "11:21: tool.rootlock.source-date-epoch: expected an integer, found a string"},
            {lock_with("name = \"a\"\n" + k_wheel,
                       "\n[tool.rootlock]\nrecipe = \"r\"\nrecipe-sha256 = \"" + k_sha +
                           "\"\nsource-date-epoch = 0\ntarget = 1\nbase = {kind = \"debian\"}\n"),
             e + "12:10: tool.rootlock.target: expected a table, found an integer"},
            {lock_with("name = \"a\"\n" + k_wheel, k_tool + "sha256 = \"x\"\n"),
             e + "20:10: tool.rootlock.base.sha256 \"x\" is not 64 lowercase hex digits"},
            {lock_with("name = \"a\"\n" + k_wheel,
                       "\n[tool.rootlock]\nrecipe = \"r\"\nrecipe-sha256 = \"" + k_sha +
                           "\"\nsource-date-epoch = 0\ntarget = { python = \"3\", glibc = \"2\", "
                           "arch = \"a\" }\nbase = {kind = \"zip\"}\n"),
             e + "13:16: tool.rootlock.base.kind \"zip\" is neither \"tarball\" nor \"debian\""},
            {lock_with("name = \"a\"\n" + k_wheel, k_tool + k_archive + deb_with("sha256 = \"q\"")),
             e + "21:141: tool.rootlock.base.debs[0].sha256 \"q\" is not 64 lowercase hex digits"},
            {lock_with("name = \"a\"\n" + k_wheel,
                       k_tool + k_archive + deb_with("sha256 = \"" + k_sha + "\"", "../x.deb")),
             e + "21:111: tool.rootlock.base.debs[0].filename \"../x.deb\" leaves the archive "
                 "root"},
            {lock_with(
                 "name = \"a\"\n" + k_wheel,
                 k_tool + k_archive + deb_with("sha256 = \"" + k_sha + "\"", "p/x.deb", "other")),
             e + "21:70: tool.rootlock.base.debs[0].archive \"other\" names no archive of the "
                 "base"},
            {lock_with("name = \"a\"\n" + k_wheel, k_tool + "\n[tool.rootlock.extra]\n"),
             e + "21:16: unknown key \"extra\" in tool.rootlock"},
            {lock_with("name = \"a\"\n" + k_wheel + "\n[packages.tool.rootlock]\nrequested = 1\n"),
             e + "9:13: packages[0].tool.rootlock.requested: expected a boolean, found an integer"},
            {lock_with("name = \"a\"\n" + k_wheel + "\n[packages.tool.rootlock]\nprovide = []\n"),
             e + "9:1: unknown key \"provide\" in packages[0].tool.rootlock"},
            {lock_with("name = \"a\"\n" + k_wheel +
                       "\n[packages.tool.rootlock]\nneeds = [\"a\", 2]\n"),
             e + "9:15: packages[0].tool.rootlock.needs[1]: expected a string, found an integer"},
            {lock_with("name = \"a\"\n" + k_wheel +
                       "\n[packages.tool.rootlock]\narchitectures = [\"sm_86\", \"sm86\"]\n"),
             e + "9:17: packages[0].tool.rootlock.architectures: \"sm86\" is not an architecture "
                 "name such as sm_86: it does not start with sm_ or compute_"},
            {lock_with("name = \"a\"\n" + k_wheel,
                       "\n[tool.rootlock]\nrecipe = \"r.toml\"\nrecipe-sha256 = \"" +
                           std::string(64, 'e') +
                           "\"\nsource-date-epoch = 0\n\n[tool.rootlock.target]\npython = "
                           "\"3.11\"\nglibc = \"2.36\"\narch = \"x86_64\"\ngpus = [\"86\"]\n\n"
                           "[tool.rootlock.base]\nkind = \"tarball\"\n"),
             e + "17:8: tool.rootlock.target.gpus: \"86\" is not a compute capability such as "
                 "8.6: it has no dot between major and minor"},
            {head + "environments = \"linux\"\npackages = []\n",
             e + "3:16: environments: expected an array of strings, found a string"},
            {head + "requires-python = 3.11\npackages = []\n",
             e + "3:19: requires-python: expected a string, found a float"},
            {head + "packages = []\ntool = 1\n",
             e + "4:8: tool: expected a table, found an integer"},
            {head + "packages = []\n[tool.rootlock]\nrecipe = \"r\"\nrecipe-sha256 = \"" + k_sha +
                 "\"\nsource-date-epoch = 0\nenvironment = [{ name = \"A\" }]\n"
                 "target = { python = \"3\", glibc = \"2\", arch = \"a\" }\nbase = {kind = "
                 "\"debian\"}\n",
             e + "8:16: tool.rootlock.environment[0] is missing required key \"value\""},
            {head + "packages = []\n[tool.rootlock]\nrecipe = \"r\"\nrecipe-sha256 = \"" + k_sha +
                 "\"\nsource-date-epoch = 9223372036854775808\n",
             e + "7:40: Error while parsing decimal integer: '9223372036854775808' is not "
                 "representable in 64 bits"},
            {"lock-version = \"1.0\"\ncreated-by = \"\xff\"\n",
             e + "2:14: Encountered invalid utf-8 sequence"},
        };
        for (const Case& c : cases) {
            CAPTURE(c.text);
            auto parsed = pylock::read_pylock(c.text, k_file);
            REQUIRE_FALSE(parsed.ok());
            CHECK(parsed.error().text() == c.error);
        }
    }

    TEST_CASE("of several problems the one nearest the start of the file is reported") {
        const std::string text = "created-by = 1\nlock-version = 2\npackages = [1]\n";
        auto parsed = pylock::read_pylock(text, k_file);
        REQUIRE_FALSE(parsed.ok());
        CHECK(parsed.error().text() ==
              k_file + ":1:14: created-by: expected a string, found an integer");
    }

    TEST_CASE("mangled locks give a lock or a located error, never a crash") {
        const std::string seed_text =
            lock_with("name = \"a\"\nversion = \"1\"\n" + k_wheel +
                          "\n[packages.tool.rootlock]\nprovides = [\"x\"]\n",
                      k_tool);
        uint32_t state = 424242;  // a fixed LCG: the same inputs on every run
        auto next = [&] {
            state = state * 1103515245U + 12345U;
            return state >> 16;
        };
        const char alphabet[] = {'"', '[', ']', '{', '}', '=', ',', '\n', '.', '-', '1', 'a', '\\'};
        int accepted = 0;
        for (int round = 0; round < 2000; ++round) {
            std::string text = seed_text;
            const uint32_t edits = 1 + next() % 3;
            for (uint32_t i = 0; i < edits; ++i) {
                const size_t at = next() % (text.size() + 1);
                const char c = alphabet[next() % sizeof(alphabet)];
                if (next() % 2 == 0 && at < text.size())
                    text[at] = c;
                else
                    text.insert(at, 1, c);
            }
            auto parsed = pylock::read_pylock(text, k_file);
            if (parsed.ok())
                ++accepted;
            else
                CHECK(parsed.error().text().rfind(k_file + ":", 0) == 0);
        }
        CHECK(accepted > 0);
        CHECK(accepted < 2000);
    }
}
