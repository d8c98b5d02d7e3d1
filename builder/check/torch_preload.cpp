// torch's preload table, Python's glob rules for one name, and the sys.path search of
// _preload_cuda_deps/_get_cuda_dep_paths; see torch_preload.hpp.
#include "check/torch_preload.hpp"

#include <algorithm>
#include <array>
#include <optional>

#include "fs/path_resolve.hpp"
#include "python/pep440.hpp"

namespace rootlock::check {

namespace {
// cuda-wheels.md section 6, "Newest ordered list [C2]": cublasLt comes first so that libcublas
// cannot pull in a foreign cublasLt; only nvtx (gone from CUDA >= 12.9) may be missing.
constexpr std::array<PreloadEntry, 17> k_table{{
    {"cublas", "libcublasLt.so.*[0-9]", false},
    {"cublas", "libcublas.so.*[0-9]", false},
    {"cudnn", "libcudnn.so.*[0-9]", false},
    {"cuda_nvrtc", "libnvrtc.so.*[0-9]", false},
    {"cuda_nvrtc", "libnvrtc-builtins.so.*[0-9]", false},
    {"cuda_runtime", "libcudart.so.*[0-9]", false},
    {"cuda_cupti", "libcupti.so.*[0-9]", false},
    {"cufft", "libcufft.so.*[0-9]", false},
    {"curand", "libcurand.so.*[0-9]", false},
    {"nvjitlink", "libnvJitLink.so.*[0-9]", false},
    {"cusparse", "libcusparse.so.*[0-9]", false},
    {"cusparselt", "libcusparseLt.so.*[0-9]", false},
    {"cusolver", "libcusolver.so.*[0-9]", false},
    {"nccl", "libnccl.so.*[0-9]", false},
    {"nvshmem", "libnvshmem_host.so.*[0-9]", false},
    {"cufile", "libcufile.so.*[0-9]", false},
    {"nvtx", "libnvToolsExt.so.*[0-9]", true},
}};

// torch 2.6-2.8: a folder -> glob dict (shared/domain/cuda-stacks.toml torch_preload.torch_2_8:
// cusparselt added in 2.6, cufile in 2.7, nvshmem removed on release/2.8); every row required.
constexpr std::array<PreloadEntry, 14> k_table_2_8{{
    {"cublas", "libcublas.so.*[0-9]", false},
    {"cudnn", "libcudnn.so.*[0-9]", false},
    {"cuda_nvrtc", "libnvrtc.so.*[0-9]", false},
    {"cuda_runtime", "libcudart.so.*[0-9]", false},
    {"cuda_cupti", "libcupti.so.*[0-9]", false},
    {"cufft", "libcufft.so.*[0-9]", false},
    {"curand", "libcurand.so.*[0-9]", false},
    {"nvjitlink", "libnvJitLink.so.*[0-9]", false},
    {"cusparse", "libcusparse.so.*[0-9]", false},
    {"cusparselt", "libcusparseLt.so.*[0-9]", false},
    {"cusolver", "libcusolver.so.*[0-9]", false},
    {"nccl", "libnccl.so.*[0-9]", false},
    {"nvtx", "libnvToolsExt.so.*[0-9]", false},
    {"cufile", "libcufile.so.*[0-9]", false},
}};

// torch <= 2.5 (cuda-stacks.toml torch_preload.torch_le_2_5, [C]): the same globs, no
// cusparselt, nvshmem or cufile; every row required.
constexpr std::array<PreloadEntry, 12> k_table_2_5{{
    {"cublas", "libcublas.so.*[0-9]", false},
    {"cudnn", "libcudnn.so.*[0-9]", false},
    {"cuda_nvrtc", "libnvrtc.so.*[0-9]", false},
    {"cuda_runtime", "libcudart.so.*[0-9]", false},
    {"cuda_cupti", "libcupti.so.*[0-9]", false},
    {"cufft", "libcufft.so.*[0-9]", false},
    {"curand", "libcurand.so.*[0-9]", false},
    {"nvjitlink", "libnvJitLink.so.*[0-9]", false},
    {"cusparse", "libcusparse.so.*[0-9]", false},
    {"cusolver", "libcusolver.so.*[0-9]", false},
    {"nccl", "libnccl.so.*[0-9]", false},
    {"nvtx", "libnvToolsExt.so.*[0-9]", false},
}};

// The set opening at pattern[open] == '[': the index after its ']' and whether `c` is in it;
// nullopt when no ']' closes it (the '[' is then an ordinary character, as in Python).
std::optional<size_t> match_set(std::string_view pattern, size_t open, char c, bool& hit) {
    size_t j = open + 1;
    bool negate = false;
    if (j < pattern.size() && pattern[j] == '!') {
        negate = true;
        ++j;
    }
    const size_t first = j;
    if (j < pattern.size() && pattern[j] == ']')
        ++j;  // a leading ']' is a member, not the end
    while (j < pattern.size() && pattern[j] != ']')
        ++j;
    if (j >= pattern.size())
        return std::nullopt;
    const auto byte = static_cast<unsigned char>(c);
    bool in = false;
    for (size_t k = first; k < j;) {
        const auto low = static_cast<unsigned char>(pattern[k]);
        if (k + 2 < j && pattern[k + 1] == '-') {
            const auto high = static_cast<unsigned char>(pattern[k + 2]);
            in |= low <= byte && byte <= high;
            k += 3;
        } else {
            in |= low == byte;
            ++k;
        }
    }
    hit = in != negate;
    return j + 1;
}

// The first name in `dir` (any spelling; symlinks followed) matching `glob`, in bytewise order,
// as a path under the directory's canonical form; nullopt when there is none.
std::optional<std::string> first_match(const fs::FileTree& tree, const fs::Resolver& resolver,
                                       const std::string& dir, std::string_view glob) {
    auto resolved = resolver.resolve(dir);
    if (!resolved || resolved->stat.kind != fs::NodeKind::directory)
        return std::nullopt;
    auto entries = tree.list(resolved->path);
    if (!entries.ok())
        return std::nullopt;
    for (const auto& entry : entries.value()) {
        // glob.glob hides dot files from a pattern that does not start with a dot.
        if (!entry.name.empty() && entry.name[0] == '.' && (glob.empty() || glob[0] != '.'))
            continue;
        if (glob_match(glob, entry.name))
            return fs::join(resolved->path, entry.name);
    }
    return std::nullopt;
}
}  // namespace

std::span<const PreloadEntry> preload_table() {
    return k_table;
}

std::span<const PreloadEntry> preload_table_for(std::string_view torch_version) {
    auto version = python::parse_version(torch_version);
    if (!version.ok() || version->release.size() < 2 || version->release[0] != 2)
        return k_table;
    if (version->release[1] <= 5)
        return k_table_2_5;
    if (version->release[1] <= 8)
        return k_table_2_8;
    return k_table;
}

bool searches_cuda_major_dir(std::string_view torch_version) {
    auto version = python::parse_version(torch_version);
    return !version.ok() || version->release.size() < 2 || version->release[0] != 2 ||
           version->release[1] >= 9;
}

bool glob_match(std::string_view pattern, std::string_view name) {
    size_t p = 0;
    size_t n = 0;
    size_t star = std::string_view::npos;  // the last '*' seen, to backtrack to
    size_t star_n = 0;                     // where the name stood when it was seen
    while (n < name.size()) {
        if (p < pattern.size()) {
            const char c = pattern[p];
            if (c == '*') {
                star = p++;
                star_n = n;
                continue;
            }
            if (c == '?') {
                ++p;
                ++n;
                continue;
            }
            if (c == '[') {
                bool hit = false;
                if (auto next = match_set(pattern, p, name[n], hit)) {
                    if (hit) {
                        p = *next;
                        ++n;
                        continue;
                    }
                } else if (name[n] == '[') {
                    ++p;
                    ++n;
                    continue;
                }
            } else if (c == name[n]) {
                ++p;
                ++n;
                continue;
            }
        }
        if (star == std::string_view::npos)
            return false;
        p = star + 1;
        n = ++star_n;
    }
    while (p < pattern.size() && pattern[p] == '*')
        ++p;
    return p == pattern.size();
}

bool triggers_preload(std::string_view soname) {
    if (soname.empty())
        return false;
    return std::any_of(k_table.begin(), k_table.end(), [&](const PreloadEntry& entry) {
        std::string_view stem = entry.glob.substr(0, entry.glob.find('.'));
        return soname.find(stem) != std::string_view::npos;
    });
}

std::vector<PreloadHit> preload_plan(const fs::FileTree& tree,
                                     const std::vector<std::string>& sys_path, int cuda_major) {
    return preload_plan(tree, sys_path, cuda_major, k_table);
}

std::vector<PreloadHit> preload_plan(const fs::FileTree& tree,
                                     const std::vector<std::string>& sys_path, int cuda_major,
                                     std::span<const PreloadEntry> table) {
    fs::Resolver resolver(tree);
    std::vector<PreloadHit> plan;
    plan.reserve(table.size());
    for (const auto& entry : table) {
        PreloadHit hit{entry, {}};
        const std::string folder(entry.folder);
        bool matched = false;
        for (const auto& base : sys_path) {
            if (base.empty() || base[0] != '/')
                continue;
            std::vector<std::string> dirs{fs::join(base, "nvidia/" + folder + "/lib")};
            if (cuda_major > 0)
                dirs.push_back(fs::join(base, "nvidia/cu" + std::to_string(cuda_major) + "/lib"));
            dirs.push_back(fs::join(base, folder + "/lib"));
            for (const auto& dir : dirs) {
                auto match = first_match(tree, resolver, dir, entry.glob);
                if (!match)
                    continue;
                // torch ctypes-loads the first candidate whatever it is; one that is not a
                // regular file (a dangling link) fails there, so it counts as not found.
                auto file = resolver.resolve(*match);
                if (file && file->stat.kind == fs::NodeKind::regular)
                    hit.path = file->path;
                matched = true;
                break;
            }
            if (matched)
                break;
        }
        plan.push_back(std::move(hit));
    }
    return plan;
}

std::vector<std::string> preload_files(const fs::FileTree& tree,
                                       const std::vector<std::string>& sys_path, int cuda_major) {
    std::vector<std::string> files;
    for (auto& hit : preload_plan(tree, sys_path, cuda_major)) {
        if (!hit.path.empty() && std::find(files.begin(), files.end(), hit.path) == files.end())
            files.push_back(std::move(hit.path));
    }
    return files;
}

}  // namespace rootlock::check
