// import torch's first loads, preload fallback included; see torch_session.hpp.
#include "check/torch_session.hpp"

#include <algorithm>

#include "check/cuda_family.hpp"
#include "check/torch_preload.hpp"
#include "python/pep440.hpp"

namespace rootlock::check {

using loader::soname_of;

namespace {

// torch.version.cuda's major, as the loaded (or wanted) CUDA libraries tell it.
int cuda_major_of(const loader::LoadSession& session, size_t first) {
    for (size_t i = first; i < session.objects().size(); ++i) {
        if (auto member = cuda_membership(soname_of(session.objects()[i])))
            return member->cuda_major;
    }
    return 0;
}

// The table rows torch preloads after a successful load: none before 2.6, NVRTC and nvJitLink
// in 2.6-2.8 when the wheels' libcudart is mapped, every row from 2.9 when any libcudart is.
std::vector<std::string_view> success_preload_folders(const loader::LoadSession& session,
                                                      const std::string& version) {
    auto parsed = python::parse_version(version);
    if (!parsed.ok() || parsed->release.size() < 2 || parsed->release[0] != 2)
        return {};
    const uint64_t minor = parsed->release[1];
    if (minor < 6)
        return {};
    bool wheel_cudart = false;
    bool any_cudart = false;
    for (const auto& object : session.objects()) {
        if (object.faked || soname_of(object).rfind("libcudart.so", 0) != 0)
            continue;
        any_cudart = true;
        wheel_cudart |=
            object.canonical.find("/nvidia/cuda_runtime/lib/libcudart.so") != std::string::npos;
    }
    if (minor < 9)
        return wheel_cudart ? std::vector<std::string_view>{"cuda_nvrtc", "nvjitlink"}
                            : std::vector<std::string_view>{};
    if (!any_cudart)
        return {};
    std::vector<std::string_view> all;
    for (const auto& entry : preload_table())
        all.push_back(entry.folder);
    return all;
}

}  // namespace

std::string installed_torch_version(const fs::FileTree& tree, const std::string& site_dir) {
    auto entries = tree.list(site_dir);
    if (!entries.ok())
        return {};
    for (const auto& entry : *entries) {
        const std::string& name = entry.name;
        const std::string prefix = "torch-";
        const std::string suffix = ".dist-info";
        if (name.size() > prefix.size() + suffix.size() && name.rfind(prefix, 0) == 0 &&
            name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
            return name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
        }
    }
    return {};
}

TorchSession open_torch_session(const loader::LoadSession& base, const fs::FileTree& tree,
                                const std::string& global_deps,
                                const std::vector<std::string>& sys_path) {
    const size_t first = base.objects().size();
    TorchSession out;
    out.session = std::make_unique<loader::LoadSession>(base);
    out.global_deps = out.session->dlopen(global_deps);
    out.global_roots = {base.main_index(), out.global_deps};
    out.torch_version = sys_path.empty() ? "" : installed_torch_version(tree, sys_path[0]);

    std::vector<std::string> missing;
    bool triggered = false;
    for (size_t i = first; i < out.session->objects().size(); ++i) {
        const auto& object = out.session->objects()[i];
        if (object.faked && object.fatal.empty()) {
            missing.push_back(object.first_request);
            triggered |= triggers_preload(object.first_request);
        }
    }
    if (!triggered) {
        // Loaded: the preload after success, ctypes.CDLL with its default RTLD_LOCAL, so the
        // copies answer later requests by soname but join no global scope.
        const auto folders = success_preload_folders(*out.session, out.torch_version);
        if (!folders.empty()) {
            for (const auto& hit :
                 preload_plan(tree, sys_path, cuda_major_of(*out.session, first))) {
                if (!hit.path.empty() &&
                    std::find(folders.begin(), folders.end(), hit.entry.folder) != folders.end())
                    out.session->dlopen(hit.path);
            }
        }
        return out;
    }

    const int major =
        searches_cuda_major_dir(out.torch_version) ? cuda_major_of(*out.session, first) : 0;
    auto retry = std::make_unique<loader::LoadSession>(base);
    std::vector<int> roots{base.main_index()};
    std::vector<std::string> opened_paths;
    for (const auto& hit :
         preload_plan(tree, sys_path, major, preload_table_for(out.torch_version))) {
        if (hit.path.empty()) {
            if (!hit.entry.optional)
                out.preload_missing.emplace_back(hit.entry.glob);
            continue;
        }
        if (std::find(opened_paths.begin(), opened_paths.end(), hit.path) != opened_paths.end())
            continue;
        opened_paths.push_back(hit.path);
        int opened = retry->dlopen(hit.path);
        if (opened >= 0)
            roots.push_back(opened);
    }
    const int opened = retry->dlopen(global_deps);
    roots.push_back(opened);
    for (const auto& soname : missing) {
        int found = retry->find_by_name(soname);
        if (found >= 0 && !retry->objects()[static_cast<size_t>(found)].faked)
            out.preload_only[soname] = retry->objects()[static_cast<size_t>(found)].canonical;
    }
    out.session = std::move(retry);
    out.global_roots = std::move(roots);
    out.global_deps = opened;
    return out;
}

}  // namespace rootlock::check
