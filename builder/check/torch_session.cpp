// import torch's first loads, preload fallback included; see torch_session.hpp.
#include "check/torch_session.hpp"

#include "check/cuda_family.hpp"
#include "check/torch_preload.hpp"

namespace rootlock::check {

namespace {

std::string soname_of(const loader::LoadedObject& object) {
    return object.info && !object.info->soname.empty() ? object.info->soname : object.first_request;
}

// torch.version.cuda's major, as the loaded (or wanted) CUDA libraries tell it.
int cuda_major_of(const loader::LoadSession& session, size_t first) {
    for (size_t i = first; i < session.objects().size(); ++i) {
        if (auto member = cuda_membership(soname_of(session.objects()[i])))
            return member->cuda_major;
    }
    return 0;
}

}  // namespace

TorchSession open_torch_session(const loader::LoadSession& base, const fs::FileTree& tree,
                                const std::string& global_deps,
                                const std::vector<std::string>& sys_path) {
    const size_t first = base.objects().size();
    TorchSession out;
    out.session = std::make_unique<loader::LoadSession>(base);
    out.global_deps = out.session->dlopen(global_deps);
    out.global_roots = {base.main_index(), out.global_deps};

    std::vector<std::string> missing;
    bool triggered = false;
    for (size_t i = first; i < out.session->objects().size(); ++i) {
        const auto& object = out.session->objects()[i];
        if (object.faked && object.fatal.empty()) {
            missing.push_back(object.first_request);
            triggered |= triggers_preload(object.first_request);
        }
    }
    if (!triggered)
        return out;

    const int major = cuda_major_of(*out.session, first);
    auto retry = std::make_unique<loader::LoadSession>(base);
    std::vector<int> roots{base.main_index()};
    for (const auto& path : preload_files(tree, sys_path, major)) {
        int opened = retry->dlopen(path);
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
