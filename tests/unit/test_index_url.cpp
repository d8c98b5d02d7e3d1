// Unit tests for URL reference resolution (every example of RFC 3986 section 5.4), fragments,
// hashes in fragments, digests, file names and project page URLs.
#include <doctest/doctest.h>

#include <string>

#include "index/project_page.hpp"
#include "index/url.hpp"

namespace ROOTLOCK_UNIT_ID {

using rootlock::index::fragment_hashes;
using rootlock::index::is_plain_filename;
using rootlock::index::last_path_segment;
using rootlock::index::normalize_digest;
using rootlock::index::project_url;
using rootlock::index::resolve_url;
using rootlock::index::split_fragment;

namespace {

struct Example {
    const char* reference;
    const char* expected;
};

const char* const k_rfc_base = "http://a/b/c/d;p?q";

// RFC 3986 section 5.4.1.
const Example k_normal[] = {
    {"g:h", "g:h"},
    {"g", "http://a/b/c/g"},
    {"./g", "http://a/b/c/g"},
    {"g/", "http://a/b/c/g/"},
    {"/g", "http://a/g"},
    {"//g", "http://g"},
    {"?y", "http://a/b/c/d;p?y"},
    {"g?y", "http://a/b/c/g?y"},
    {"#s", "http://a/b/c/d;p?q#s"},
    {"g#s", "http://a/b/c/g#s"},
    {"g?y#s", "http://a/b/c/g?y#s"},
    {";x", "http://a/b/c/;x"},
    {"g;x", "http://a/b/c/g;x"},
    {"g;x?y#s", "http://a/b/c/g;x?y#s"},
    {"", "http://a/b/c/d;p?q"},
    {".", "http://a/b/c/"},
    {"./", "http://a/b/c/"},
    {"..", "http://a/b/"},
    {"../", "http://a/b/"},
    {"../g", "http://a/b/g"},
    {"../..", "http://a/"},
    {"../../", "http://a/"},
    {"../../g", "http://a/g"},
};

// RFC 3986 section 5.4.2, with the strict reading of "http:g".
const Example k_abnormal[] = {
    {"../../../g", "http://a/g"},
    {"../../../../g", "http://a/g"},
    {"/./g", "http://a/g"},
    {"/../g", "http://a/g"},
    {"g.", "http://a/b/c/g."},
    {".g", "http://a/b/c/.g"},
    {"g..", "http://a/b/c/g.."},
    {"..g", "http://a/b/c/..g"},
    {"./../g", "http://a/b/g"},
    {"./g/.", "http://a/b/c/g/"},
    {"g/./h", "http://a/b/c/g/h"},
    {"g/../h", "http://a/b/c/h"},
    {"g;x=1/./y", "http://a/b/c/g;x=1/y"},
    {"g;x=1/../y", "http://a/b/c/y"},
    {"g?y/./x", "http://a/b/c/g?y/./x"},
    {"g?y/../x", "http://a/b/c/g?y/../x"},
    {"g#s/./x", "http://a/b/c/g#s/./x"},
    {"g#s/../x", "http://a/b/c/g#s/../x"},
    {"http:g", "http:g"},
};

const std::string k_sha256 = "3a852369a38dec343d45ecd0bc3660f79b88a23e0c878d18707f7c13bf49538f";

}  // namespace

TEST_SUITE("rootlock::index") {
    TEST_CASE("the normal examples of RFC 3986 section 5.4.1 resolve as the RFC says") {
        for (const Example& example : k_normal) {
            const std::string reference = example.reference;
            CAPTURE(reference);
            auto resolved = resolve_url(k_rfc_base, example.reference);
            REQUIRE(resolved.ok());
            CHECK(resolved.value() == example.expected);
        }
    }

    TEST_CASE("the abnormal examples of RFC 3986 section 5.4.2 resolve as the RFC says") {
        for (const Example& example : k_abnormal) {
            const std::string reference = example.reference;
            CAPTURE(reference);
            auto resolved = resolve_url(k_rfc_base, example.reference);
            REQUIRE(resolved.ok());
            CHECK(resolved.value() == example.expected);
        }
    }

    TEST_CASE("index hrefs resolve against a project page URL") {
        // The pages of download.pytorch.org/whl/torch/ link into the per-CUDA folders.
        const std::string page = "https://download.pytorch.org/whl/torch/";
        const Example examples[] = {
            {"../../whl/cu128/torch-2.8.0%2Bcu128-cp313-cp313-manylinux_2_28_x86_64.whl#sha256=ab",
             "https://download.pytorch.org/whl/cu128/"
             "torch-2.8.0%2Bcu128-cp313-cp313-manylinux_2_28_x86_64.whl#sha256=ab"},
            {"/whl/cu128/torch-2.7.0%2Bcu128-cp311-cp311-linux_x86_64.whl",
             "https://download.pytorch.org/whl/cu128/"
             "torch-2.7.0%2Bcu128-cp311-cp311-linux_x86_64.whl"},
            {"//files.pythonhosted.org/packages/30/7b/triton.whl",
             "https://files.pythonhosted.org/packages/30/7b/triton.whl"},
            {"https://other.example/x.whl?token=a#sha256=b",
             "https://other.example/x.whl?token=a#sha256=b"},
            {"torch-2.8.0.tar.gz", "https://download.pytorch.org/whl/torch/torch-2.8.0.tar.gz"},
            {"?page=2", "https://download.pytorch.org/whl/torch/?page=2"},
        };
        for (const Example& example : examples) {
            const std::string reference = example.reference;
            CAPTURE(reference);
            auto resolved = resolve_url(page, example.reference);
            REQUIRE(resolved.ok());
            CHECK(resolved.value() == example.expected);
        }
    }

    TEST_CASE("a base without a path and an empty-authority file URL resolve") {
        CHECK(resolve_url("https://host", "x.whl").value() == "https://host/x.whl");
        CHECK(resolve_url("https://host?q", "").value() == "https://host?q");
        CHECK(resolve_url("file:///srv/index/torch/", "../x.whl").value() ==
              "file:///srv/index/x.whl");
        CHECK(resolve_url("https://h/a/b", "/../../..").value() == "https://h/");
    }

    TEST_CASE("a long run of dot segments resolves in linear time") {
        std::string reference;
        for (int i = 0; i < 100000; ++i)
            reference += "d/../";
        reference += "x.whl";
        auto resolved = resolve_url("https://h/a/", reference);
        REQUIRE(resolved.ok());
        CHECK(resolved.value() == "https://h/a/x.whl");
    }

    TEST_CASE("URLs that cannot be resolved give one exact error") {
        struct Bad {
            const char* base;
            const char* reference;
            const char* message;
        };
        const Bad bad[] = {
            {"/simple/torch/", "x.whl", "base URL '/simple/torch/' has no scheme"},
            {"", "x.whl", "base URL '' has no scheme"},
            {"https://h/", "a b.whl", "URL 'a b.whl' contains a space or control character"},
            {"https://h/", "a\nb", "URL 'a\\x0ab' contains a space or control character"},
            {"https://h/\x7f", "x", "URL 'https://h/\\x7f' contains a space or control character"},
            {"https://h/", "1x:y", "URL '1x:y' has an invalid scheme '1x'"},
            {"ht_tp://h/", "x", "URL 'ht_tp://h/' has an invalid scheme 'ht_tp'"},
        };
        for (const Bad& row : bad) {
            const std::string reference = row.reference;
            CAPTURE(reference);
            auto resolved = resolve_url(row.base, row.reference);
            REQUIRE_FALSE(resolved.ok());
            CHECK(resolved.error().text() == row.message);
        }
    }

    TEST_CASE("split_fragment cuts at the first hash sign") {
        CHECK(split_fragment("https://h/x.whl#sha256=ab") ==
              std::pair<std::string, std::string>{"https://h/x.whl", "sha256=ab"});
        CHECK(split_fragment("https://h/x.whl#a#b") ==
              std::pair<std::string, std::string>{"https://h/x.whl", "a#b"});
        CHECK(split_fragment("https://h/x.whl") ==
              std::pair<std::string, std::string>{"https://h/x.whl", ""});
        CHECK(split_fragment("https://h/x.whl#") ==
              std::pair<std::string, std::string>{"https://h/x.whl", ""});
    }

    TEST_CASE("last_path_segment ignores the query and fragment and keeps escapes") {
        CHECK(last_path_segment("https://h/whl/torch-2.8.0%2Bcu128-x.whl?a=/b#c/d") ==
              "torch-2.8.0%2Bcu128-x.whl");
        CHECK(last_path_segment("https://h/whl/") == "");
        CHECK(last_path_segment("https://h") == "");
        CHECK(last_path_segment("x.whl") == "x.whl");
    }

    TEST_CASE("fragment hashes keep known algorithms, lowercased, and skip other keys") {
        auto hashes = fragment_hashes("egg=torch&SHA256=" + std::string(64, 'A') +
                                      "&md5=0123456789abcdef0123456789ABCDEF&blake2=zz");
        REQUIRE(hashes.ok());
        REQUIRE(hashes->size() == 2);
        CHECK(hashes->at("sha256") == std::string(64, 'a'));
        CHECK(hashes->at("md5") == "0123456789abcdef0123456789abcdef");
        CHECK(fragment_hashes("")->empty());
        CHECK(fragment_hashes("sha256")->empty());
        CHECK(fragment_hashes("&&")->empty());
        CHECK(fragment_hashes("sha256=" + k_sha256)->at("sha256") == k_sha256);
    }

    TEST_CASE("bad digests give one exact error") {
        struct Bad {
            std::string algorithm;
            std::string digest;
            std::string message;
        };
        const Bad bad[] = {
            {"sha256", "", "sha256 digest is empty"},
            {"sha256", "xyz", "sha256 digest 'xyz' is not hex"},
            {"sha256", k_sha256.substr(1), "sha256 digest has 63 hex digits, expected 64"},
            {"md5", "abc", "md5 digest has 3 hex digits, expected 32"},
            {"sha512", k_sha256, "sha512 digest has 64 hex digits, expected 128"},
            {"blake2b", "g", "blake2b digest 'g' is not hex"},
            {"sha256", std::string(200, 'z'),
             "sha256 digest '" + std::string(128, 'z') + "...' is not hex"},
        };
        for (const Bad& row : bad) {
            CAPTURE(row.digest);
            auto digest = normalize_digest(row.algorithm, row.digest);
            REQUIRE_FALSE(digest.ok());
            CHECK(digest.error().text() == row.message);
        }
        CHECK(normalize_digest("blake2b", "ABCDEF").value() == "abcdef");
        auto fragment = fragment_hashes("sha256=" + k_sha256 + "&sha1=xyz");
        REQUIRE_FALSE(fragment.ok());
        CHECK(fragment.error().text() == "sha1 digest 'xyz' is not hex");
    }

    TEST_CASE("plain file names have no directory part or control character") {
        CHECK(is_plain_filename("torch-2.8.0+cu128-cp313-cp313-manylinux_2_28_x86_64.whl"));
        CHECK(is_plain_filename("with space.tar.gz"));
        CHECK_FALSE(is_plain_filename(""));
        CHECK_FALSE(is_plain_filename("."));
        CHECK_FALSE(is_plain_filename(".."));
        CHECK_FALSE(is_plain_filename("a/b.whl"));
        CHECK_FALSE(is_plain_filename("a\\b.whl"));
        CHECK_FALSE(is_plain_filename("a\tb.whl"));
    }

    TEST_CASE("project_url joins base and name with exactly one slash") {
        CHECK(project_url("https://pypi.org/simple", "torch") == "https://pypi.org/simple/torch/");
        CHECK(project_url("https://pypi.org/simple/", "torch") == "https://pypi.org/simple/torch/");
        CHECK(project_url("https://download.pytorch.org/whl/cu128//", "nvidia-cudnn-cu12") ==
              "https://download.pytorch.org/whl/cu128/nvidia-cudnn-cu12/");
    }
}

}  // namespace ROOTLOCK_UNIT_ID
