// The CUDA and driver rules of `check`, as pure functions over what the scan found; see
// cuda_rules.hpp. The tables come from cuda-wheels.md section 8 and libnvidia-container.
#include "check/cuda_rules.hpp"

#include <fmt/format.h>
#include <array>
#include <charconv>

#include "fs/path_resolve.hpp"
#include "gpu/compat_note.hpp"
#include "loader/dst.hpp"
#include "loader/ld_so_conf.hpp"

namespace rootlock::check {

namespace {

// Enough for any driver or CUDA number, and far from int's limit.
constexpr size_t k_max_digits = 9;

// The libraries NVIDIA's container runtime mounts from the host (nvc_info.c): the compute and
// utility ones, then the video and graphics ones. Each is versioned with the driver.
constexpr std::array<std::string_view, 32> k_driver_stems{{
    "libcuda",
    "libcudadebugger",
    "libnvidia-ml",
    "libnvidia-cfg",
    "libnvidia-nscq",
    "libnvidia-opencl",
    "libnvidia-gpucomp",
    "libnvidia-ptxjitcompiler",
    "libnvidia-fatbinaryloader",
    "libnvidia-allocator",
    "libnvidia-compiler",
    "libnvidia-pkcs11",
    "libnvidia-pkcs11-openssl3",
    "libnvidia-nvvm",
    "libnvidia-tileiras",
    "libnvidia-encode",
    "libnvidia-opticalflow",
    "libnvcuvid",
    "libnvidia-eglcore",
    "libnvidia-glcore",
    "libnvidia-tls",
    "libnvidia-glsi",
    "libnvidia-fbc",
    "libnvidia-rtcore",
    "libnvidia-glvkspirv",
    "libnvoptix",
    "libvdpau_nvidia",
    "libGLX_nvidia",
    "libEGL_nvidia",
    "libGLESv2_nvidia",
    "libGLESv1_CM_nvidia",
    "libnvidia-ngx",
}};

constexpr std::string_view k_stub_problem =
    "a CUDA stub for linking only: it makes every CUDA call fail with CUDA_ERROR_STUB_LIBRARY";

std::optional<int> decimal(std::string_view text) {
    if (text.empty() || text.size() > k_max_digits)
        return std::nullopt;
    int value = 0;
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size())
        return std::nullopt;
    return value;
}

std::vector<std::string_view> split_dots(std::string_view text) {
    std::vector<std::string_view> parts;
    size_t start = 0;
    while (true) {
        const size_t dot = text.find('.', start);
        parts.push_back(text.substr(start, dot == std::string_view::npos ? dot : dot - start));
        if (dot == std::string_view::npos)
            return parts;
        start = dot + 1;
    }
}

// Why `part` is not a number, as the end of a message; nullopt when it is one.
std::optional<std::string> number_problem(std::string_view part) {
    if (part.empty())
        return "a part is empty";
    for (char c : part) {
        if (c < '0' || c > '9')
            return fmt::format("\"{}\" is not a decimal number", part);
    }
    if (part.size() > k_max_digits)
        return fmt::format("\"{}\" has more than {} digits", part, k_max_digits);
    return std::nullopt;
}

// The version suffix of a driver library's file name: "libcuda.so.1" -> "1", "libcuda.so" -> "";
// nullopt when the name is not a driver library's.
std::optional<std::string_view> driver_suffix(std::string_view name) {
    const size_t so = name.find(".so");
    if (so == std::string_view::npos)
        return std::nullopt;
    const std::string_view stem = name.substr(0, so);
    bool known = false;
    for (auto candidate : k_driver_stems)
        known = known || candidate == stem;
    if (!known)
        return std::nullopt;
    const std::string_view rest = name.substr(so + 3);
    if (rest.empty())
        return rest;
    if (rest.front() != '.' || rest.size() == 1)
        return std::nullopt;  // "libcuda.soX", "libcuda.so."
    return rest.substr(1);
}

// A driver release in a file name: two or three numbers ("550.54.14"); a lone soname major
// ("1", "4") names none.
std::optional<DriverVersion> release_of(std::string_view suffix) {
    auto parsed = parse_driver_version(suffix);
    if (!parsed.ok() || !parsed->full())
        return std::nullopt;
    return std::move(parsed.value());
}

bool has_stubs_component(std::string_view path) {
    const std::string normal = fs::normalize(path);
    return normal.find("/stubs/") != std::string::npos;
}

std::string last_component(std::string_view path) {
    while (path.size() > 1 && path.back() == '/')
        path.remove_suffix(1);
    const size_t slash = path.rfind('/');
    return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

std::string driver_library_problem(const std::string& path, std::string_view suffix,
                                   const std::optional<DriverVersion>& driver) {
    if (has_stubs_component(path) || suffix.empty())
        return std::string(k_stub_problem);
    const auto release = release_of(suffix);
    if (!release.has_value()) {
        return "a driver library whose release its name does not tell: the host's driver "
               "provides it; remove it";
    }
    if (!driver.has_value()) {
        return fmt::format(
            "driver {} baked into the image: the host's driver provides it; declare the host's "
            "driver or remove it",
            release->text);
    }
    if (release->text == driver->text)
        return "";
    if (!driver->full() && release->branch() == driver->branch()) {
        return fmt::format(
            "driver {}, but only branch {} of the host's driver is declared: any other {} "
            "release fails with a version mismatch; declare the full version or remove it",
            release->text, driver->text, driver->text);
    }
    return fmt::format(
        "driver {}, but the host runs {}: NVML and CUDA fail with a version mismatch",
        release->text, driver->text);
}

}  // namespace

std::optional<int> minimum_driver_branch(int cuda_major) {
    switch (cuda_major) {
        case 13:
            return 580;
        case 12:
            return 525;
        case 11:
            return 450;
        default:
            return std::nullopt;
    }
}

util::Result<DriverVersion> parse_driver_version(std::string_view text) {
    auto fail = [&](const std::string& why) {
        return util::make_error(
            "",
            fmt::format("\"{}\" is not a driver version such as 580 or 580.65.06: {}", text, why));
    };
    if (text.empty())
        return fail("it is empty");
    const auto parts = split_dots(text);
    if (parts.size() > 3)
        return fail("it has more than three parts");
    DriverVersion out;
    out.text = std::string(text);
    for (auto part : parts) {
        if (auto problem = number_problem(part))
            return fail(*problem);
        out.parts.push_back(decimal(part).value_or(0));
    }
    if (out.branch() == 0)
        return fail("branch 0 does not exist");
    return out;
}

util::Result<int> parse_cuda_major(std::string_view text) {
    auto fail = [&](const std::string& why) {
        return util::make_error(
            "", fmt::format("\"{}\" is not a CUDA version such as 13.0: {}", text, why));
    };
    if (text.empty())
        return fail("it is empty");
    const auto parts = split_dots(text);
    if (parts.size() != 2)
        return fail("it needs MAJOR.MINOR");
    for (auto part : parts) {
        if (auto problem = number_problem(part))
            return fail(*problem);
    }
    const int major = decimal(parts[0]).value_or(0);
    if (major == 0)
        return fail("CUDA 0 does not exist");
    return major;
}

util::Result<CudaTarget> parse_cuda_target(std::string_view cuda, std::string_view driver) {
    CudaTarget target;
    if (!cuda.empty()) {
        ROOTLOCK_TRY(major, parse_cuda_major(cuda));
        if (!minimum_driver_branch(major).has_value()) {
            return util::make_error(
                "", fmt::format("CUDA {} (\"{}\") is not one rootlock knows the driver for: 11, "
                                "12 or 13",
                                major, cuda));
        }
        target.cuda = std::string(cuda);
        target.cuda_major = major;
    }
    if (!driver.empty()) {
        ROOTLOCK_TRY(parsed, parse_driver_version(driver));
        target.driver = std::move(parsed);
    }
    return target;
}

std::vector<Problem> cuda_target_problems(const CudaMajors& majors_found,
                                          const CudaTarget& target) {
    std::vector<Problem> out;
    auto sorted = [](const std::set<std::string>& paths) {
        return nlohmann::ordered_json(std::vector<std::string>(paths.begin(), paths.end()));
    };
    if (target.cuda_major.has_value()) {
        for (const auto& [major, libraries] : majors_found) {
            if (major == *target.cuda_major)
                continue;
            Problem problem{"cuda-major-mismatch", Severity::error, {}};
            problem.fields["expected_major"] = *target.cuda_major;
            problem.fields["found_major"] = major;
            problem.fields["libraries"] = sorted(libraries);
            out.push_back(std::move(problem));
        }
    }
    if (!target.driver.has_value())
        return out;
    // The newest CUDA the closure runs sets the floor; the declaration speaks when nothing
    // CUDA was loaded (a recipe whose wheels are still to come).
    std::optional<int> major;
    std::set<std::string> libraries;
    if (!majors_found.empty()) {
        major = majors_found.rbegin()->first;
        libraries = majors_found.rbegin()->second;
    } else {
        major = target.cuda_major;
    }
    if (!major.has_value())
        return out;
    const auto minimum = minimum_driver_branch(*major);
    if (!minimum.has_value() || target.driver->branch() >= *minimum)
        return out;
    Problem problem{"driver-too-old", Severity::error, {}};
    problem.fields["driver"] = target.driver->text;
    problem.fields["cuda_major"] = *major;
    problem.fields["minimum_driver"] = std::to_string(*minimum);
    problem.fields["libraries"] = sorted(libraries);
    out.push_back(std::move(problem));
    return out;
}

namespace {

// The verdict on a libcuda carrying .note.cuda.fwd_compatibility: nullopt when it carries none
// (or its bytes cannot be read), a Problem with an empty kind when the host's branch is listed,
// else `cuda-compat-refused`.
std::optional<Problem> compat_problem(const fs::FileTree& tree, const std::string& file,
                                      const std::optional<DriverVersion>& driver) {
    if (!fs::basename(file).starts_with("libcuda.so"))
        return std::nullopt;
    auto source = tree.open_bytes(file);
    if (!source)
        return std::nullopt;
    auto note = gpu::read_compat_note(**source);
    if (!note || !note->has_value())
        return std::nullopt;
    const gpu::CompatNote& compat = **note;
    std::string branches;
    for (int branch : compat.driver_branches)
        branches += (branches.empty() ? "" : ", ") + std::to_string(branch);
    if (driver && gpu::compat_allows(compat, driver->branch()))
        return Problem{};
    Problem problem{"cuda-compat-refused", Severity::error, {}};
    problem.fields["path"] = file;
    problem.fields["cuda"] = compat.cuda_version;
    problem.fields["driver_branches"] = compat.driver_branches;
    problem.fields["problem"] =
        driver
            ? "a forward-compatibility libcuda for CUDA " + util::printable(compat.cuda_version) +
                  " lists driver branches " + (branches.empty() ? "none" : branches) +
                  ", not the host's " + std::to_string(driver->branch()) +
                  ": CUDA fails (error 804, or the compat library is not enabled)"
            : "a forward-compatibility libcuda for CUDA " + util::printable(compat.cuda_version) +
                  ": it runs only on the driver branches it lists (" + branches +
                  "); declare the host's driver to judge it";
    return problem;
}

}  // namespace

bool is_driver_library_name(std::string_view name) {
    return driver_suffix(name).has_value();
}

std::vector<Problem> driver_library_problems(const fs::FileTree& tree,
                                             const std::vector<std::string>& paths,
                                             const std::optional<DriverVersion>& driver) {
    // One problem per file that would really be loaded, whatever links lead to it. A file
    // named otherwise is judged by the first driver name that leads to it: the name ld.so sees.
    std::map<std::string, std::string> files;  // canonical file -> the name judged
    // Files some name outside a `stubs` directory leads to. A toolkit's link stub reached only
    // from its own stubs directory is not a problem by itself (NVIDIA's images carry one);
    // stubs_path_problems reports it where a search path reaches that directory.
    std::set<std::string> reached;
    for (const auto& path : paths) {
        const std::string name = fs::basename(path);
        if (!is_driver_library_name(name))
            continue;
        auto resolved = fs::resolve(tree, path);
        if (!resolved.has_value() || resolved->stat.kind != fs::NodeKind::regular)
            continue;
        if (!has_stubs_component(path) || !has_stubs_component(resolved->path))
            reached.insert(resolved->path);
        const std::string own = fs::basename(resolved->path);
        auto& judged = files[resolved->path];
        if (is_driver_library_name(own))
            judged = own;
        else if (judged.empty())
            judged = name;
    }
    std::vector<Problem> out;
    for (const auto& [file, name] : files) {
        if (reached.count(file) == 0)
            continue;
        // A forward-compatibility libcuda (cuda-compat) says which driver branches it runs on:
        // judged by that list, as the enable-cuda-compat hook does (gpu-containers.md 4.4).
        if (auto compat = compat_problem(tree, file, driver)) {
            if (compat->kind.empty())
                continue;  // accepted: the host's branch is listed
            out.push_back(std::move(*compat));
            continue;
        }
        std::string problem = driver_library_problem(file, *driver_suffix(name), driver);
        if (problem.empty())
            continue;
        out.push_back(Problem{"driver-library-in-image",
                              Severity::error,
                              {{"path", file}, {"problem", std::move(problem)}}});
    }
    return out;
}

util::Result<std::vector<Problem>> stubs_path_problems(
    const fs::FileTree& tree, const std::vector<std::string>& ld_library_path,
    const std::vector<ScannedElf>& objects) {
    std::set<std::pair<std::string, std::string>> found;  // (directory, source)
    // Thousands of objects share a few RPATH directories: each is resolved once.
    fs::Resolver resolver(tree);
    std::map<std::string, bool> judged;
    auto is_stubs = [&](const std::string& directory) {
        if (last_component(directory) == "stubs")
            return true;
        if (directory.empty() || directory.front() != '/')
            return false;
        auto [known, inserted] = judged.try_emplace(directory, false);
        if (inserted) {
            auto resolved = resolver.resolve(directory);
            known->second = resolved.has_value() && last_component(resolved->path) == "stubs";
        }
        return known->second;
    };
    auto consider = [&](const std::string& directory, const std::string& source) {
        if (is_stubs(directory))
            found.insert({directory, source});
    };

    ROOTLOCK_TRY(conf, loader::read_ld_so_conf(tree));
    for (const auto& entry : conf.sources)
        consider(entry.path, entry.from);
    for (const auto& directory : ld_library_path)
        consider(directory, "LD_LIBRARY_PATH");
    for (const auto& [path, info] : objects) {
        if (info == nullptr)
            continue;
        loader::DstContext context;
        context.origin = fs::dirname(path);
        auto add_list = [&](const std::optional<std::vector<std::string>>& list,
                            std::string_view tag) {
            if (!list.has_value())
                return;
            for (const auto& element : *list) {
                if (element.empty())
                    continue;  // the working directory, never a stubs directory by name
                const auto expanded = loader::expand_dst(element, context);
                const std::string directory =
                    expanded.unknown_token.empty() ? fs::normalize(expanded.path) : element;
                consider(directory, fmt::format("{} {}", path, tag));
            }
        };
        add_list(info->rpath, "DT_RPATH");
        add_list(info->runpath, "DT_RUNPATH");
    }

    std::vector<Problem> out;
    for (const auto& [directory, source] : found) {
        out.push_back(Problem{"stubs-on-search-path",
                              Severity::error,
                              {{"directory", directory}, {"source", source}}});
    }
    return out;
}

}  // namespace rootlock::check
