// Unit tests for the recipe parser: one full recipe read field by field, a table of malformed
// recipes each with the exact complete list of errors, and the recipes shipped in recipes/.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "recipe/recipe.hpp"

namespace ROOTLOCK_UNIT_ID {

using rootlock::recipe::parse_recipe;
using rootlock::recipe::parse_recipe_all;
using rootlock::recipe::parse_recipe_file;

namespace {

const std::string k_file = "r.toml";

std::vector<std::string> error_texts(std::string_view text) {
    std::vector<std::string> texts;
    for (const auto& error : parse_recipe_all(text, k_file).errors)
        texts.push_back(error.text());
    return texts;
}

std::string joined(const std::vector<std::string>& lines) {
    std::string text;
    for (const auto& line : lines)
        text += line + "\n";
    return text;
}

// A minimal valid recipe; the malformed cases below are variations of it.
const std::string k_minimal =
    "[image]\n"
    "name = \"demo\"\n"
    "[base]\n"
    "debian = { suite = \"bookworm\" }\n"
    "[python]\n"
    "version = \"3.11\"\n";

struct Malformed {
    const char* what;
    std::string text;
    std::vector<std::string> errors;
};

}  // namespace

TEST_SUITE("rootlock::recipe") {
    TEST_CASE("a full recipe is read field by field") {
        const std::string text = R"([image]
name = "train-cu128"
output = "images/train.tar.xz"

[base]
tarball = "https://example.invalid/debian-12-standard_12.7-1_amd64.tar.zst"
sha256 = "ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef0123456789"

[python]
version = "3.11"
venv = "/opt/venv"

[torch]
version = "2.8.0"
cuda = "12.8"

[cuda]
driver = "570.133.07"
gpus = ["8.6", "9.0"]

[[index]]
name = "pytorch-cu128"
url = "https://example.invalid/whl/cu128"
packages = ["torch", "triton", "NVIDIA_*"]

[[index]]
name = "local"
url = "file:///srv/wheels"

[packages]
requires = ["transformers==4.55.*", "numpy<2.3"]

[environment]
LD_LIBRARY_PATH = "/opt/extra/lib"
A_FIRST = "1"

[host]
provides = ["libfoo.so.1"]

[loader]
library-paths = ["/opt/venv/lib/python3.11/site-packages/nvidia/cudnn/lib", "/opt/extra/lib"]

[files]
"/etc/pip.conf" = "[global]\nno-index = true\n"
"/etc/motd" = "Built by rootlock\n"
)";
        const auto parsed = parse_recipe(text, k_file);
        if (!parsed.ok())
            FAIL((parsed.ok() ? "" : parsed.error().text()));
        const auto& recipe = parsed.value();
        CHECK(recipe.image.name == "train-cu128");
        CHECK(recipe.image.output == "images/train.tar.xz");
        REQUIRE(recipe.base.tarball.has_value());
        CHECK(*recipe.base.tarball ==
              "https://example.invalid/debian-12-standard_12.7-1_amd64.tar.zst");
        CHECK(recipe.base.sha256 ==
              "abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789");
        CHECK_FALSE(recipe.base.debian.has_value());
        CHECK(recipe.python.version == "3.11");
        CHECK(recipe.python.venv == "/opt/venv");
        REQUIRE(recipe.torch.has_value());
        CHECK(recipe.torch->version == "2.8.0");
        CHECK(recipe.torch->cuda == "12.8");
        REQUIRE(recipe.cuda.has_value());
        CHECK(recipe.cuda->driver == "570.133.07");
        CHECK(recipe.cuda->gpus == std::vector<std::string>{"8.6", "9.0"});
        REQUIRE(recipe.indexes.size() == 2);
        CHECK(recipe.indexes[0].name == "pytorch-cu128");
        CHECK(recipe.indexes[0].url == "https://example.invalid/whl/cu128");
        CHECK(recipe.indexes[0].packages ==
              std::vector<std::string>{"torch", "triton", "nvidia-*"});
        CHECK(recipe.indexes[1].name == "local");
        CHECK(recipe.indexes[1].url == "file:///srv/wheels");
        CHECK(recipe.indexes[1].packages.empty());
        CHECK(recipe.requirements == std::vector<std::string>{"transformers==4.55.*", "numpy<2.3"});
        CHECK(recipe.environment == std::vector<std::pair<std::string, std::string>>{
                                        {"A_FIRST", "1"}, {"LD_LIBRARY_PATH", "/opt/extra/lib"}});
        CHECK(recipe.host_provides == std::vector<std::string>{"libfoo.so.1"});
        CHECK(recipe.library_paths ==
              std::vector<std::string>{"/opt/venv/lib/python3.11/site-packages/nvidia/cudnn/lib",
                                       "/opt/extra/lib"});
        CHECK(recipe.files == std::vector<std::pair<std::string, std::string>>{
                                  {"/etc/motd", "Built by rootlock\n"},
                                  {"/etc/pip.conf", "[global]\nno-index = true\n"}});
    }

    TEST_CASE("library paths keep the order written and files are sorted by path") {
        const auto parsed = parse_recipe(k_minimal +
                                             "[loader]\nlibrary-paths = [\"/z/lib\", \"/a/lib\", "
                                             "\"/m\"]\n[files]\n\"/z\" = \"\"\n\"/a/b\" = "
                                             "\"\"\"\nx\n\"\"\"\n\"/a.b\" = \"\\u0000\"\n",
                                         k_file);
        if (!parsed.ok())
            FAIL((parsed.ok() ? "" : parsed.error().text()));
        const auto& recipe = parsed.value();
        CHECK(recipe.library_paths == std::vector<std::string>{"/z/lib", "/a/lib", "/m"});
        CHECK(recipe.files == std::vector<std::pair<std::string, std::string>>{
                                  {"/a.b", std::string(1, '\0')}, {"/a/b", "x\n"}, {"/z", ""}});
    }

    TEST_CASE("python.compile-bytecode is a boolean") {
        const auto on = parse_recipe(k_minimal + "compile-bytecode = true\n", k_file);
        REQUIRE_MESSAGE(on.ok(), (on.ok() ? "" : on.error().text()));
        CHECK(on.value().python.compile_bytecode);
        const auto wrong = parse_recipe(k_minimal + "compile-bytecode = \"yes\"\n", k_file);
        REQUIRE_FALSE(wrong.ok());
        CHECK(wrong.error().text() ==
              "r.toml:7:20: python.compile-bytecode: expected a boolean, found a string");
    }

    TEST_CASE("image.entrypoint and image.cmd are arrays of strings, kept as written") {
        const std::string image = "[image]\nname = \"demo\"\n";
        const std::string rest =
            "[base]\ndebian = { suite = \"bookworm\" }\n[python]\nversion = \"3.11\"\n";
        const auto parsed =
            parse_recipe(image +
                             "entrypoint = [\"/opt/venv/bin/python\", \"-m\", \"serve\"]\ncmd = "
                             "[\"--port\", \"8000\"]\n" +
                             rest,
                         k_file);
        REQUIRE_MESSAGE(parsed.ok(), (parsed.ok() ? "" : parsed.error().text()));
        CHECK(parsed.value().image.entrypoint ==
              std::vector<std::string>{"/opt/venv/bin/python", "-m", "serve"});
        CHECK(parsed.value().image.cmd == std::vector<std::string>{"--port", "8000"});
        const auto absent = parse_recipe(k_minimal, k_file);
        REQUIRE(absent.ok());
        CHECK(absent.value().image.entrypoint.empty());
        CHECK(absent.value().image.cmd.empty());
        CHECK(error_texts(image + "entrypoint = \"python -m serve\"\n" + rest) ==
              std::vector<std::string>{
                  "r.toml:3:14: image.entrypoint: expected an array of strings, found a string"});
        CHECK(error_texts(image + "cmd = [\"--port\", 8000]\n" + rest) ==
              std::vector<std::string>{"r.toml:3:18: image.cmd[1]: expected a string, found an "
                                       "integer"});
        CHECK(error_texts(image + "cmd = []\n" + rest) ==
              std::vector<std::string>{
                  "r.toml:3:7: image.cmd is empty (leave it out for the base's default)"});
    }

    TEST_CASE("empty [loader] and [files] tables give empty fields") {
        const auto parsed = parse_recipe(k_minimal + "[loader]\n[files]\n", k_file);
        if (!parsed.ok())
            FAIL((parsed.ok() ? "" : parsed.error().text()));
        CHECK(parsed.value().library_paths.empty());
        CHECK(parsed.value().files.empty());
    }

    TEST_CASE("every malformed recipe reports its exact complete list of errors") {
        // k_minimal's lines: 1 [image], 2 name, 3 [base], 4 debian, 5 [python], 6 version.
        const std::string image_base =
            "[base]\ndebian = { suite = \"bookworm\" }\n[python]\nversion = \"3.11\"\n";
        const std::string torch_tail =
            "[torch]\nversion = \"2.8.0\"\ncuda = \"12.8\"\n[cuda]\ndriver = \"570.133.07\"\n";
        const std::vector<Malformed> cases = {
            {"a TOML syntax error",
             "[image\nname = \"demo\"\n",
             {"r.toml:1:7: Error while parsing table header: expected ']', saw '\\n'"}},
            {"a misspelt key, with a suggestion",
             "[image]\nnmae = \"demo\"\n" + image_base,
             {"r.toml:1:1: [image] is missing required key \"name\"",
              "r.toml:2:1: unknown key \"nmae\" in [image]; did you mean \"name\"?"}},
            {"an unknown key far from any known one",
             k_minimal + "[image.extra]\n",
             {"r.toml:7:8: unknown key \"extra\" in [image]"}},
            {"a misspelt table, with a suggestion",
             "[image]\nname = \"demo\"\n[base]\ndebian = { suite = \"bookworm\" }\n[pyton]\n"
             "version = \"3.11\"\n",
             {"r.toml:1:1: missing required table [python]",
              "r.toml:5:2: unknown table [pyton]; did you mean [python]?"}},
            {"a table that is a string",
             "image = \"demo\"\n" + image_base,
             {"r.toml:1:9: image: expected a table, found a string"}},
            {"an unknown top-level key",
             "title = \"x\"\n" + k_minimal,
             {"r.toml:1:1: unknown key \"title\" in the recipe"}},
            {"index entries that are not tables",
             "index = [\"a\"]\n" + k_minimal,
             {"r.toml:1:10: index[0]: expected a table, found a string"}},
            {"a wrong type",
             "[image]\nname = 42\n" + image_base,
             {"r.toml:2:8: image.name: expected a string, found an integer"}},
            {"a missing table",
             "[image]\nname = \"demo\"\n[python]\nversion = \"3.11\"\n",
             {"r.toml:1:1: missing required table [base]"}},
            {"an image name that is not kebab-case",
             "[image]\nname = \"Demo_Image\"\n" + image_base,
             {"r.toml:2:8: image.name \"Demo_Image\" is not kebab-case (lowercase letters and "
              "digits joined by single hyphens)"}},
            {"an image output without an archive suffix",
             "[image]\nname = \"demo\"\noutput = \"demo.zip\"\n" + image_base,
             {"r.toml:3:10: image.output \"demo.zip\" does not end in .tar.zst, .tar.xz, .tar.gz "
              "or .tar"}},
            {"a sha256 that is not 64 hex digits",
             "[image]\nname = \"demo\"\n[base]\ntarball = \"base.tar\"\nsha256 = \"abc\"\n"
             "[python]\nversion = \"3.11\"\n",
             {"r.toml:5:10: base.sha256 \"abc\" is not 64 hexadecimal digits"}},
            {"a tarball URL with an unsupported scheme",
             "[image]\nname = \"demo\"\n[base]\ntarball = \"ftp://example.invalid/b.tar\"\n"
             "sha256 = \"" +
                 std::string(64, 'a') + "\"\n[python]\nversion = \"3.11\"\n",
             {"r.toml:4:11: base.tarball \"ftp://example.invalid/b.tar\" is neither a path nor an "
              "http://, https:// or file:// URL"}},
            {"a tarball without its sha256",
             "[image]\nname = \"demo\"\n[base]\ntarball = \"base.tar\"\n[python]\n"
             "version = \"3.11\"\n",
             {"r.toml:3:1: [base] is missing required key \"sha256\""}},
            {"a base with both tarball and debian",
             "[image]\nname = \"demo\"\n[base]\ntarball = \"base.tar\"\nsha256 = \"" +
                 std::string(64, 'a') +
                 "\"\ndebian = { suite = \"bookworm\" }\n[python]\nversion = \"3.11\"\n",
             {"r.toml:3:1: [base] sets both tarball and debian; choose one"}},
            {"a base with neither tarball nor debian",
             "[image]\nname = \"demo\"\n[base]\n[python]\nversion = \"3.11\"\n",
             {"r.toml:3:1: [base] needs either tarball (with sha256) or debian"}},
            {"a sha256 beside a debian base",
             "[image]\nname = \"demo\"\n[base]\ndebian = { suite = \"bookworm\" }\nsha256 = \"" +
                 std::string(64, 'a') + "\"\n[python]\nversion = \"3.11\"\n",
             {"r.toml:5:10: base.sha256 belongs to a tarball base"}},
            {"a debian base without a suite and with an unknown variant",
             "[image]\nname = \"demo\"\n[base]\ndebian = { variant = \"tiny\" }\n[python]\n"
             "version = \"3.11\"\n",
             {"r.toml:4:10: base.debian is missing required key \"suite\"",
              "r.toml:4:22: base.debian.variant \"tiny\" is not an mmdebstrap variant (extract, "
              "custom, essential, apt, required, minbase, buildd, important, debootstrap, "
              "standard)"}},
            {"a debian architecture that is not one (uname's name, not Debian's)",
             "[image]\nname = \"demo\"\n[base]\ndebian = { suite = \"bookworm\", arch = "
             "\"aarch64\" }\n[python]\nversion = \"3.11\"\n",
             {"r.toml:4:39: base.debian.arch \"aarch64\" is not a Debian architecture with "
              "manylinux wheels (amd64, arm64, i386, ppc64el, s390x, armhf, armel)"}},
            {"debian archives, includes and keys that are not what they should be",
             "[image]\nname = \"demo\"\n[base]\n[base.debian]\nsuite = \"bookworm\"\n"
             "include = [\"python3=\", \"Bad\"]\ncomponents = []\nsnapshot = \"ftp://x\"\n"
             "archives = [{ name = \"sec\", url = \"http://s\", suite = \"bookworm-security\" },"
             " { name = \"sec\", url = \"ftp://s\", suite = \"x y\", colour = 1 }, 3]\n"
             "[python]\nversion = \"3.11\"\n",
             {"r.toml:4:1: base.debian.components is empty",
              "r.toml:6:12: base.debian.include \"python3=\" is neither a Debian package name nor "
              "NAME=VERSION",
              "r.toml:6:24: base.debian.include \"Bad\" is neither a Debian package name nor "
              "NAME=VERSION",
              "r.toml:8:12: base.debian.snapshot \"ftp://x\" does not start with http://, "
              "https:// or file://",
              "r.toml:9:87: duplicate archive name \"sec\"",
              "r.toml:9:100: base.debian.archives[1].url \"ftp://s\" does not start with http://, "
              "https:// or file://",
              "r.toml:9:119: base.debian.archives[1].suite \"x y\" is not a Debian suite name",
              "r.toml:9:126: unknown key \"colour\" in base.debian.archives[1]",
              "r.toml:9:140: base.debian.archives[2]: expected a table, found an integer"}},
            {"a debian base that is a string",
             "[image]\nname = \"demo\"\n[base]\ndebian = \"bookworm\"\n[python]\n"
             "version = \"3.11\"\n",
             {"r.toml:4:10: base.debian: expected a table, found a string"}},
            {"a python version that is not 3.N",
             "[image]\nname = \"demo\"\n[base]\ndebian = { suite = \"bookworm\" }\n[python]\n"
             "version = \"2.7\"\n",
             {"r.toml:6:11: python.version \"2.7\" is not of the form 3.N"}},
            {"a relative venv",
             k_minimal + "venv = \"opt/venv\"\n",
             {"r.toml:7:8: python.venv \"opt/venv\" is not an absolute path"}},
            {"a torch version with a local part",
             k_minimal + "[torch]\nversion = \"2.8.0+cu128\"\ncuda = \"12.8\"\n[cuda]\n"
                         "driver = \"570.133.07\"\n",
             {"r.toml:8:11: torch.version \"2.8.0+cu128\" carries a local version; torch.cuda "
              "selects the build"}},
            {"an unknown CUDA major",
             k_minimal + "[torch]\nversion = \"2.8.0\"\ncuda = \"14.0\"\n[cuda]\n"
                         "driver = \"580.65.06\"\n",
             {"r.toml:9:8: torch.cuda \"14.0\" names CUDA 14, which rootlock does not know (it "
              "knows 11, 12 and 13)"}},
            {"a CUDA version without a minor",
             k_minimal + "[torch]\nversion = \"2.8.0\"\ncuda = \"12\"\n[cuda]\n"
                         "driver = \"570.133.07\"\n",
             {"r.toml:9:8: torch.cuda \"12\" is not of the form MAJOR.MINOR, such as 12.8"}},
            {"a torch build without a driver",
             k_minimal + "[torch]\nversion = \"2.8.0\"\ncuda = \"12.8\"\n",
             {"r.toml:7:1: [torch] needs a [cuda] table with the host driver version"}},
            {"a driver version without dots",
             k_minimal +
                 "[torch]\nversion = \"2.8.0\"\ncuda = \"12.8\"\n[cuda]\ndriver = \"570\"\n",
             {"r.toml:11:10: cuda.driver \"570\" is not a driver version such as 570.133.07"}},
            {"GPUs that are not compute capabilities, or named twice",
             k_minimal + "[torch]\nversion = \"2.8.0\"\ncuda = \"12.8\"\n[cuda]\n"
                         "driver = \"570.133.07\"\ngpus = [\"8.6\", \"sm_90\", \"8.6\", 9]\n",
             {"r.toml:12:16: cuda.gpus: \"sm_90\" is not a compute capability such as 8.6: it has "
              "no dot between major and minor",
              "r.toml:12:25: cuda.gpus names \"8.6\" twice",
              "r.toml:12:32: cuda.gpus[3]: expected a string, found an integer"}},
            {"a driver too old for CUDA 13",
             k_minimal + "[torch]\nversion = \"2.9.1\"\ncuda = \"13.0\"\n[cuda]\n"
                         "driver = \"570.133.07\"\n",
             {"r.toml:11:10: cuda.driver \"570.133.07\" is too old for torch.cuda \"13.0\": CUDA "
              "13 needs driver 580 or newer"}},
            {"a driver too old for CUDA 12",
             k_minimal + "[torch]\nversion = \"2.8.0\"\ncuda = \"12.8\"\n[cuda]\n"
                         "driver = \"470.256.02\"\n",
             {"r.toml:11:10: cuda.driver \"470.256.02\" is too old for torch.cuda \"12.8\": CUDA "
              "12 needs driver 525 or newer"}},
            {"a cu130 index for a CUDA 12.8 torch",
             k_minimal + torch_tail +
                 "[[index]]\nname = \"pytorch\"\nurl = \"https://example.invalid/whl/cu130\"\n",
             {"r.toml:14:7: index \"pytorch\" serves cu130 builds, but torch.cuda \"12.8\" needs "
              "cu128"}},
            {"duplicate index names and a bad index URL",
             k_minimal + "[[index]]\nname = \"wheels\"\nurl = \"https://example.invalid/simple\"\n"
                         "[[index]]\nname = \"wheels\"\nurl = \"ftp://example.invalid/simple\"\n",
             {"r.toml:10:1: duplicate index name \"wheels\" (first defined at r.toml:7:1)",
              "r.toml:12:7: index.url \"ftp://example.invalid/simple\" does not start with "
              "http://, https:// or file://"}},
            {"one package pattern pinned to two indexes",
             k_minimal +
                 "[[index]]\nname = \"a\"\nurl = \"https://a.invalid/simple\"\n"
                 "packages = [\"Torch\"]\n[[index]]\nname = \"b\"\n"
                 "url = \"https://b.invalid/simple\"\npackages = [\"torch\", \"nvidia?\"]\n",
             {"r.toml:11:1: package pattern \"torch\" is pinned to index \"a\" and to index \"b\"",
              "r.toml:14:22: index.packages \"nvidia?\" is not a project name pattern (letters, "
              "digits, '-', '_', '.' and '*')"}},
            {"an [index] table instead of [[index]]",
             k_minimal + "[index]\nname = \"a\"\n",
             {"r.toml:7:1: index: expected an array of tables ([[index]]), found a table"}},
            {"wrong types in [packages], [environment] and [host]",
             k_minimal + "[packages]\nrequires = [\"numpy\", 3, \" \"]\n[environment]\n"
                         "\"1PATH\" = \"x\"\nDEBUG = true\n[host]\nprovides = [\"libfoo\"]\n",
             {"r.toml:8:22: packages.requires[1]: expected a string, found an integer",
              "r.toml:8:25: packages.requires has an empty requirement",
              "r.toml:10:1: environment key \"1PATH\" is not a variable name",
              "r.toml:11:9: environment.DEBUG: expected a string, found a boolean",
              "r.toml:13:13: host.provides \"libfoo\" is not a soname such as libfoo.so.1"}},
            {"library paths that are not absolute, not canonical, not ld.so.conf lines, or "
             "repeated",
             k_minimal + "[loader]\nlibrary-paths = [\n"
                         "  \"lib\",\n"
                         "  \"/\",\n"
                         "  \"/a//b\",\n"
                         "  \"/a/../b\",\n"
                         "  \"/a b\",\n"
                         "  \"/a\\tb\",\n"
                         "  \"/a=b\",\n"
                         "  \"/opt/lib\",\n"
                         "  \"/opt/lib/x\",\n"
                         "  \"/opt/lib\",\n"
                         "  \"lib\",\n"
                         "]\n",
             {"r.toml:9:3: loader.library-paths \"lib\" is not an absolute directory path such as "
              "/opt/lib",
              "r.toml:10:3: loader.library-paths \"/\" is not an absolute directory path such as "
              "/opt/lib",
              "r.toml:11:3: loader.library-paths \"/a//b\" is not canonical (no empty, \".\" or "
              "\"..\" component, no trailing slash)",
              "r.toml:12:3: loader.library-paths \"/a/../b\" is not canonical (no empty, \".\" or "
              "\"..\" component, no trailing slash)",
              "r.toml:13:3: loader.library-paths \"/a b\" holds a character ld.so.conf cannot "
              "carry (whitespace, '#', ':', ',' or '=')",
              "r.toml:14:3: loader.library-paths \"/a\\tb\" holds a character ld.so.conf cannot "
              "carry (whitespace, '#', ':', ',' or '=')",
              "r.toml:15:3: loader.library-paths \"/a=b\" holds a character ld.so.conf cannot "
              "carry (whitespace, '#', ':', ',' or '=')",
              "r.toml:18:3: loader.library-paths \"/opt/lib\" is listed twice",
              "r.toml:19:3: loader.library-paths \"lib\" is not an absolute directory path such as "
              "/opt/lib"}},
            {"a misspelt [loader] key, and library paths of the wrong types",
             k_minimal + "[loader]\nlibrary-path = [\"/opt/lib\"]\nlibrary-paths = [\"/a\", 7]\n",
             {"r.toml:8:1: unknown key \"library-path\" in [loader]; did you mean "
              "\"library-paths\"?",
              "r.toml:9:24: loader.library-paths[1]: expected a string, found an integer"}},
            {"library paths that are a string",
             k_minimal + "[loader]\nlibrary-paths = \"/opt/lib\"\n",
             {"r.toml:8:17: loader.library-paths: expected an array of strings, found a string"}},
            {"[loader] and [files] that are not tables",
             "loader = [\"/opt/lib\"]\nfiles = \"/etc/motd\"\n" + k_minimal,
             {"r.toml:1:10: loader: expected a table, found an array",
              "r.toml:2:9: files: expected a table, found a string"}},
            {"file paths that are relative, not canonical, mounted, rootlock's own, or not strings",
             k_minimal + "[files]\n"
                         "\"etc/motd\" = \"x\"\n"
                         "\"/\" = \"x\"\n"
                         "\"/etc/../x\" = \"x\"\n"
                         "\"/etc/x/\" = \"x\"\n"
                         "\"/dev/null\" = \"\"\n"
                         "\"/proc\" = \"\"\n"
                         "\"/sys/kernel/x\" = \"\"\n"
                         "\"/etc/ld.so.cache\" = \"\"\n"
                         "\"/etc/ld.so.conf.d/rootlock.conf\" = \"\"\n"
                         "\"/etc/profile.d/rootlock-venv.sh\" = \"\"\n"
                         "\"/etc/motd\" = 1\n"
                         "\"/etc/a\\nb\" = \"\"\n"
                         "\"/etc/app\" = \"\"\n"
                         "\"/etc/app/conf\" = \"\"\n"
                         "\"/etc/devices\" = [\"x\"]\n"
                         "etc.motd = \"x\"\n",
             {"r.toml:8:1: files \"etc/motd\" is not an absolute file path such as /etc/motd",
              "r.toml:9:1: files \"/\" is not an absolute file path such as /etc/motd",
              "r.toml:10:1: files \"/etc/../x\" is not canonical (no empty, \".\" or \"..\" "
              "component, no trailing slash)",
              "r.toml:11:1: files \"/etc/x/\" is not canonical (no empty, \".\" or \"..\" "
              "component, no trailing slash)",
              "r.toml:12:1: files \"/dev/null\" is under /dev, /proc or /sys, which pct and LXC "
              "mount themselves",
              "r.toml:13:1: files \"/proc\" is under /dev, /proc or /sys, which pct and LXC mount "
              "themselves",
              "r.toml:14:1: files \"/sys/kernel/x\" is under /dev, /proc or /sys, which pct and "
              "LXC mount themselves",
              "r.toml:15:1: files \"/etc/ld.so.cache\" is written by rootlock itself",
              "r.toml:16:1: files \"/etc/ld.so.conf.d/rootlock.conf\" is written by rootlock "
              "itself",
              "r.toml:17:1: files \"/etc/profile.d/rootlock-venv.sh\" is written by rootlock "
              "itself",
              "r.toml:18:15: files./etc/motd: expected a string, found an integer",
              "r.toml:19:1: files \"/etc/a\\nb\" holds a NUL or newline character",
              "r.toml:21:1: files \"/etc/app/conf\" is under \"/etc/app\", which [files] writes as "
              "a file",
              "r.toml:22:18: files./etc/devices: expected a string, found an array",
              "r.toml:23:1: files \"etc\" is not an absolute file path such as /etc/motd",
              "r.toml:23:1: files.etc: expected a string, found a table"}},
            {"bad library paths and bad files reported together, sorted by position",
             k_minimal + "[files]\n\"/etc/motd\" = 1\n\"motd\" = \"x\"\n[loader]\n"
                         "library-paths = [\"/opt/lib/\", \"opt\", \"/a b\", \"/opt/lib\", "
                         "\"/opt/lib\"]\n[host]\nprovide = []\n",
             {"r.toml:8:15: files./etc/motd: expected a string, found an integer",
              "r.toml:9:1: files \"motd\" is not an absolute file path such as /etc/motd",
              "r.toml:11:18: loader.library-paths \"/opt/lib/\" is not canonical (no empty, "
              "\".\" or \"..\" component, no trailing slash)",
              "r.toml:11:31: loader.library-paths \"opt\" is not an absolute directory path such "
              "as /opt/lib",
              "r.toml:11:38: loader.library-paths \"/a b\" holds a character ld.so.conf cannot "
              "carry (whitespace, '#', ':', ',' or '=')",
              "r.toml:11:58: loader.library-paths \"/opt/lib\" is listed twice",
              "r.toml:13:1: unknown key \"provide\" in [host]; did you mean \"provides\"?"}},
            {"several problems at once, sorted by position",
             "[image]\nname = \"Bad Name\"\ncolor = 1\n[base]\ntarball = \"b.tar\"\n"
             "sha256 = \"xyz\"\ndebian = { suite = \"bookworm\" }\n[python]\nversion = 3.11\n"
             "venv = \"venv\"\n[torch]\nversion = \"2.9.1\"\ncuda = \"13.0\"\n[cuda]\n"
             "driver = \"570.133.07\"\n[[index]]\nname = \"cu\"\nurl = "
             "\"https://x.invalid/cu128/\"\n"
             "[extra]\n",
             {"r.toml:2:8: image.name \"Bad Name\" is not kebab-case (lowercase letters and digits "
              "joined by single hyphens)",
              "r.toml:3:1: unknown key \"color\" in [image]",
              "r.toml:4:1: [base] sets both tarball and debian; choose one",
              "r.toml:6:10: base.sha256 \"xyz\" is not 64 hexadecimal digits",
              "r.toml:9:11: python.version: expected a string, found a float",
              "r.toml:10:8: python.venv \"venv\" is not an absolute path",
              "r.toml:15:10: cuda.driver \"570.133.07\" is too old for torch.cuda \"13.0\": CUDA "
              "13 needs driver 580 or newer",
              "r.toml:18:7: index \"cu\" serves cu128 builds, but torch.cuda \"13.0\" needs cu130",
              "r.toml:19:2: unknown table [extra]"}},
        };
        CHECK(cases.size() >= 20);
        for (const auto& malformed : cases) {
            INFO(std::string(malformed.what));
            CHECK(joined(error_texts(malformed.text)) == joined(malformed.errors));
        }
    }

    TEST_CASE("a Debian base may pin versions, name its keyring, snapshot and more archives") {
        const std::string text =
            "[image]\nname = \"demo\"\n[base]\n[base.debian]\nsuite = \"bookworm\"\n"
            "include = [\"python3.11=3.11.2-6+deb12u6\", \"ca-certificates\"]\n"
            "keyring = \"keys/debian.gpg\"\nsnapshot = \"https://snapshot.debian.org/archive/"
            "debian/\"\n"
            "[[base.debian.archives]]\nname = \"security\"\n"
            "url = \"http://security.debian.org/debian-security/\"\n"
            "suite = \"bookworm-security\"\ncomponents = [\"main\", \"non-free-firmware\"]\n"
            "[python]\nversion = \"3.11\"\n";
        const auto parsed = parse_recipe(text, k_file);
        if (!parsed.ok())
            FAIL(parsed.error().text());
        const auto& debian = *parsed.value().base.debian;
        CHECK(debian.include ==
              std::vector<std::string>{"python3.11=3.11.2-6+deb12u6", "ca-certificates"});
        CHECK(debian.components == std::vector<std::string>{"main"});
        CHECK(debian.keyring == "keys/debian.gpg");
        CHECK(debian.snapshot == "https://snapshot.debian.org/archive/debian");
        REQUIRE(debian.archives.size() == 1);
        CHECK(debian.archives[0].name == "security");
        CHECK(debian.archives[0].url == "http://security.debian.org/debian-security");
        CHECK(debian.archives[0].suite == "bookworm-security");
        CHECK(debian.archives[0].components ==
              std::vector<std::string>{"main", "non-free-firmware"});
        CHECK(debian.archives[0].keyring.empty());
    }

    TEST_CASE("a minimal recipe gets the documented defaults") {
        const auto parsed = parse_recipe(k_minimal, k_file);
        if (!parsed.ok())
            FAIL((parsed.ok() ? "" : parsed.error().text()));
        const auto& recipe = parsed.value();
        CHECK(recipe.image.output == "images/demo.tar.zst");
        REQUIRE(recipe.base.debian.has_value());
        CHECK(recipe.base.debian->suite == "bookworm");
        CHECK(recipe.base.debian->mirror.empty());
        CHECK(recipe.base.debian->variant == "minbase");
        CHECK(recipe.base.debian->architecture == "amd64");
        CHECK(recipe.base.debian->include.empty());
        CHECK_FALSE(recipe.base.tarball.has_value());
        CHECK(recipe.python.venv == "/opt/venv");
        CHECK_FALSE(recipe.python.compile_bytecode);
        CHECK_FALSE(recipe.torch.has_value());
        CHECK_FALSE(recipe.cuda.has_value());
        CHECK(recipe.indexes.empty());
        CHECK(recipe.requirements.empty());
        CHECK(recipe.environment.empty());
        CHECK(recipe.host_provides.empty());
        CHECK(recipe.library_paths.empty());
        CHECK(recipe.files.empty());
    }

    TEST_CASE("parse_recipe puts every error into one Error, first location as where") {
        const auto parsed = parse_recipe("[image]\nname = 1\n[base]\n", k_file);
        REQUIRE_FALSE(parsed.ok());
        CHECK(parsed.error().where == "r.toml:1:1");
        CHECK(parsed.error().text() ==
              "r.toml:1:1: missing required table [python]\n"
              "r.toml:2:8: image.name: expected a string, found an integer\n"
              "r.toml:3:1: [base] needs either tarball (with sha256) or debian");
    }

    TEST_CASE("an unreadable recipe file is one error located at its path") {
        const auto parsed = parse_recipe_file("/nonexistent/rootlock/recipe.toml");
        CHECK_FALSE(parsed.recipe.has_value());
        REQUIRE(parsed.errors.size() == 1);
        CHECK(parsed.errors[0].text() ==
              "/nonexistent/rootlock/recipe.toml: cannot open the recipe");
    }

    TEST_CASE("the recipes shipped in recipes/ parse without errors") {
        const auto directory =
            std::filesystem::path(__FILE__).parent_path().parent_path().parent_path() / "recipes";
        std::vector<std::string> names;
        for (const auto& entry : std::filesystem::directory_iterator(directory)) {
            if (entry.path().extension() == ".toml")
                names.push_back(entry.path().filename().string());
        }
        std::sort(names.begin(), names.end());
        for (const char* expected : {"demo.toml", "train-cu128.toml", "train-cu130.toml"})
            CHECK(std::find(names.begin(), names.end(), expected) != names.end());
        for (const auto& name : names) {
            INFO(name);
            const auto parsed = parse_recipe_file((directory / name).string());
            std::string errors;
            for (const auto& error : parsed.errors)
                errors += error.text() + "\n";
            CHECK(errors == "");
            CHECK(parsed.recipe.has_value());
        }
    }

    TEST_CASE("the shipped recipes pin what their names promise") {
        const auto directory =
            std::filesystem::path(__FILE__).parent_path().parent_path().parent_path() / "recipes";
        const auto cu128 = parse_recipe_file((directory / "train-cu128.toml").string());
        REQUIRE(cu128.recipe.has_value());
        CHECK(cu128.recipe->torch->version == "2.8.0");
        CHECK(cu128.recipe->torch->cuda == "12.8");
        CHECK(cu128.recipe->cuda->driver == "570.133.07");
        const auto cu130 = parse_recipe_file((directory / "train-cu130.toml").string());
        REQUIRE(cu130.recipe.has_value());
        CHECK(cu130.recipe->torch->version == "2.9.1");
        CHECK(cu130.recipe->torch->cuda == "13.0");
        CHECK(cu130.recipe->cuda->driver == "580.65.06");
        const auto demo = parse_recipe_file((directory / "demo.toml").string());
        REQUIRE(demo.recipe.has_value());
        REQUIRE(demo.recipe->indexes.size() == 1);
        CHECK(demo.recipe->indexes[0].name == "fixture");
        CHECK(demo.recipe->indexes[0].url == "http://127.0.0.1:8765/simple");
        REQUIRE(demo.recipe->base.debian.has_value());
        CHECK(demo.recipe->python.version == "3.11");
    }
}

}  // namespace ROOTLOCK_UNIT_ID
