// The GPU model table and its matcher; see gpu_table.hpp. Rows follow NVIDIA's CUDA GPUs list
// (https://developer.nvidia.com/cuda-gpus) and the legacy list; see gpu-containers.md 5.4.
#include "gpu/gpu_table.hpp"

#include <algorithm>
#include <array>
#include <string>
#include <vector>

namespace rootlock::gpu {

namespace {

// NVML's device name buffer is 96 bytes (NVML_DEVICE_NAME_V2_BUFFER_SIZE); anything far longer
// is not a model name, and bounding it bounds the matcher's work.
constexpr size_t k_max_model_length = 256;

constexpr GpuFamily gpu_row(std::string_view pattern, int major, int minor) {
    return GpuFamily{pattern, ComputeCapability{major, minor}};
}

// Grouped by architecture, newest first. An exception inside a family's number range wins by
// being more specific (more words or more literal characters): "rtx 2050" (an Ampere laptop
// chip) beats "rtx 20##" (Turing), "quadro m1200" (GM107) beats "quadro m####" (GM20x). Jetson
// modules are named as their own nvidia-smi or deviceQuery does
// ("Orin (nvgpu)", "Xavier"). Thor is 11.0 from CUDA 13 on (it was sm_101 before).
constexpr auto k_gpu_table = std::to_array<GpuFamily>({
    // Blackwell
    gpu_row("b100", 10, 0),
    gpu_row("b200", 10, 0),
    gpu_row("gb200", 10, 0),
    gpu_row("b300", 10, 3),
    gpu_row("gb300", 10, 3),
    gpu_row("thor", 11, 0),
    gpu_row("rtx 50##", 12, 0),
    gpu_row("rtx pro", 12, 0),
    gpu_row("gb10", 12, 1),
    // Hopper
    gpu_row("h100", 9, 0),
    gpu_row("h200", 9, 0),
    gpu_row("h800", 9, 0),
    gpu_row("h20", 9, 0),
    gpu_row("gh200", 9, 0),
    // Ada
    gpu_row("l2", 8, 9),
    gpu_row("l4", 8, 9),
    gpu_row("l20", 8, 9),
    gpu_row("l40", 8, 9),
    gpu_row("l40s", 8, 9),
    gpu_row("l40g", 8, 9),
    gpu_row("rtx 40##", 8, 9),
    gpu_row("rtx #### ada", 8, 9),
    gpu_row("ada generation", 8, 9),
    // Ampere
    gpu_row("a100", 8, 0),
    gpu_row("a100x", 8, 0),
    gpu_row("a800", 8, 0),
    gpu_row("a30", 8, 0),
    gpu_row("a30x", 8, 0),
    gpu_row("a2", 8, 6),
    gpu_row("a10", 8, 6),
    gpu_row("a10g", 8, 6),
    gpu_row("a16", 8, 6),
    gpu_row("a40", 8, 6),
    gpu_row("rtx a###", 8, 6),
    gpu_row("rtx a####", 8, 6),
    gpu_row("rtx 30##", 8, 6),
    gpu_row("rtx 2050", 8, 6),
    gpu_row("mx570", 8, 6),
    gpu_row("orin", 8, 7),
    // Turing
    gpu_row("t4", 7, 5),
    gpu_row("t4g", 7, 5),
    gpu_row("t400", 7, 5),
    gpu_row("t500", 7, 5),
    gpu_row("t550", 7, 5),
    gpu_row("t600", 7, 5),
    gpu_row("t1000", 7, 5),
    gpu_row("t1200", 7, 5),
    gpu_row("t2000", 7, 5),
    gpu_row("rtx 20##", 7, 5),
    gpu_row("gtx 16##", 7, 5),
    gpu_row("quadro rtx ####", 7, 5),
    gpu_row("titan rtx", 7, 5),
    gpu_row("mx450", 7, 5),
    gpu_row("mx550", 7, 5),
    // Volta
    gpu_row("v100", 7, 0),
    gpu_row("v100s", 7, 0),
    gpu_row("titan v", 7, 0),
    gpu_row("gv100", 7, 0),
    gpu_row("xavier", 7, 2),
    // Pascal
    gpu_row("p100", 6, 0),
    gpu_row("gp100", 6, 0),
    gpu_row("p4", 6, 1),
    gpu_row("p6", 6, 1),
    gpu_row("p40", 6, 1),
    gpu_row("gtx 10##", 6, 1),
    gpu_row("gt 1010", 6, 1),
    gpu_row("gt 1030", 6, 1),
    gpu_row("titan xp", 6, 1),
    gpu_row("titan x pascal", 6, 1),
    gpu_row("quadro p###", 6, 1),
    gpu_row("quadro p####", 6, 1),
    gpu_row("mx150", 6, 1),
    gpu_row("mx230", 6, 1),
    gpu_row("mx250", 6, 1),
    gpu_row("mx330", 6, 1),
    gpu_row("mx350", 6, 1),
    gpu_row("tx2", 6, 2),
    gpu_row("tegra x2", 6, 2),
    // Maxwell
    gpu_row("m4", 5, 2),
    gpu_row("m6", 5, 2),
    gpu_row("m40", 5, 2),
    gpu_row("m60", 5, 2),
    gpu_row("m10", 5, 0),
    gpu_row("gtx 9##", 5, 2),
    gpu_row("gtx titan x", 5, 2),
    gpu_row("quadro m####", 5, 2),
    gpu_row("quadro m1200", 5, 0),
    gpu_row("quadro k620", 5, 0),
    gpu_row("quadro k1200", 5, 0),
    gpu_row("quadro k2200", 5, 0),
    gpu_row("gtx 745", 5, 0),
    gpu_row("gtx 750", 5, 0),
    gpu_row("940mx", 5, 0),
    gpu_row("mx110", 5, 0),
    gpu_row("mx130", 5, 0),
    gpu_row("tx1", 5, 3),
    gpu_row("tegra x1", 5, 3),
    gpu_row("jetson nano", 5, 3),
    // Kepler
    gpu_row("k10", 3, 0),
    gpu_row("k20", 3, 5),
    gpu_row("k20c", 3, 5),
    gpu_row("k20m", 3, 5),
    gpu_row("k20x", 3, 5),
    gpu_row("k20xm", 3, 5),
    gpu_row("k40", 3, 5),
    gpu_row("k40c", 3, 5),
    gpu_row("k40m", 3, 5),
    gpu_row("k80", 3, 7),
    gpu_row("k520", 3, 0),
    gpu_row("gtx 650", 3, 0),
    gpu_row("gtx 660", 3, 0),
    gpu_row("gtx 670", 3, 0),
    gpu_row("gtx 680", 3, 0),
    gpu_row("gtx 690", 3, 0),
    gpu_row("gtx 760", 3, 0),
    gpu_row("gtx 770", 3, 0),
    gpu_row("gtx 780", 3, 5),
    gpu_row("gtx titan", 3, 5),
});

char table_lower(char c) {
    return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

bool is_table_alnum(char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

// Lowercase words of letters and digits, as views into `lower` (the model lowercased, every byte
// that is not a letter or digit a space).
std::vector<std::string_view> gpu_model_words(std::string_view model, std::string& lower) {
    lower.assign(model);
    for (char& c : lower) {
        c = table_lower(c);
        if (!is_table_alnum(c))
            c = ' ';
    }
    std::vector<std::string_view> words;
    const std::string_view all = lower;
    size_t at = 0;
    while (at < all.size()) {
        const size_t start = all.find_first_not_of(' ', at);
        if (start == std::string_view::npos)
            break;
        const size_t end = std::min(all.find(' ', start), all.size());
        words.push_back(all.substr(start, end - start));
        at = end;
    }
    return words;
}

std::vector<std::string_view> gpu_pattern_words(std::string_view pattern) {
    std::vector<std::string_view> words;
    while (!pattern.empty()) {
        const size_t space = pattern.find(' ');
        words.push_back(pattern.substr(0, space));
        if (space == std::string_view::npos)
            break;
        pattern.remove_prefix(space + 1);
    }
    return words;
}

// Each row's words and rank (word count, then characters other than '#'), split once.
struct GpuPatternIndex {
    std::vector<std::string_view> words;
    std::pair<size_t, size_t> rank;
};

const std::vector<GpuPatternIndex>& gpu_pattern_index() {
    static const std::vector<GpuPatternIndex> index = [] {
        std::vector<GpuPatternIndex> out;
        out.reserve(k_gpu_table.size());
        for (const GpuFamily& family : k_gpu_table) {
            GpuPatternIndex entry{gpu_pattern_words(family.pattern), {0, 0}};
            size_t literal = 0;
            for (char c : family.pattern)
                literal += c != '#' && c != ' ' ? 1 : 0;
            entry.rank = {entry.words.size(), literal};
            out.push_back(std::move(entry));
        }
        return out;
    }();
    return index;
}

bool gpu_word_matches(std::string_view pattern, std::string_view word) {
    if (pattern.size() != word.size())
        return false;
    for (size_t i = 0; i < pattern.size(); ++i) {
        const bool digit = word[i] >= '0' && word[i] <= '9';
        if (pattern[i] == '#' ? !digit : pattern[i] != word[i])
            return false;
    }
    return true;
}

bool gpu_pattern_matches(const std::vector<std::string_view>& pattern,
                         const std::vector<std::string_view>& words) {
    if (pattern.size() > words.size())
        return false;
    for (size_t start = 0; start + pattern.size() <= words.size(); ++start) {
        bool all = true;
        for (size_t i = 0; i < pattern.size() && all; ++i)
            all = gpu_word_matches(pattern[i], words[start + i]);
        if (all)
            return true;
    }
    return false;
}

}  // namespace

std::span<const GpuFamily> gpu_families() {
    return k_gpu_table;
}

std::optional<GpuModelMatch> lookup_gpu_model(std::string_view model) {
    if (model.size() > k_max_model_length)
        return std::nullopt;
    std::string lower;
    const auto words = gpu_model_words(model, lower);
    const auto& index = gpu_pattern_index();
    const GpuFamily* best = nullptr;
    std::pair<size_t, size_t> best_rank{0, 0};
    for (size_t i = 0; i < k_gpu_table.size(); ++i) {
        if (!gpu_pattern_matches(index[i].words, words))
            continue;
        if (best == nullptr || index[i].rank > best_rank) {
            best = &k_gpu_table[i];
            best_rank = index[i].rank;
        }
    }
    if (best == nullptr)
        return std::nullopt;
    return GpuModelMatch{best->capability, best->pattern, architecture_name(best->capability)};
}

std::optional<ComputeCapability> compute_capability_of(std::string_view model) {
    auto match = lookup_gpu_model(model);
    if (!match)
        return std::nullopt;
    return match->capability;
}

std::string_view architecture_name(ComputeCapability capability) {
    const int sm = capability.sm();
    if (capability.major == 3)
        return "Kepler";
    if (capability.major == 5)
        return "Maxwell";
    if (capability.major == 6)
        return "Pascal";
    if (sm == 70 || sm == 72)
        return "Volta";
    if (sm == 75)
        return "Turing";
    if (sm == 80 || sm == 86 || sm == 87)
        return "Ampere";
    if (sm == 89)
        return "Ada";
    if (sm == 90)
        return "Hopper";
    if (capability.major >= 10 && capability.major <= 12)
        return "Blackwell";
    return "";
}

}  // namespace rootlock::gpu
