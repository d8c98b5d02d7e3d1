// The layer plan of an OCI image: entries by what they come from, files rootlock writes with
// the wheel beside them, every layer carrying the directories above its files.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "image/oci_layers.hpp"

using namespace rootlock::image;

namespace {

const std::string k_site = "/opt/venv/lib/python3.11/site-packages";

std::vector<LayerInput> inputs() {
    auto dir = [](std::string path, bool base = false) {
        return LayerInput{std::move(path), true, base, ""};
    };
    auto file = [](std::string path, std::string wheel = "", bool base = false) {
        return LayerInput{std::move(path), false, base, std::move(wheel), 10};
    };
    return {
        dir("/", true),                                                 // 0
        dir("/etc", true),                                              // 1
        file("/etc/hostname"),                                          // 2 rootlock's
        file("/etc/os-release", "", true),                              // 3
        dir("/opt"),                                                    // 4
        dir("/opt/venv"),                                               // 5
        file("/opt/venv/pyvenv.cfg"),                                   // 6
        dir(k_site),                                                    // 7
        dir(k_site + "/nvidia"),                                        // 8
        file(k_site + "/nvidia/__init__.py", "nvidia-cudnn-cu12"),      // 9
        dir(k_site + "/nvidia/__pycache__"),                            // 10
        file(k_site + "/nvidia/__pycache__/__init__.cpython-311.pyc"),  // 11
        dir(k_site + "/torch"),                                         // 12
        file(k_site + "/torch/__init__.py", "torch"),                   // 13
        file(k_site + "/web_router.py", "web-router"),                  // 14
        file(k_site + "/zz.pth"),                                       // 15 next to several kinds
    };
}

}  // namespace

TEST_SUITE("rootlock::image") {
    TEST_CASE("entries go to the layer of what they come from, directories above repeated") {
        const auto plans = plan_layers(inputs(), LayerPlanOptions{});
        REQUIRE(plans.size() == 5);
        CHECK(plans[0].kind == LayerKind::base);
        CHECK(plans[0].entries == std::vector<size_t>{0, 1, 3});
        CHECK(plans[1].kind == LayerKind::nvidia);
        // The .pyc rootlock compiled goes with the nvidia wheel whose directory holds it.
        CHECK(plans[1].entries == std::vector<size_t>{0, 4, 5, 7, 8, 9, 10, 11});
        CHECK(plans[2].kind == LayerKind::torch);
        CHECK(plans[2].entries == std::vector<size_t>{0, 4, 5, 7, 12, 13});
        CHECK(plans[3].kind == LayerKind::venv);
        // site-packages holds files of several kinds: what rootlock writes there is the venv's.
        CHECK(plans[3].entries == std::vector<size_t>{0, 4, 5, 6, 7, 14, 15});
        CHECK(plans[4].kind == LayerKind::recipe);
        // /opt, made for the venv but outside it, belongs to the last layer (and is repeated
        // above the venv in the others).
        CHECK(plans[4].entries == std::vector<size_t>{0, 1, 2, 4});
    }

    TEST_CASE("wheels by name; a layer with nothing is left out") {
        CHECK(layer_of_wheel("nvidia-nccl-cu12") == LayerKind::nvidia);
        CHECK(layer_of_wheel("torch") == LayerKind::torch);
        CHECK(layer_of_wheel("triton") == LayerKind::torch);
        CHECK(layer_of_wheel("pytorch-triton-rocm") == LayerKind::torch);
        CHECK(layer_of_wheel("torchvision") == LayerKind::venv);
        CHECK(layer_of_wheel("numpy") == LayerKind::venv);
        const auto only_base =
            plan_layers({LayerInput{"/", true, true, "", 0}, LayerInput{"/bin", true, true, "", 0}},
                        LayerPlanOptions{});
        REQUIRE(only_base.size() == 1);
        CHECK(only_base[0].kind == LayerKind::base);
        CHECK(std::string(layer_comment(LayerKind::recipe)) == "rootlock: the recipe's files");
    }

    TEST_CASE("nvidia-* wheels over the threshold get a layer each, by name, before the rest") {
        auto dir = [](std::string path) { return LayerInput{std::move(path), true, false, "", 0}; };
        auto file = [](std::string path, std::string wheel, uint64_t size) {
            return LayerInput{std::move(path), false, false, std::move(wheel), size};
        };
        const std::string nvidia = k_site + "/nvidia";
        const std::vector<LayerInput> entries = {
            dir("/"),                                                                       // 0
            dir("/opt"),                                                                    // 1
            dir("/opt/venv"),                                                               // 2
            dir(k_site),                                                                    // 3
            dir(nvidia),                                                                    // 4
            file(nvidia + "/LICENSE", "nvidia-nvjitlink-cu12", 0),                          // 5
            file(nvidia + "/__init__.py", "nvidia-cublas-cu12", 0),                         // 6
            dir(nvidia + "/__pycache__"),                                                   // 7
            file(nvidia + "/__pycache__/__init__.cpython-311.pyc", "", 100),                // 8
            dir(nvidia + "/cublas"),                                                        // 9
            file(nvidia + "/cublas/libcublas.so.12", "nvidia-cublas-cu12", 600),            // 10
            file(nvidia + "/cublas/libcublasLt.so.12", "nvidia-cublas-cu12", 500),          // 11
            dir(nvidia + "/cublas/__pycache__"),                                            // 12
            file(nvidia + "/cublas/__pycache__/x.pyc", "", 1),                              // 13
            dir(nvidia + "/cudnn"),                                                         // 14
            file(nvidia + "/cudnn/libcudnn.so.9", "nvidia-cudnn-cu12", 1001),               // 15
            dir(nvidia + "/nvjitlink"),                                                     // 16
            file(nvidia + "/nvjitlink/libnvJitLink.so.12", "nvidia-nvjitlink-cu12", 1000),  // 17
            file(k_site + "/torch.py", "torch", 5000),                                      // 18
        };
        LayerPlanOptions options;
        options.own_layer_bytes = 1000;  // nvjitlink's 1000 bytes are not over it
        const auto plans = plan_layers(entries, options);
        REQUIRE(plans.size() == 6);  // then the venv's /opt/venv, the recipe's / and /opt
        // cuBLAS and cuDNN by name, each with the bytecode rootlock wrote in its directories and
        // the directories above its files.
        CHECK(plans[0].kind == LayerKind::nvidia);
        CHECK(plans[0].wheel == "nvidia-cublas-cu12");
        CHECK(plans[0].wheels == std::vector<std::string>{"nvidia-cublas-cu12"});
        CHECK(plans[0].entries == std::vector<size_t>{0, 1, 2, 3, 4, 6, 9, 10, 11, 12, 13});
        CHECK(layer_comment(plans[0]) == "rootlock: the wheel nvidia-cublas-cu12");
        CHECK(plans[1].wheel == "nvidia-cudnn-cu12");
        CHECK(plans[1].entries == std::vector<size_t>{0, 1, 2, 3, 4, 14, 15});
        // The rest of nvidia-*, with the bytecode of nvidia/, which files of two nvidia layers
        // share.
        CHECK(plans[2].kind == LayerKind::nvidia);
        CHECK(plans[2].wheel.empty());
        CHECK(plans[2].wheels == std::vector<std::string>{"nvidia-nvjitlink-cu12"});
        CHECK(plans[2].entries == std::vector<size_t>{0, 1, 2, 3, 4, 5, 7, 8, 16, 17});
        CHECK(layer_comment(plans[2]) == "rootlock: the nvidia-* wheels");
        // Only nvidia-* wheels are split off, however big.
        CHECK(plans[3].kind == LayerKind::torch);
        CHECK(plans[3].entries == std::vector<size_t>{0, 1, 2, 3, 18});
        // The default threshold (256 MiB) keeps them all together.
        const auto together = plan_layers(entries, LayerPlanOptions{});
        REQUIRE(together.size() == 4);
        CHECK(together[0].wheels == std::vector<std::string>{"nvidia-cublas-cu12",
                                                             "nvidia-cudnn-cu12",
                                                             "nvidia-nvjitlink-cu12"});
    }
}
