// The known dlopen edges over in-memory roots shaped like a torch CUDA environment: each edge
// resolved from its consumer (cuDNN's RUNPATH, torch's RPATH, the host's driver), and the rules
// that pick libnvrtc's CUDA major and libnvrtc-builtins' minor.
#include <doctest/doctest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "check/dlopen_edges.hpp"
#include "loader/root_model.hpp"
#include "support/fake_root.hpp"

namespace rootlock::testing {
namespace {

constexpr const char* k_site = "/opt/sp";

std::vector<std::string> cudnn_subs() {
    return {"adv",
            "cnn",
            "graph",
            "ops",
            "heuristic",
            "engines_precompiled",
            "engines_runtime_compiled"};
}

// torch/lib/libtorch_cuda.so with torch's DT_RPATH over an nvidia/ tree: cudart 12, cuDNN 9
// (RUNPATH $ORIGIN, every sub-library but the one named in `absent_sub`), NVRTC 12 with two
// builtins minors and an .alt copy, and libc10_cuda.so.
struct TorchRoot {
    std::unique_ptr<fs::MemoryTree> tree = make_fake_root();

    explicit TorchRoot(bool torch_needs_nvrtc, const std::string& absent_sub = "") {
        std::vector<std::string> needed{"libcudart.so.12", "libcudnn.so.9", "libc10_cuda.so"};
        if (torch_needs_nvrtc)
            needed.push_back("libnvrtc.so.12");
        ElfSpec torch = library_spec("libtorch_cuda.so", needed);
        torch.rpath =
            "$ORIGIN/../../nvidia/cuda_runtime/lib:$ORIGIN/../../nvidia/cudnn/lib:"
            "$ORIGIN/../../nvidia/cuda_nvrtc/lib:$ORIGIN";
        add("torch/lib/libtorch_cuda.so", torch);
        add("torch/lib/libc10_cuda.so", library_spec("libc10_cuda.so"));
        add("nvidia/cuda_runtime/lib/libcudart.so.12", library_spec("libcudart.so.12"));
        add("nvidia/cudnn/lib/libcudnn.so.9", with_runpath(library_spec("libcudnn.so.9")));
        for (const auto& sub : cudnn_subs()) {
            if (sub == absent_sub)
                continue;
            std::string soname = "libcudnn_" + sub + ".so.9";
            add("nvidia/cudnn/lib/" + soname, with_runpath(library_spec(soname)));
        }
        add("nvidia/cuda_nvrtc/lib/libnvrtc.so.12", with_runpath(library_spec("libnvrtc.so.12")));
        for (const char* name : {"libnvrtc-builtins.so.12.8", "libnvrtc-builtins.so.12.10",
                                 "libnvrtc-builtins.alt.so.12.8"}) {
            add(std::string("nvidia/cuda_nvrtc/lib/") + name, library_spec(name));
        }
    }

    static ElfSpec with_runpath(ElfSpec spec) {
        spec.runpath = "$ORIGIN";
        return spec;
    }
    void add(const std::string& relative, const ElfSpec& spec) {
        add_elf(*tree, std::string(k_site) + "/" + relative, spec);
    }
};

// "consumer -> name = provider (via)" with the flags, paths relative to the site directory.
std::vector<std::string> render(const std::vector<check::DlopenFinding>& findings) {
    auto strip = [](const std::string& path) {
        const std::string prefix = std::string(k_site) + "/";
        return path.compare(0, prefix.size(), prefix) == 0 ? path.substr(prefix.size()) : path;
    };
    std::vector<std::string> out;
    for (const auto& f : findings) {
        std::string line = strip(f.consumer) + " -> " + f.name + " = " +
                           (f.provider.empty() ? "-" : strip(f.provider)) + " (" + f.via + ")";
        if (f.optional)
            line += " optional";
        if (f.missing)
            line += " MISSING";
        for (const auto& dep : f.missing_dependencies)
            line += " needs-missing:" + dep;
        out.push_back(line);
    }
    return out;
}

struct Opened {
    loader::RootModel model;
    std::unique_ptr<loader::LoadSession> session;
    size_t first = 0;
};

Opened open_torch(const fs::FileTree& tree, loader::ModelOptions options = {}) {
    options.simulate_missing_cache = false;
    auto model = loader::open_root_model(tree, options);
    REQUIRE(model.ok());
    Opened opened{std::move(model.value()), nullptr, 0};
    opened.session = std::make_unique<loader::LoadSession>(*opened.model.context);
    REQUIRE(opened.session->load_main("/bin/sh", true));
    opened.first = opened.session->objects().size();
    REQUIRE(opened.session->dlopen(std::string(k_site) + "/torch/lib/libtorch_cuda.so") >= 0);
    return opened;
}

std::vector<std::string> cudnn_sub_lines(const std::string& absent) {
    std::vector<std::string> lines;
    for (const auto& sub : cudnn_subs()) {
        std::string soname = "libcudnn_" + sub + ".so.9";
        lines.push_back("nvidia/cudnn/lib/libcudnn.so.9 -> " + soname + " = " +
                        (sub == absent ? "- (not-found) MISSING"
                                       : "nvidia/cudnn/lib/" + soname + " (runpath)"));
    }
    return lines;
}

}  // namespace

TEST_SUITE("rootlock::check") {
    TEST_CASE("cuDNN's NVRTC is missing when only torch's RPATH could find it") {
        TorchRoot root(false, "engines_runtime_compiled");
        Opened opened = open_torch(*root.tree);
        const size_t before = opened.session->objects().size();
        auto findings = check::follow_dlopen_edges(*opened.session, opened.first);
        CHECK(opened.session->objects().size() == before);  // the caller's session is untouched

        std::vector<std::string> expected{
            "torch/lib/libtorch_cuda.so -> libcuda.so.1 = - (host-provided)",
            "torch/lib/libtorch_cuda.so -> libcufile.so.0 = - (not-found) optional MISSING",
        };
        for (auto& line : cudnn_sub_lines("engines_runtime_compiled"))
            expected.push_back(line);
        // cuDNN's RUNPATH switches torch's RPATH chain off (cuda-wheels.md sections 5 and 7).
        expected.push_back(
            "nvidia/cudnn/lib/libcudnn.so.9 -> libnvrtc.so.12 = - (not-found) MISSING");
        expected.push_back("torch/lib/libc10_cuda.so -> libcuda.so.1 = - (host-provided)");
        CHECK(render(findings) == expected);
    }

    TEST_CASE("an NVRTC torch already loaded answers cuDNN, and its newest builtins load") {
        TorchRoot root(true);
        Opened opened = open_torch(*root.tree);
        std::vector<std::string> expected{
            "torch/lib/libtorch_cuda.so -> libcuda.so.1 = - (host-provided)",
            "torch/lib/libtorch_cuda.so -> libcufile.so.0 = - (not-found) optional MISSING",
        };
        for (auto& line : cudnn_sub_lines(""))
            expected.push_back(line);
        expected.push_back(
            "nvidia/cudnn/lib/libcudnn.so.9 -> libnvrtc.so.12 = "
            "nvidia/cuda_nvrtc/lib/libnvrtc.so.12 (already-loaded)");
        expected.push_back("torch/lib/libc10_cuda.so -> libcuda.so.1 = - (host-provided)");
        // 12.10 is newer than 12.8 (numerically); the .alt copy is another library.
        expected.push_back(
            "nvidia/cuda_nvrtc/lib/libnvrtc.so.12 -> libnvrtc-builtins.so.12.10 = "
            "nvidia/cuda_nvrtc/lib/libnvrtc-builtins.so.12.10 (runpath)");
        CHECK(render(check::follow_dlopen_edges(*opened.session, opened.first)) == expected);
    }

    TEST_CASE("libnvrtc-builtins missing beside NVRTC is named by its pattern") {
        TorchRoot root(true);
        for (const char* name : {"libnvrtc-builtins.so.12.8", "libnvrtc-builtins.so.12.10"})
            REQUIRE(root.tree->remove(std::string(k_site) + "/nvidia/cuda_nvrtc/lib/" + name));
        Opened opened = open_torch(*root.tree);
        auto lines = render(check::follow_dlopen_edges(*opened.session, opened.first));
        REQUIRE(!lines.empty());
        CHECK(lines.back() ==
              "nvidia/cuda_nvrtc/lib/libnvrtc.so.12 -> libnvrtc-builtins.so.12.* = - (not-found) "
              "MISSING");
    }

    TEST_CASE("a cuDNN sub-library on LD_LIBRARY_PATH wins over the one beside cuDNN") {
        TorchRoot root(true);
        add_elf(*root.tree, "/usr/local/cudnn/libcudnn_ops.so.9",
                library_spec("libcudnn_ops.so.9", {"libcublasLt.so.12"}));
        loader::ModelOptions options;
        options.ld_library_path = {"/usr/local/cudnn"};
        Opened opened = open_torch(*root.tree, options);
        auto findings = check::follow_dlopen_edges(*opened.session, opened.first);
        auto it = std::find_if(findings.begin(), findings.end(),
                               [](const auto& f) { return f.name == "libcudnn_ops.so.9"; });
        REQUIRE(it != findings.end());
        CHECK(it->provider == "/usr/local/cudnn/libcudnn_ops.so.9");
        CHECK(it->via == "ld-library-path");
        CHECK_FALSE(it->missing);
        // dlopen fails as a whole when what it opened needs something nothing answers.
        CHECK(it->missing_dependencies == std::vector<std::string>{"libcublasLt.so.12"});
    }

    TEST_CASE("libcuda.so.1 in the image answers torch's dlopen when the host is not declared") {
        TorchRoot root(true);
        add_elf(*root.tree, "/usr/lib/x86_64-linux-gnu/libcuda.so.1", library_spec("libcuda.so.1"));
        loader::ModelOptions options;
        options.no_default_host_provided = true;
        Opened opened = open_torch(*root.tree, options);
        auto findings = check::follow_dlopen_edges(*opened.session, opened.first);
        REQUIRE(findings.size() >= 1);
        CHECK(findings[0].name == "libcuda.so.1");
        CHECK(findings[0].provider == "/usr/lib/x86_64-linux-gnu/libcuda.so.1");
        CHECK(findings[0].via == "default");
    }

    TEST_CASE("edges are followed from index `first` on only") {
        TorchRoot root(true);
        Opened opened = open_torch(*root.tree);
        CHECK(
            check::follow_dlopen_edges(*opened.session, opened.session->objects().size()).empty());
    }

    TEST_CASE("followed in the session itself, the opened objects stay loaded") {
        TorchRoot root(true);
        Opened opened = open_torch(*root.tree);
        CHECK(opened.session->find_by_name("libcudnn_graph.so.9") == -1);
        check::follow_dlopen_edges_in(*opened.session, opened.first);
        CHECK(opened.session->find_by_name("libcudnn_graph.so.9") >= 0);
    }

    TEST_CASE("NVRTC's CUDA major comes from cuDNN's own needs, then cudart, then cuBLAS") {
        struct Case {
            std::vector<std::string> cudnn_needs;
            std::vector<std::string> loaded;  // sonames dlopened before cuDNN
            int major;
        };
        const std::vector<Case> cases{
            {{"libcublasLt.so.13"}, {"libcudart.so.12"}, 13},
            {{}, {"libcublas.so.13", "libcudart.so.12"}, 12},
            {{}, {"libcublasLt.so.13"}, 13},
            {{"libcusparse.so.12"}, {}, 0},  // the same soname under CUDA 12 and 13
            {{}, {}, 0},
        };
        for (const auto& c : cases) {
            CAPTURE(c.major);
            auto tree = make_fake_root();
            add_elf(*tree, "/opt/c/libcudnn.so.9", library_spec("libcudnn.so.9", c.cudnn_needs));
            for (const auto& soname : c.cudnn_needs)
                add_elf(*tree, "/opt/c/" + soname, library_spec(soname));
            for (const auto& soname : c.loaded)
                add_elf(*tree, "/opt/l/" + soname, library_spec(soname));
            auto model = loader::open_root_model(*tree, {});
            REQUIRE(model.ok());
            loader::LoadSession session(*model->context);
            REQUIRE(session.load_main("/bin/sh", true));
            for (const auto& soname : c.loaded)
                REQUIRE(session.dlopen("/opt/l/" + soname) >= 0);
            int cudnn = session.dlopen("/opt/c/libcudnn.so.9");
            REQUIRE(cudnn >= 0);
            CHECK(check::cuda_major_for_nvrtc(session, cudnn) == c.major);
            auto findings = check::follow_dlopen_edges(session, static_cast<size_t>(cudnn));
            bool has_nvrtc = std::any_of(findings.begin(), findings.end(), [](const auto& f) {
                return f.name.rfind("libnvrtc.so.", 0) == 0;
            });
            // Without a major the edge is skipped, not guessed.
            CHECK(has_nvrtc == (c.major > 0));
            if (c.major > 0) {
                CHECK(findings.back().name == "libnvrtc.so." + std::to_string(c.major));
                CHECK(findings.back().missing);
            }
        }
    }

    TEST_CASE("every table row names a consumer and a target, and only cuDNN opens NVRTC") {
        for (const auto& edge : check::known_dlopen_edges()) {
            CHECK(!edge.consumer.empty());
            CHECK(!edge.name.empty());
            if (edge.target == check::DlopenTarget::nvrtc)
                CHECK(edge.consumer == "libcudnn.so.9");
        }
    }
}

}  // namespace rootlock::testing
