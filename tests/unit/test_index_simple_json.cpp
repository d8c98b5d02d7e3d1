// Unit tests for PEP 691 JSON project pages: PyPI's form with every optional key, relative URLs,
// yanked and core-metadata variants, the Content-Type choice, and a table of malformed pages.
#include <doctest/doctest.h>

#include <string>

#include "index/project_page.hpp"

namespace ROOTLOCK_UNIT_ID {

using rootlock::index::page_format;
using rootlock::index::PageFormat;
using rootlock::index::parse_simple_json;

namespace {

const std::string k_url = "https://pypi.org/simple/nvidia-cudnn-cu12/";
const std::string k_sha256 = "949452be657fa16687d0930933f032835951ef0892b37d2d53824d1a84dc97a8";
const std::string k_metadata_sha256 =
    "86107f52ff49e63a75c9d345374cac30140e053a12ffa728d676fee836e69022";

// One file entry as PyPI serves it (api-version 1.1+), with `extra` spliced in before "url".
std::string file_json(const std::string& extra = "") {
    return R"({"core-metadata":{"sha256":")" + k_metadata_sha256 +
           R"("},"data-dist-info-metadata":{"sha256":")" + k_metadata_sha256 +
           R"("},"filename":"nvidia_cudnn_cu12-9.10.2.21-py3-none-manylinux_2_27_x86_64.whl",)" +
           R"("hashes":{"sha256":")" + k_sha256 +
           R"("},"provenance":null,"requires-python":">=3","size":706758467,)" +
           R"("upload-time":"2025-06-06T21:55:18.610864Z",)" + extra +
           R"("url":"https://files.pythonhosted.org/packages/ba/51/e123d997aa098c61d029f76663dedbfb9bc8dcf8c60cbd6adbe42f76d049/nvidia_cudnn_cu12-9.10.2.21-py3-none-manylinux_2_27_x86_64.whl","yanked":false})";
}

std::string page_json(const std::string& files, const std::string& version = "1.4") {
    return R"({"meta":{"_last-serial":29555000,"api-version":")" + version +
           R"("},"name":"nvidia-cudnn-cu12","project-status":{},"files":[)" + files +
           R"(],"versions":["9.10.2.21"]})";
}

}  // namespace

TEST_SUITE("rootlock::index") {
    TEST_CASE("a PyPI JSON page gives every file with hashes, metadata, size and upload time") {
        auto page = parse_simple_json(page_json(file_json()), k_url);
        REQUIRE(page.ok());
        CHECK(page->name == "nvidia-cudnn-cu12");
        CHECK(page->api_version == "1.4");
        REQUIRE(page->files.size() == 1);
        const auto& file = page->files[0];
        CHECK(file.filename == "nvidia_cudnn_cu12-9.10.2.21-py3-none-manylinux_2_27_x86_64.whl");
        CHECK(file.url ==
              "https://files.pythonhosted.org/packages/ba/51/"
              "e123d997aa098c61d029f76663dedbfb9bc8dcf8c60cbd6adbe42f76d049/"
              "nvidia_cudnn_cu12-9.10.2.21-py3-none-manylinux_2_27_x86_64.whl");
        CHECK(file.hashes == std::map<std::string, std::string>{{"sha256", k_sha256}});
        CHECK(file.requires_python == ">=3");
        CHECK_FALSE(file.yanked);
        CHECK(file.yanked_reason.empty());
        CHECK(file.has_metadata);
        CHECK(file.metadata_hashes ==
              std::map<std::string, std::string>{{"sha256", k_metadata_sha256}});
        CHECK(file.size == uint64_t{706758467});
        CHECK(file.upload_time == "2025-06-06T21:55:18.610864Z");
    }

    TEST_CASE("a minimal 1.0 page leaves the optional keys unset and keeps page order") {
        const std::string body = R"({"meta":{"api-version":"1.0"},"name":"x","files":[
            {"filename":"x-1.0.tar.gz","url":"../../packages/x-1.0.tar.gz#sha256=00","hashes":{}},
            {"filename":"x-1.0-py3-none-any.whl","url":"/files/x-1.0-py3-none-any.whl",
             "hashes":{"SHA256":"ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789"},"requires-python":null,"upload-time":null}]})";
        auto page = parse_simple_json(body, "https://mirror.example/simple/x/");
        REQUIRE(page.ok());
        CHECK(page->api_version == "1.0");
        REQUIRE(page->files.size() == 2);
        const auto& sdist = page->files[0];
        CHECK(sdist.filename == "x-1.0.tar.gz");
        CHECK(sdist.url == "https://mirror.example/packages/x-1.0.tar.gz");
        CHECK(sdist.hashes.empty());
        CHECK_FALSE(sdist.requires_python.has_value());
        CHECK_FALSE(sdist.has_metadata);
        CHECK_FALSE(sdist.size.has_value());
        CHECK_FALSE(sdist.upload_time.has_value());
        const auto& wheel = page->files[1];
        CHECK(wheel.url == "https://mirror.example/files/x-1.0-py3-none-any.whl");
        CHECK(wheel.hashes ==
              std::map<std::string, std::string>{
                  {"sha256", "abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789"}});
        CHECK_FALSE(wheel.requires_python.has_value());
    }

    TEST_CASE("yanked is a boolean or a reason") {
        const std::string body = page_json(
            R"({"filename":"a.whl","url":"a.whl","hashes":{},"yanked":true},)"
            R"({"filename":"b.whl","url":"b.whl","hashes":{},"yanked":"broken CUDA pins"},)"
            R"({"filename":"c.whl","url":"c.whl","hashes":{},"yanked":""},)"
            R"({"filename":"d.whl","url":"d.whl","hashes":{},"yanked":false})");
        auto page = parse_simple_json(body, k_url);
        REQUIRE(page.ok());
        REQUIRE(page->files.size() == 4);
        CHECK(page->files[0].yanked);
        CHECK(page->files[0].yanked_reason.empty());
        CHECK(page->files[1].yanked);
        CHECK(page->files[1].yanked_reason == "broken CUDA pins");
        CHECK(page->files[2].yanked);
        CHECK_FALSE(page->files[3].yanked);
        CHECK(page->files[0].url == "https://pypi.org/simple/nvidia-cudnn-cu12/a.whl");
    }

    TEST_CASE("core-metadata wins over dist-info-metadata and either may be a boolean") {
        const std::string other = std::string(64, 'b');
        const std::string body = page_json(
            R"({"filename":"a.whl","url":"a.whl","hashes":{},"core-metadata":{"sha256":")" +
            k_metadata_sha256 + R"("},"dist-info-metadata":{"sha256":")" + other + R"("}},)" +
            R"({"filename":"b.whl","url":"b.whl","hashes":{},"dist-info-metadata":true},)" +
            R"({"filename":"c.whl","url":"c.whl","hashes":{},"core-metadata":false,)" +
            R"("dist-info-metadata":true},)" +
            R"({"filename":"d.whl","url":"d.whl","hashes":{},"core-metadata":{}})");
        auto page = parse_simple_json(body, k_url);
        REQUIRE(page.ok());
        REQUIRE(page->files.size() == 4);
        CHECK(page->files[0].has_metadata);
        CHECK(page->files[0].metadata_hashes.at("sha256") == k_metadata_sha256);
        CHECK(page->files[1].has_metadata);
        CHECK(page->files[1].metadata_hashes.empty());
        CHECK_FALSE(page->files[2].has_metadata);
        CHECK(page->files[3].has_metadata);
        CHECK(page->files[3].metadata_hashes.empty());
    }

    TEST_CASE("any 1.x API version is read and the major version is checked") {
        CHECK(parse_simple_json(page_json("", "1.99"), k_url)->api_version == "1.99");
        CHECK(parse_simple_json(page_json("", "01.0"), k_url).ok());
        auto two = parse_simple_json(page_json("", "2.0"), k_url);
        REQUIRE_FALSE(two.ok());
        CHECK(two.error().text() == k_url + ": unsupported simple API version 2.0");
    }

    TEST_CASE("malformed JSON pages give one exact error located by a path into the page") {
        struct Bad {
            std::string body;
            std::string message;
        };
        const std::string meta = R"("meta":{"api-version":"1.1"},"name":"x",)";
        auto with_file = [&](const std::string& file) {
            return "{" + meta + R"("files":[)" + file_json() + "," + file_json() + "," + file +
                   "]}";
        };
        const std::string ok_file = R"({"filename":"a.whl","url":"a.whl","hashes":{})";
        const Bad bad[] = {
            {"<html></html>", "not valid JSON"},
            {"", "not valid JSON"},
            {R"({"meta":{"api-version":"1.1"},"name":"x","files":[])", "not valid JSON"},
            {"[]", "expected a JSON object"},
            {R"({"name":"x","files":[]})", "meta: missing"},
            {R"({"meta":"1.1","name":"x","files":[]})", "meta: expected an object"},
            {R"({"meta":{},"name":"x","files":[]})", "meta.api-version: missing"},
            {R"({"meta":{"api-version":1.1},"name":"x","files":[]})",
             "meta.api-version: expected a string"},
            {R"({"meta":{"api-version":"1"},"name":"x","files":[]})",
             "meta.api-version: malformed version '1'"},
            {R"({"meta":{"api-version":"v1.0"},"name":"x","files":[]})",
             "meta.api-version: malformed version 'v1.0'"},
            {R"({"meta":{"api-version":"0.9"},"name":"x","files":[]})",
             "unsupported simple API version 0.9"},
            {R"({"meta":{"api-version":"1.0"},"files":[]})", "name: missing"},
            {R"({"meta":{"api-version":"1.0"},"name":null,"files":[]})", "name: expected a string"},
            {"{" + meta + "\"versions\":[]}", "files: missing"},
            {"{" + meta + R"("files":{}})", "files: expected an array"},
            {with_file("[]"), "files[2]: expected an object"},
            {with_file(R"({"url":"a.whl","hashes":{}})"), "files[2].filename: missing"},
            {with_file(R"({"filename":7,"url":"a.whl","hashes":{}})"),
             "files[2].filename: expected a string"},
            {with_file(R"({"filename":"../a.whl","url":"a.whl","hashes":{}})"),
             "files[2].filename: not a plain file name '../a.whl'"},
            {with_file(R"({"filename":"a.whl","hashes":{}})"), "files[2].url: missing"},
            {with_file(R"({"filename":"a.whl","url":["a.whl"],"hashes":{}})"),
             "files[2].url: expected a string"},
            {with_file(R"({"filename":"a.whl","url":"a b.whl","hashes":{}})"),
             "files[2].url: URL 'a b.whl' contains a space or control character"},
            {with_file(R"({"filename":"a.whl","url":"a.whl"})"), "files[2].hashes: missing"},
            {with_file(R"({"filename":"a.whl","url":"a.whl","hashes":[]})"),
             "files[2].hashes: expected an object"},
            {with_file(R"({"filename":"a.whl","url":"a.whl","hashes":{"sha256":1}})"),
             "files[2].hashes.sha256: expected a string"},
            {with_file(R"({"filename":"a.whl","url":"a.whl","hashes":{"sha256":"abc"}})"),
             "files[2].hashes.sha256: sha256 digest has 3 hex digits, expected 64"},
            {with_file(R"({"filename":"a.whl","url":"a.whl","hashes":{"Sha1":"xyz"}})"),
             "files[2].hashes.Sha1: sha1 digest 'xyz' is not hex"},
            {with_file(ok_file + R"(,"requires-python":3})"),
             "files[2].requires-python: expected a string or null"},
            {with_file(ok_file + R"(,"yanked":1})"),
             "files[2].yanked: expected a boolean or a string"},
            {with_file(ok_file + R"(,"yanked":null})"),
             "files[2].yanked: expected a boolean or a string"},
            {with_file(ok_file + R"(,"core-metadata":"true"})"),
             "files[2].core-metadata: expected a boolean or an object"},
            {with_file(ok_file + R"(,"dist-info-metadata":{"sha256":"zz"}})"),
             "files[2].dist-info-metadata.sha256: sha256 digest 'zz' is not hex"},
            {with_file(ok_file + R"(,"size":-1})"),
             "files[2].size: expected a non-negative integer"},
            {with_file(ok_file + R"(,"size":1.5})"),
             "files[2].size: expected a non-negative integer"},
            {with_file(ok_file + R"(,"size":"12"})"),
             "files[2].size: expected a non-negative integer"},
            {with_file(ok_file + R"(,"upload-time":12})"),
             "files[2].upload-time: expected a string or null"},
            {std::string(100, '[') + std::string(100, ']'), "JSON nested more than 64 levels deep"},
        };
        for (const Bad& row : bad) {
            CAPTURE(row.message);
            auto page = parse_simple_json(row.body, k_url);
            REQUIRE_FALSE(page.ok());
            CHECK(page.error().text() == k_url + ": " + row.message);
        }
    }

    TEST_CASE("brackets inside strings do not count towards the nesting limit") {
        const std::string deep_name = std::string(100, '[') + "\\\"" + std::string(100, '{');
        auto page = parse_simple_json(
            R"({"meta":{"api-version":"1.0"},"name":")" + deep_name + R"(","files":[]})", k_url);
        REQUIRE(page.ok());
        CHECK(page->name == std::string(100, '[') + "\"" + std::string(100, '{'));
    }

    TEST_CASE("a page over 64 MiB is refused before parsing") {
        const std::string body(rootlock::index::k_max_page_bytes + 1, ' ');
        auto page = parse_simple_json(body, k_url);
        REQUIRE_FALSE(page.ok());
        CHECK(page.error().text() ==
              k_url + ": index page is 67108865 bytes, more than the 64 MiB limit");
    }

    TEST_CASE("the Content-Type picks JSON or HTML, case and parameters ignored") {
        CHECK(page_format("application/vnd.pypi.simple.v1+json", k_url).value() ==
              PageFormat::json);
        CHECK(page_format(" Application/VND.pypi.simple.V1+JSON ; charset=utf-8", k_url).value() ==
              PageFormat::json);
        CHECK(page_format("text/html", k_url).value() == PageFormat::html);
        CHECK(page_format("text/html; charset=utf-8", k_url).value() == PageFormat::html);
        CHECK(page_format("application/vnd.pypi.simple.v1+html", k_url).value() ==
              PageFormat::html);
        struct Bad {
            const char* type;
            const char* shown;
        };
        const Bad bad[] = {
            {"application/json", "application/json"},
            {"application/vnd.pypi.simple.v2+json", "application/vnd.pypi.simple.v2+json"},
            {"application/vnd.pypi.simple.latest+json", "application/vnd.pypi.simple.latest+json"},
            {"text/plain; charset=utf-8", "text/plain; charset=utf-8"},
            {"", ""},
        };
        for (const Bad& row : bad) {
            auto format = page_format(row.type, k_url);
            REQUIRE_FALSE(format.ok());
            CHECK(format.error().text() ==
                  k_url + ": unsupported index page type '" + row.shown + "'");
        }
    }

    TEST_CASE("the Accept header prefers JSON over HTML") {
        const std::string accept = rootlock::index::k_accept_header;
        CHECK(accept.find("application/vnd.pypi.simple.v1+json,") == 0);
        CHECK(accept.find("application/vnd.pypi.simple.v1+html;q=0.2") != std::string::npos);
        CHECK(accept.find("text/html;q=0.01") != std::string::npos);
    }
}

}  // namespace ROOTLOCK_UNIT_ID
