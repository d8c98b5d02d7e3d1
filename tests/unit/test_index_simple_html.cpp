// Unit tests for PEP 503 HTML project pages: snippets modelled on download.pytorch.org and
// PyPI, the junk a tolerant scanner must step over, exact errors for bad hashes, and the speed
// of a 200,000-link page.
#include <doctest/doctest.h>

#include <ctime>
#include <string>

#include "index/project_page.hpp"

using rootlock::index::parse_simple_html;
using rootlock::index::ProjectPage;

namespace {

const std::string k_sha256 = "3a852369a38dec343d45ecd0bc3660f79b88a23e0c878d18707f7c13bf49538f";
const std::string k_metadata_sha256 =
    "86107f52ff49e63a75c9d345374cac30140e053a12ffa728d676fee836e69022";
const std::string k_torch_url = "https://download.pytorch.org/whl/cu128/torch/";
const std::string k_pypi_url = "https://pypi.org/simple/nvidia-cudnn-cu12/";

ProjectPage parse_ok(const std::string& body, const std::string& url = k_torch_url) {
    auto page = parse_simple_html(body, url, "torch");
    REQUIRE(page.ok());
    return std::move(page).value();
}

}  // namespace

TEST_SUITE("rootlock::index") {
    TEST_CASE("a download.pytorch.org page gives decoded names, absolute URLs and hashes") {
        const std::string body =
            "<!DOCTYPE html>\n<html>\n  <body>\n    <h1>Links for torch</h1>\n"
            "    <a href=\"/whl/cu128/torch-2.8.0%2Bcu128-cp313-cp313-manylinux_2_28_x86_64.whl"
            "#sha256=" +
            k_sha256 + "\" data-dist-info-metadata=\"sha256=" + k_metadata_sha256 +
            "\" data-core-metadata=\"sha256=" + k_metadata_sha256 +
            "\">torch-2.8.0+cu128-cp313-cp313-manylinux_2_28_x86_64.whl</a><br/>\n"
            "    <a href=\"/whl/cu128/torch-2.8.0%2Bcu128-cp313-cp313-manylinux_2_28_aarch64.whl\">"
            "torch-2.8.0+cu128-cp313-cp313-manylinux_2_28_aarch64.whl</a><br/>\n"
            "  </body>\n</html>\n<!--TIMESTAMP 1754000000-->\n";
        const ProjectPage page = parse_ok(body);
        CHECK(page.name == "torch");
        CHECK(page.api_version.empty());
        REQUIRE(page.files.size() == 2);
        const auto& x86 = page.files[0];
        CHECK(x86.filename == "torch-2.8.0+cu128-cp313-cp313-manylinux_2_28_x86_64.whl");
        CHECK(x86.url ==
              "https://download.pytorch.org/whl/cu128/"
              "torch-2.8.0%2Bcu128-cp313-cp313-manylinux_2_28_x86_64.whl");
        CHECK(x86.hashes == std::map<std::string, std::string>{{"sha256", k_sha256}});
        CHECK(x86.has_metadata);
        CHECK(x86.metadata_hashes ==
              std::map<std::string, std::string>{{"sha256", k_metadata_sha256}});
        CHECK_FALSE(x86.requires_python.has_value());
        CHECK_FALSE(x86.yanked);
        CHECK_FALSE(x86.size.has_value());
        CHECK_FALSE(x86.upload_time.has_value());
        // The aarch64 anchors once came without a hash (pytorch/pytorch#153469).
        const auto& arm = page.files[1];
        CHECK(arm.filename == "torch-2.8.0+cu128-cp313-cp313-manylinux_2_28_aarch64.whl");
        CHECK(arm.hashes.empty());
        CHECK_FALSE(arm.has_metadata);
    }

    TEST_CASE("relative ../../ links resolve against the page and sdists are kept") {
        const std::string body =
            "<a href=\"../../whl/nvidia_nccl_cu12-2.27.3-py3-none-manylinux2014_x86_64."
            "manylinux_2_17_x86_64.whl#sha256=" +
            k_sha256 +
            "\">nvidia_nccl_cu12-2.27.3-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl</a>"
            "<a href=\"triton-3.4.0.tar.gz\">triton-3.4.0.tar.gz</a>";
        const ProjectPage page =
            parse_ok(body, "https://download.pytorch.org/simple/nvidia-nccl-cu12/");
        REQUIRE(page.files.size() == 2);
        CHECK(page.files[0].url ==
              "https://download.pytorch.org/whl/"
              "nvidia_nccl_cu12-2.27.3-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl");
        CHECK(page.files[0].hashes.at("sha256") == k_sha256);
        CHECK(page.files[1].filename == "triton-3.4.0.tar.gz");
        CHECK(page.files[1].url ==
              "https://download.pytorch.org/simple/nvidia-nccl-cu12/triton-3.4.0.tar.gz");
    }

    TEST_CASE("a PyPI page gives requires-python unescaped, yanked reasons and core metadata") {
        const std::string other = std::string(64, 'c');
        const std::string body =
            "<!DOCTYPE html>\n<html>\n  <head>\n"
            "    <meta name=\"pypi:repository-version\" content=\"1.4\">\n"
            "    <title>Links for nvidia-cudnn-cu12</title>\n  </head>\n  <body>\n"
            "    <h1>Links for nvidia-cudnn-cu12</h1>\n"
            "    <a href=\"https://files.pythonhosted.org/packages/ba/51/"
            "e123d997aa098c61d029f76663dedbfb9bc8dcf8c60cbd6adbe42f76d049/"
            "nvidia_cudnn_cu12-9.10.2.21-py3-none-manylinux_2_27_x86_64.whl#sha256=" +
            k_sha256 +
            "\" data-requires-python=\"&gt;=3\" data-dist-info-metadata=\"sha256=" + other +
            "\" data-core-metadata=\"sha256=" + k_metadata_sha256 +
            "\">nvidia_cudnn_cu12-9.10.2.21-py3-none-manylinux_2_27_x86_64.whl</a><br />\n"
            "    <a "
            "href=\"https://files.pythonhosted.org/packages/00/aa/old-1.0-py3-none-any.whl\" "
            "data-requires-python=\"&gt;=3.9,&lt;4\" data-yanked=\"broken &quot;pins&quot; &amp; "
            "more\" data-dist-info-metadata=\"true\">old-1.0-py3-none-any.whl</a><br />\n"
            "    <a href=\"https://files.pythonhosted.org/packages/00/bb/older-0.9.tar.gz\" "
            "data-yanked data-requires-python=\"\">older-0.9.tar.gz</a><br />\n"
            "  </body>\n</html>\n<!--SERIAL 29555000-->";
        auto parsed = parse_simple_html(body, k_pypi_url, "nvidia-cudnn-cu12");
        REQUIRE(parsed.ok());
        const ProjectPage& page = parsed.value();
        CHECK(page.name == "nvidia-cudnn-cu12");
        REQUIRE(page.files.size() == 3);
        CHECK(page.files[0].requires_python == ">=3");
        CHECK(page.files[0].metadata_hashes.at("sha256") == k_metadata_sha256);
        CHECK_FALSE(page.files[0].yanked);
        CHECK(page.files[1].requires_python == ">=3.9,<4");
        CHECK(page.files[1].yanked);
        CHECK(page.files[1].yanked_reason == "broken \"pins\" & more");
        CHECK(page.files[1].has_metadata);
        CHECK(page.files[1].metadata_hashes.empty());
        CHECK(page.files[2].yanked);
        CHECK(page.files[2].yanked_reason.empty());
        CHECK_FALSE(page.files[2].requires_python.has_value());
        CHECK_FALSE(page.files[2].has_metadata);
    }

    TEST_CASE("metadata attributes that promise nothing leave has_metadata unset") {
        const std::string body =
            "<a href=\"a.whl\" data-core-metadata=\"false\">a</a>"
            "<a href=\"b.whl\" data-core-metadata=\"\">b</a>"
            "<a href=\"c.whl\" data-core-metadata>c</a>"
            "<a href=\"d.whl\" data-core-metadata=\" TRUE \">d</a>"
            "<a href=\"e.whl\" data-core-metadata=\"SHA256=" +
            std::string(64, 'E') + "\">e</a>";
        const ProjectPage page = parse_ok(body);
        REQUIRE(page.files.size() == 5);
        CHECK_FALSE(page.files[0].has_metadata);
        CHECK_FALSE(page.files[1].has_metadata);
        CHECK_FALSE(page.files[2].has_metadata);
        CHECK(page.files[3].has_metadata);
        CHECK(page.files[4].metadata_hashes.at("sha256") == std::string(64, 'e'));
    }

    TEST_CASE("the first <base href> applies to every link, even those before it") {
        const std::string body =
            "<a href=\"a.whl\">a</a>"
            "<BASE HREF=\"https://mirror.example/pkgs/cu128/\">"
            "<base href=\"https://ignored.example/\">"
            "<a href=\"../b.whl\">b</a>";
        const ProjectPage page = parse_ok(body);
        REQUIRE(page.files.size() == 2);
        CHECK(page.files[0].url == "https://mirror.example/pkgs/cu128/a.whl");
        CHECK(page.files[1].url == "https://mirror.example/pkgs/b.whl");
        // A relative base is itself resolved against the page.
        const ProjectPage relative = parse_ok("<base href=\"/whl/\"><a href=\"c.whl\">c</a>");
        REQUIRE(relative.files.size() == 1);
        CHECK(relative.files[0].url == "https://download.pytorch.org/whl/c.whl");
    }

    TEST_CASE("the scanner steps over comments, scripts, declarations and odd markup") {
        const std::string body =
            "<?xml version=\"1.0\"?><!DOCTYPE html PUBLIC \"-//W3C//DTD XHTML 1.0//EN\">"
            "<!-- <a href=\"commented.whl\">x</a> -->"
            "<script>var s = '<a href=\"scripted.whl\">';</script >"
            "<STYLE>a[href$='.whl'] { }</style>"
            "1 < 2 and <3 hearts\n"
            "<A HREF='single.whl' CLASS=x>single</A>"
            "<a\nclass=\"x\"\thref = unquoted.whl data-yanked=>unquoted</a>"
            "<a href=\"first.whl\" href=\"second.whl\">dup</a>"
            "<a name=\"anchor-without-href\">none</a>"
            "<a href=\"../\">parent directory</a>"
            "<a href=\"\">self</a>"
            "<abbr href=\"abbr.whl\">not a link</abbr>"
            "<a href=\"slash.whl\"/>"
            "<a =\"junk\" href=\"equals.whl\">";
        const ProjectPage page = parse_ok(body);
        REQUIRE(page.files.size() == 5);
        CHECK(page.files[0].filename == "single.whl");
        CHECK(page.files[1].filename == "unquoted.whl");
        CHECK(page.files[1].yanked);
        CHECK(page.files[2].filename == "first.whl");
        CHECK(page.files[3].filename == "slash.whl");
        CHECK(page.files[4].filename == "equals.whl");
    }

    TEST_CASE("entities in hrefs are decoded and spaces and non-ASCII bytes escaped") {
        const std::string body =
            "<a href=\"x.whl?a=1&amp;b=2#md5=0123456789ABCDEF0123456789abcdef&amp;egg=x\">1</a>"
            "<a href=\"torch-2.8.0&#x2B;cpu-py3-none-any.whl\">2</a>"
            "<a href=\"it&#39;s&#32;a.whl\">3</a>"
            "<a href=\"caf\xC3\xA9.whl\">4</a>"
            "<a href=\"  \n spaced.whl\t\n\">5</a>"
            "<a href=\"bad&#0;.whl\">6</a>"
            "<a href=\"&unknown;&amp\">7</a>";
        const ProjectPage page = parse_ok(body);
        REQUIRE(page.files.size() == 7);
        CHECK(page.files[0].url == "https://download.pytorch.org/whl/cu128/torch/x.whl?a=1&b=2");
        CHECK(page.files[0].hashes.at("md5") == "0123456789abcdef0123456789abcdef");
        CHECK(page.files[1].filename == "torch-2.8.0+cpu-py3-none-any.whl");
        CHECK(page.files[2].filename == "it's a.whl");
        CHECK(page.files[2].url == "https://download.pytorch.org/whl/cu128/torch/it's%20a.whl");
        CHECK(page.files[3].url == "https://download.pytorch.org/whl/cu128/torch/caf%C3%A9.whl");
        CHECK(page.files[3].filename == "caf\xC3\xA9.whl");
        CHECK(page.files[4].filename == "spaced.whl");
        CHECK(page.files[5].filename == "bad\xEF\xBF\xBD.whl");
        CHECK(page.files[6].filename == "&unknown;&amp");
    }

    TEST_CASE("links that name no file are skipped") {
        const std::string body =
            "<a href=\"ok.whl\">ok</a>"
            "<a href=\"a&#1;b.whl\">control character</a>"
            "<a href=\"dir%2Fx.whl\">encoded slash</a>"
            "<a href=\"bad%zz.whl\">bad escape</a>"
            "<a href=\"nul%00.whl\">NUL</a>"
            "<a href=\"1x:y\">bad scheme</a>"
            "<a href=\"https://h/dir/\">directory</a>";
        const ProjectPage page = parse_ok(body);
        REQUIRE(page.files.size() == 1);
        CHECK(page.files[0].filename == "ok.whl");
    }

    TEST_CASE("a page cut short or not HTML at all gives the links it has, never an error") {
        CHECK(parse_ok("").files.empty());
        CHECK(parse_ok("{\"meta\": {\"api-version\": \"1.1\"}}").files.empty());
        CHECK(parse_ok("\x89PNG\r\n\x1a\n<<<<>>>>&&&;").files.empty());
        CHECK(parse_ok("<").files.empty());
        CHECK(parse_ok("<a").files.empty());
        CHECK(parse_ok("<!-- never closed <a href=\"x.whl\">").files.empty());
        const std::string before = "<a href=\"kept.whl\">kept</a>";
        const char* cuts[] = {"<a href=\"cut.whl", "<a href='cut.whl",    "<a href=",
                              "<a href=cut.whl",   "<a href=\"cut.whl\"", "<a href=\"cut.whl\" "};
        for (const char* cut : cuts) {
            CAPTURE(std::string(cut));
            const ProjectPage page = parse_ok(before + cut);
            REQUIRE(page.files.size() == 1);
            CHECK(page.files[0].filename == "kept.whl");
        }
        const ProjectPage no_end_tag = parse_ok(before + "<a href=\"also.whl\">also");
        CHECK(no_end_tag.files.size() == 2);
    }

    TEST_CASE("a link with a malformed hash fails the page at the link's line and column") {
        struct Bad {
            std::string link;
            std::string message;
        };
        const Bad bad[] = {
            {"<a href=\"x.whl#sha256=abc\">x</a>", "sha256 digest has 3 hex digits, expected 64"},
            {"<a href=\"x.whl#sha256=\">x</a>", "sha256 digest is empty"},
            {"<a href=\"x.whl#SHA512=" + k_sha256 + "\">x</a>",
             "sha512 digest has 64 hex digits, expected 128"},
            {"<a href=\"x.whl#sha256=" + std::string(64, 'g') + "\">x</a>",
             "sha256 digest '" + std::string(64, 'g') + "' is not hex"},
            {"<a href=\"x.whl\" data-core-metadata=\"sha256=zz\">x</a>",
             "sha256 digest 'zz' is not hex"},
            {"<a href=\"x.whl\" data-dist-info-metadata=\"sha1=abc\">x</a>",
             "sha1 digest has 3 hex digits, expected 40"},
        };
        for (const Bad& row : bad) {
            CAPTURE(row.link);
            const std::string body = "<html>\n<body>\n<h1>Links</h1>\n  <a href=\"ok.whl\">ok</a>" +
                                     row.link + "\n</body>";
            auto page = parse_simple_html(body, k_torch_url, "torch");
            REQUIRE_FALSE(page.ok());
            CHECK(page.error().text() == k_torch_url + ":4:26: " + row.message);
        }
    }

    TEST_CASE("a valid data-core-metadata hides a malformed legacy attribute") {
        const std::string body =
            "<a href=\"x.whl\" data-core-metadata=\"true\" "
            "data-dist-info-metadata=\"sha256=zz\">x</a>";
        const ProjectPage page = parse_ok(body);
        REQUIRE(page.files.size() == 1);
        CHECK(page.files[0].has_metadata);
    }

    TEST_CASE("a page over 64 MiB is refused before scanning") {
        const std::string body(rootlock::index::k_max_page_bytes + 1, ' ');
        auto page = parse_simple_html(body, k_torch_url, "torch");
        REQUIRE_FALSE(page.ok());
        CHECK(page.error().text() ==
              k_torch_url + ": index page is 67108865 bytes, more than the 64 MiB limit");
    }

    TEST_CASE("a 200,000-link page parses completely, each link resolved") {
        std::string body = "<!DOCTYPE html>\n<html><body><h1>Links for torch</h1>\n";
        const std::string hash = "#sha256=" + k_sha256;
        for (int i = 0; i < 200000; ++i) {
            const std::string name =
                "torch-2.8." + std::to_string(i) + "%2Bcu128-cp313-cp313-manylinux_2_28_x86_64.whl";
            body += "<a href=\"../../whl/cu128/" + name + hash +
                    "\" data-core-metadata=\"sha256=" + k_metadata_sha256 + "\">" + name +
                    "</a><br/>\n";
        }
        body += "</body></html>\n";
        // Timed for the log only: a unit test never fails on a clock.
        const std::clock_t start = std::clock();
        auto page =
            parse_simple_html(body, "https://download.pytorch.org/whl/cu128/torch/", "torch");
        const double elapsed = static_cast<double>(std::clock() - start) / CLOCKS_PER_SEC;
        REQUIRE(page.ok());
        REQUIRE(page->files.size() == 200000);
        CHECK(page->files[199999].filename ==
              "torch-2.8.199999+cu128-cp313-cp313-manylinux_2_28_x86_64.whl");
        CHECK(page->files[199999].url ==
              "https://download.pytorch.org/whl/whl/cu128/"
              "torch-2.8.199999%2Bcu128-cp313-cp313-manylinux_2_28_x86_64.whl");
        MESSAGE("200,000 links parsed in " << elapsed << " s of processor time");
    }
}
