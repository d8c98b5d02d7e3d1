// The table of known dlopen edges and the walk that opens them from their consumers; see
// dlopen_edges.hpp.
#include "check/dlopen_edges.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <optional>

#include "check/cuda_family.hpp"
#include "check/torch_preload.hpp"
#include "fs/path_resolve.hpp"

namespace rootlock::check {

namespace {
// Only edges cuda-wheels.md section 7 names; the confidence tag is the document's.
constexpr std::array<DlopenEdge, 13> k_edges{{
    // "cuDNN sub-libraries, opened by bare name so a system copy can win (pytorch/pytorch#119989,
    // #188892) [C]"; the names are the cudnn 9.x row of section 3.
    {"libcudnn.so.9", "libcudnn_adv.so.9", DlopenTarget::exact, false},
    {"libcudnn.so.9", "libcudnn_cnn.so.9", DlopenTarget::exact, false},
    {"libcudnn.so.9", "libcudnn_graph.so.9", DlopenTarget::exact, false},
    {"libcudnn.so.9", "libcudnn_ops.so.9", DlopenTarget::exact, false},
    {"libcudnn.so.9", "libcudnn_heuristic.so.9", DlopenTarget::exact, false},
    {"libcudnn.so.9", "libcudnn_engines_precompiled.so.9", DlopenTarget::exact, false},
    {"libcudnn.so.9", "libcudnn_engines_runtime_compiled.so.9", DlopenTarget::exact, false},
    // "libnvrtc opened by cuDNN (#145580) [C]".
    {"libcudnn.so.9", "libnvrtc.so.<CUDA major>", DlopenTarget::nvrtc, false},
    // "libnvrtc-builtins [R]"; section 3 ships libnvrtc-builtins.so.<major>.<minor> beside it.
    {"libnvrtc.so.[0-9]*", "libnvrtc-builtins.so.<major>.<minor>", DlopenTarget::nvrtc_builtins,
     false},
    // "libcuda.so.1 (torch has no DT_NEEDED on it) [C]"; section 4 shows libtorch_cuda.so
    // without it. The driver is the host's: found as host-provided.
    {"libtorch_cuda.so", "libcuda.so.1", DlopenTarget::exact, false},
    {"libc10_cuda.so", "libcuda.so.1", DlopenTarget::exact, false},
    // "cufile [R]": torch's GPUDirect Storage; only torch.cuda.gds needs it.
    {"libtorch_cuda.so", "libcufile.so.0", DlopenTarget::exact, true},
    // "nvshmem bootstrap/transport plugins [U]": the plugin is chosen at run time, so optional.
    {"libnvshmem_host.so.3", "nvshmem_bootstrap_uid.so.3", DlopenTarget::exact, true},
}};

// What the edge table matches a consumer by: its SONAME, else its file name (a loaded object
// without SONAME is named by its path, not by the request loader::soname_of falls back to).
std::string consumer_name(const loader::LoadedObject& object) {
    if (object.info && !object.info->soname.empty())
        return object.info->soname;
    return object.canonical.empty() ? object.first_request : fs::basename(object.canonical);
}

bool usable(const loader::LoadedObject& object) {
    return !object.faked && object.info && object.via != loader::Via::host_provided;
}

// The CUDA major of the first found object of the session in CUDA family `family`; 0: none.
int session_major(const loader::LoadSession& session, std::string_view family) {
    for (const auto& object : session.objects()) {
        if (!usable(object))
            continue;
        auto membership = cuda_membership(consumer_name(object));
        if (membership && membership->family == family)
            return membership->cuda_major;
    }
    return 0;
}

// The digits that follow `prefix` at the start of `name`, or nullopt.
std::optional<std::string> leading_number(std::string_view name, std::string_view prefix) {
    if (name.substr(0, prefix.size()) != prefix)
        return std::nullopt;
    std::string_view rest = name.substr(prefix.size());
    size_t digits = 0;
    while (digits < rest.size() && rest[digits] >= '0' && rest[digits] <= '9')
        ++digits;
    if (digits == 0)
        return std::nullopt;
    return std::string(rest.substr(0, digits));
}

// libnvrtc-builtins.so.<major>.<minor> beside the consumer, newest minor first: libnvrtc opens
// the builtins of its own minor, which its soname does not tell (cuda-wheels.md section 3).
std::vector<std::string> builtins_candidates(const loader::LoadSession& session,
                                             const loader::LoadedObject& nvrtc,
                                             const std::string& major) {
    const std::string prefix = "libnvrtc-builtins.so." + major + ".";
    std::vector<std::pair<uint64_t, std::string>> found;
    auto entries = session.context().tree().list(fs::dirname(nvrtc.canonical));
    if (!entries.ok())
        return {};
    for (const auto& entry : entries.value()) {
        auto minor = leading_number(entry.name, prefix);
        if (!minor || entry.name.size() != prefix.size() + minor->size())
            continue;
        uint64_t value = 0;
        auto [end, error] = std::from_chars(minor->data(), minor->data() + minor->size(), value);
        if (error != std::errc() || end != minor->data() + minor->size())
            continue;  // more digits than a minor can have
        found.emplace_back(value, entry.name);
    }
    std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) {
        return a.first != b.first ? a.first > b.first : a.second < b.second;
    });
    std::vector<std::string> names;
    for (auto& [value, name] : found)
        names.push_back(std::move(name));
    return names;
}

// Opens the first of `candidates` that loads from `caller`; `fallback` names the finding when
// there is no candidate at all.
DlopenFinding open_edge(loader::LoadSession& session, int caller, const std::string& consumer,
                        const std::vector<std::string>& candidates, const std::string& fallback,
                        bool optional) {
    DlopenFinding finding;
    finding.consumer = consumer;
    finding.name = candidates.empty() ? fallback : candidates.front();
    finding.via = std::string(loader::via_name(loader::Via::not_found));
    finding.optional = optional;
    for (const auto& name : candidates) {
        const size_t objects_before = session.objects().size();
        const size_t requests_before = session.requests().size();
        const int index = session.dlopen_from(caller, name);
        if (index < 0)
            continue;
        finding.name = name;
        const loader::LoadedObject& object = session.objects()[static_cast<size_t>(index)];
        if (object.via == loader::Via::host_provided) {
            finding.via = std::string(loader::via_name(loader::Via::host_provided));
        } else {
            finding.provider = object.canonical;
            finding.via = static_cast<size_t>(index) < objects_before
                              ? std::string(loader::via_name(loader::Via::already_loaded))
                              : std::string(loader::via_name(object.via));
        }
        const auto& requests = session.requests();
        for (size_t r = requests_before; r < requests.size(); ++r) {
            if (requests[r].via == loader::Via::not_found)
                finding.missing_dependencies.push_back(requests[r].name);
        }
        std::sort(finding.missing_dependencies.begin(), finding.missing_dependencies.end());
        finding.missing_dependencies.erase(
            std::unique(finding.missing_dependencies.begin(), finding.missing_dependencies.end()),
            finding.missing_dependencies.end());
        return finding;
    }
    finding.missing = true;
    return finding;
}
}  // namespace

std::span<const DlopenEdge> known_dlopen_edges() {
    return k_edges;
}

int cuda_major_for_nvrtc(const loader::LoadSession& session, int consumer) {
    if (consumer >= 0 && static_cast<size_t>(consumer) < session.objects().size()) {
        const auto& object = session.objects()[static_cast<size_t>(consumer)];
        if (object.info) {
            for (const auto& needed : object.info->needed) {
                if (auto membership = cuda_membership(needed))
                    return membership->cuda_major;
            }
        }
    }
    if (int major = session_major(session, "cudart"); major > 0)
        return major;
    return session_major(session, "cublas");
}

std::vector<DlopenFinding> follow_dlopen_edges(const loader::LoadSession& session, size_t first) {
    loader::LoadSession copy(session);
    return follow_dlopen_edges_in(copy, first);
}

std::vector<DlopenFinding> follow_dlopen_edges_in(loader::LoadSession& session, size_t first) {
    std::vector<DlopenFinding> findings;
    // The session grows while edges are followed; what they load is visited in turn.
    for (size_t i = first; i < session.objects().size(); ++i) {
        if (!usable(session.objects()[i]))
            continue;
        const int caller = static_cast<int>(i);
        const std::string consumer = session.objects()[i].canonical;
        const std::string name = consumer_name(session.objects()[i]);
        for (const auto& edge : k_edges) {
            if (!glob_match(edge.consumer, name))
                continue;
            std::vector<std::string> candidates;
            std::string fallback(edge.name);
            switch (edge.target) {
                case DlopenTarget::exact:
                    candidates.emplace_back(edge.name);
                    break;
                case DlopenTarget::nvrtc: {
                    const int major = cuda_major_for_nvrtc(session, caller);
                    if (major <= 0)
                        continue;
                    candidates.push_back("libnvrtc.so." + std::to_string(major));
                    break;
                }
                case DlopenTarget::nvrtc_builtins: {
                    auto major = leading_number(name, "libnvrtc.so.");
                    if (!major)
                        continue;
                    candidates = builtins_candidates(session, session.objects()[i], *major);
                    fallback = "libnvrtc-builtins.so." + *major + ".*";
                    break;
                }
            }
            findings.push_back(
                open_edge(session, caller, consumer, candidates, fallback, edge.optional));
        }
    }
    return findings;
}

}  // namespace rootlock::check
