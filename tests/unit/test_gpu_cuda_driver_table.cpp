// Unit tests for the CUDA-to-driver table (gpu-containers.md 4.1): minimums, minor-version
// compatibility floors, the verdict and its one-line messages, and CUDA versions parsed.
#include <doctest/doctest.h>

#include <string>

#include "gpu/cuda_driver_table.hpp"

namespace ROOTLOCK_UNIT_ID {

using rootlock::gpu::cuda_driver_rows;
using rootlock::gpu::cuda_version_from_number;
using rootlock::gpu::CudaVersion;
using rootlock::gpu::DriverRelease;
using rootlock::gpu::DriverVerdictKind;
using rootlock::gpu::judge_driver;
using rootlock::gpu::max_cuda_for_driver;
using rootlock::gpu::minimum_driver;
using rootlock::gpu::minor_version_floor;
using rootlock::gpu::parse_cuda_version;
using rootlock::gpu::parse_driver_release;

namespace {

DriverRelease driver(const char* text) {
    return parse_driver_release(text).value();
}

CudaVersion cuda(const char* text) {
    return parse_cuda_version(text).value();
}

std::string minimum_text(const char* version) {
    auto minimum = minimum_driver(cuda(version));
    return minimum ? minimum->text : "none";
}

std::string max_cuda_text(const char* release) {
    auto max = max_cuda_for_driver(driver(release));
    return max ? max->text() : "none";
}

}  // namespace

TEST_SUITE("rootlock::gpu") {
    TEST_CASE("each CUDA release's GA minimum driver is NVIDIA's") {
        CHECK(minimum_text("11.0") == "450.51.05");
        CHECK(minimum_text("11.1") == "455.23");
        CHECK(minimum_text("11.2") == "460.27.03");
        CHECK(minimum_text("11.4") == "470.42.01");
        CHECK(minimum_text("11.8") == "520.61.05");
        CHECK(minimum_text("12.0") == "525.60.13");
        CHECK(minimum_text("12.2") == "535.54.03");
        CHECK(minimum_text("12.4") == "550.54.14");
        CHECK(minimum_text("12.6") == "560.28.03");
        CHECK(minimum_text("12.8") == "570.26");
        CHECK(minimum_text("12.9") == "575.51.03");
        CHECK(minimum_text("13.0") == "580.65.06");
        CHECK(minimum_text("13.1") == "590.44.01");
        CHECK(minimum_text("13.2") == "595.45.04");
        CHECK(minimum_text("12.7") == "none");  // there was no 12.7
        CHECK(minimum_text("10.2") == "none");
        CHECK(minimum_text("14.0") == "none");
    }

    TEST_CASE("the table's rows parse and rise with the CUDA release") {
        const auto rows = cuda_driver_rows();
        REQUIRE(rows.size() == 21);
        for (size_t i = 0; i < rows.size(); ++i) {
            CAPTURE(rows[i].cuda.text());
            auto minimum = parse_driver_release(rows[i].minimum);
            REQUIRE(minimum.ok());
            CHECK(minimum->full());
            CHECK(minor_version_floor(rows[i].cuda.major).has_value());
            if (i > 0) {
                CHECK(rows[i - 1].cuda < rows[i].cuda);
                CHECK(parse_driver_release(rows[i - 1].minimum).value() < minimum.value());
            }
        }
    }

    TEST_CASE("minor-version compatibility floors are per CUDA major") {
        CHECK(minor_version_floor(11)->text == "450.80.02");
        CHECK(minor_version_floor(12)->text == "525.60.13");
        CHECK(minor_version_floor(13)->text == "580.65.06");
        CHECK_FALSE(minor_version_floor(10).has_value());
        CHECK_FALSE(minor_version_floor(14).has_value());
    }

    TEST_CASE("a driver at or above the release's minimum runs it fully") {
        auto verdict = judge_driver(cuda("12.8"), driver("570.124.06"));
        CHECK(verdict.kind == DriverVerdictKind::ok);
        CHECK(verdict.row == cuda("12.8"));
        CHECK(verdict.minimum->text == "570.26");
        CHECK(verdict.floor->text == "525.60.13");
        CHECK_FALSE(verdict.assumed.has_value());
        CHECK(verdict.message ==
              "CUDA 12.8 runs on driver 570.124.06 (12.8 needs 570.26 or newer)");
        CHECK(judge_driver(cuda("12.8"), driver("570.26")).kind == DriverVerdictKind::ok);
        CHECK(judge_driver(cuda("13.0"), driver("580.65.06")).kind == DriverVerdictKind::ok);
        CHECK(judge_driver(cuda("11.8"), driver("580.65.06")).kind == DriverVerdictKind::ok);
        CHECK(judge_driver(cuda("12.4"), driver("550.163.01")).kind == DriverVerdictKind::ok);
    }

    TEST_CASE("a driver between the major's floor and the minimum runs through MVC") {
        auto verdict = judge_driver(cuda("12.8"), driver("535.261.03"));
        CHECK(verdict.kind == DriverVerdictKind::minor_version_compat);
        CHECK(verdict.message ==
              "CUDA 12.8 runs on driver 535.261.03 only through minor-version compatibility: "
              "precompiled kernels run, PTX newer than the driver cannot be JIT-compiled (12.8 "
              "needs 570.26 for full support)");
        CHECK(judge_driver(cuda("12.8"), driver("550.163.01")).kind ==
              DriverVerdictKind::minor_version_compat);
        CHECK(judge_driver(cuda("12.8"), driver("525.60.13")).kind ==
              DriverVerdictKind::minor_version_compat);
        CHECK(judge_driver(cuda("12.8"), driver("570.25.99")).kind ==
              DriverVerdictKind::minor_version_compat);
        CHECK(judge_driver(cuda("13.1"), driver("580.95.05")).kind ==
              DriverVerdictKind::minor_version_compat);
        CHECK(judge_driver(cuda("11.8"), driver("470.256.02")).kind ==
              DriverVerdictKind::minor_version_compat);
    }

    TEST_CASE("a driver below the major's floor is too old, both numbers named") {
        auto thirteen = judge_driver(cuda("13.0"), driver("570.124.06"));
        CHECK(thirteen.kind == DriverVerdictKind::too_old);
        CHECK(thirteen.message == "CUDA 13.0 needs 580.65.06 or newer; the driver is 570.124.06");
        auto twelve = judge_driver(cuda("12.8"), driver("470.256.02"));
        CHECK(twelve.kind == DriverVerdictKind::too_old);
        CHECK(twelve.message ==
              "CUDA 12.8 needs 570.26 or newer (525.60.13 at least, through minor-version "
              "compatibility); the driver is 470.256.02");
        CHECK(judge_driver(cuda("12.0"), driver("525.60.12")).kind == DriverVerdictKind::too_old);
        // 11.0's GA minimum is below the 11.x floor: 450.51.06 runs 11.0, not 11.1
        CHECK(judge_driver(cuda("11.0"), driver("450.51.06")).kind == DriverVerdictKind::ok);
        auto eleven = judge_driver(cuda("11.1"), driver("450.51.06"));
        CHECK(eleven.kind == DriverVerdictKind::too_old);
        CHECK(eleven.message ==
              "CUDA 11.1 needs 455.23 or newer (450.80.02 at least, through minor-version "
              "compatibility); the driver is 450.51.06");
        // a bare branch is older than every release of it
        CHECK(judge_driver(cuda("13.0"), driver("580")).kind == DriverVerdictKind::too_old);
    }

    TEST_CASE("a release missing from the table is judged by its major's nearest row") {
        auto newer = judge_driver(cuda("12.10"), driver("575.57.08"));
        CHECK(newer.kind == DriverVerdictKind::unknown_cuda);
        CHECK(newer.row == cuda("12.9"));
        CHECK(newer.assumed == DriverVerdictKind::ok);
        CHECK(newer.message ==
              "CUDA 12.10 is not in the table; judged as 12.9, the newest CUDA 12 release in it: "
              "CUDA 12.9 runs on driver 575.57.08 (12.9 needs 575.51.03 or newer)");
        auto gap = judge_driver(cuda("12.7"), driver("560.35.05"));
        CHECK(gap.kind == DriverVerdictKind::unknown_cuda);
        CHECK(gap.row == cuda("12.8"));
        CHECK(gap.assumed == DriverVerdictKind::minor_version_compat);
        CHECK(gap.message.starts_with(
            "CUDA 12.7 is not in the table; judged as 12.8, the next CUDA 12 release in it: CUDA "
            "12.8 runs on driver 560.35.05 only through minor-version compatibility"));
        auto old = judge_driver(cuda("13.5"), driver("570.124.06"));
        CHECK(old.assumed == DriverVerdictKind::too_old);
        CHECK(old.message ==
              "CUDA 13.5 is not in the table; judged as 13.2, the newest CUDA 13 release in it: "
              "CUDA 13.2 needs 595.45.04 or newer (580.65.06 at least, through minor-version "
              "compatibility); the driver is 570.124.06");
    }

    TEST_CASE("a CUDA major missing from the table is unknown, nothing assumed") {
        for (const char* version : {"14.0", "10.2", "9.0"}) {
            CAPTURE(version);
            auto verdict = judge_driver(cuda(version), driver("580.65.06"));
            CHECK(verdict.kind == DriverVerdictKind::unknown_cuda);
            CHECK_FALSE(verdict.row.has_value());
            CHECK_FALSE(verdict.minimum.has_value());
            CHECK_FALSE(verdict.floor.has_value());
            CHECK_FALSE(verdict.assumed.has_value());
            CHECK(verdict.message == "CUDA " + std::string(version) +
                                         " is not in the table (11.0 to 13.2): the driver it "
                                         "needs is unknown; the driver is 580.65.06");
        }
    }

    TEST_CASE("a driver's newest fully supported CUDA comes from the table") {
        CHECK(max_cuda_text("570.124.06") == "12.8");
        CHECK(max_cuda_text("570.26") == "12.8");
        CHECK(max_cuda_text("570.25") == "12.6");
        CHECK(max_cuda_text("535.261.03") == "12.2");
        CHECK(max_cuda_text("550.163.01") == "12.4");
        CHECK(max_cuda_text("580.65.06") == "13.0");
        CHECK(max_cuda_text("595.71.05") == "13.2");
        CHECK(max_cuda_text("620.10.01") == "13.2");
        CHECK(max_cuda_text("470.256.02") == "11.4");
        CHECK(max_cuda_text("450.51.05") == "11.0");
        CHECK(max_cuda_text("450.36.06") == "none");
        CHECK(max_cuda_text("580") == "12.9");  // a bare branch is below 580.65.06
    }

    TEST_CASE("CUDA versions read as MAJOR.MINOR[.PATCH] and as the runtime's numbers") {
        CHECK(cuda("12.8") == CudaVersion{12, 8});
        CHECK(cuda("12.8.1") == CudaVersion{12, 8});
        CHECK(cuda("13.0").number() == 13000);
        CHECK(cuda("12.10").text() == "12.10");
        CHECK(cuda("12.9") < cuda("12.10"));
        CHECK(cuda("11.8") < cuda("12.0"));
        CHECK(cuda_version_from_number(12080) == CudaVersion{12, 8});
        CHECK(cuda_version_from_number(12020).text() == "12.2");
        CHECK(cuda_version_from_number(13000).text() == "13.0");
        CHECK(cuda_version_from_number(11080).number() == 11080);
        CHECK(cuda_version_from_number(-1) == CudaVersion{});
    }

    TEST_CASE("malformed CUDA versions are refused with the reason") {
        struct Case {
            std::string text, why;
        };
        const Case cases[] = {
            {"", "it is empty"},
            {"12", "it has no minor"},
            {"12.", "the minor is not a number of one to four digits"},
            {".8", "the major is not a number from 1 to 9999"},
            {"0.8", "the major is not a number from 1 to 9999"},
            {"12345.0", "the major is not a number from 1 to 9999"},
            {"v12.8", "the major is not a number from 1 to 9999"},
            {"12.8x", "the minor is not a number of one to four digits"},
            {"12.99999", "the minor is not a number of one to four digits"},
            {"12.8.", "the patch is not a number of one to four digits"},
            {"12.8.1.2", "the patch is not a number of one to four digits"},
            {"12.8.1 ", "the patch is not a number of one to four digits"},
            {std::string("12.\0", 4), "the minor is not a number of one to four digits"},
        };
        for (const Case& c : cases) {
            CAPTURE(c.text);
            auto parsed = parse_cuda_version(c.text);
            REQUIRE_FALSE(parsed.ok());
            CHECK(parsed.error().text() ==
                  rootlock::util::quote(c.text) + " is not a CUDA version such as 12.8: " + c.why);
        }
    }
}

}  // namespace ROOTLOCK_UNIT_ID
