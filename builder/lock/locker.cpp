// The lock pipeline, step by step. Each step's failure is returned as it is (located by the step
// that found it); the closure verdict travels in the outcome so that the CLI can print the full
// report and decide whether the lock may be written.
#include "lock/locker.hpp"

#include <algorithm>
#include <chrono>
#include <ctime>

#include "check/cuda_family.hpp"
#include "fs/overlay_tree.hpp"
#include "fs/path_resolve.hpp"
#include "index/content_store.hpp"
#include "index/index_client.hpp"
#include "index/page_cache.hpp"
#include "loader/dst.hpp"
#include "lock/base_facts.hpp"
#include "lock/base_source.hpp"
#include "lock/cached_builds.hpp"
#include "lock/index_source.hpp"
#include "lock/recipe_extras.hpp"
#include "lock/wheel_fetcher.hpp"
#include "python/metadata.hpp"
#include "python/pep508.hpp"
#include "python/wheel_install.hpp"
#include "python/wheel_scan.hpp"
#include "python/wheel_tags.hpp"
#include "resolve/resolver.hpp"
#include "util/sha256.hpp"

namespace rootlock::lock {

namespace {

std::string cuda_tag(const std::string& cuda) {
    std::string tag = "cu";
    for (char c : cuda) {
        if (c != '.')
            tag.push_back(c);
    }
    return tag;
}

int cuda_major(const std::string& cuda) {
    return std::atoi(cuda.substr(0, cuda.find('.')).c_str());
}

std::string directory_of(const std::string& path) {
    const size_t slash = path.rfind('/');
    if (slash == std::string::npos)
        return "";
    return slash == 0 ? "/" : path.substr(0, slash);
}

// "2025-08-06T18:30:12.345678Z" -> seconds since the epoch; nullopt for anything else.
std::optional<uint64_t> parse_upload_time(const std::string& text) {
    std::tm parts{};
    int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
    if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d", &year, &month, &day, &hour, &minute,
                    &second) != 6)
        return std::nullopt;
    parts.tm_year = year - 1900;
    parts.tm_mon = month - 1;
    parts.tm_mday = day;
    parts.tm_hour = hour;
    parts.tm_min = minute;
    parts.tm_sec = second;
    const time_t seconds = timegm(&parts);
    if (seconds < 0)
        return std::nullopt;
    return static_cast<uint64_t>(seconds);
}

// The subject a recorded problem is about: the first of its usual fields that is present.
std::string problem_subject(const check::Problem& problem) {
    for (const char* key : {"soname", "object", "version", "distribution", "path", "file"}) {
        auto found = problem.fields.find(key);
        if (found != problem.fields.end() && found->is_string())
            return found->get<std::string>();
    }
    return "";
}

// The file names the closure check already named in a `cuda-major-mismatch` (it runs with the
// recipe's CUDA when the recipe has one): those are not reported a second time here.
std::set<std::string> mismatches_reported(const check::CheckReport& report) {
    std::set<std::string> out;
    for (const auto& problem : report.problems) {
        if (problem.kind != "cuda-major-mismatch")
            continue;
        auto libraries = problem.fields.find("libraries");
        if (libraries == problem.fields.end() || !libraries->is_array())
            continue;
        for (const auto& library : *libraries) {
            if (library.is_string())
                out.insert(fs::basename(library.get<std::string>()));
        }
    }
    return out;
}

// The closure's CUDA majors must be the recipe's: a cu13 library in a cu12 lock is a mix the
// loader would happily load, and the driver would not. The wheels' own sonames catch what no
// closure loads; what the closure check already named is left to it.
void check_cuda_agreement(const recipe::Recipe& recipe, const std::vector<FetchedWheel>& wheels,
                          const std::vector<std::string>& names, check::CheckReport& report) {
    if (!recipe.torch.has_value())
        return;
    const int expected = cuda_major(recipe.torch->cuda);
    const std::set<std::string> reported = mismatches_reported(report);
    nlohmann::ordered_json found = nlohmann::ordered_json::array();
    for (size_t i = 0; i < wheels.size(); ++i) {
        for (const auto& soname : wheels[i].scan->provides) {
            auto membership = check::cuda_membership(soname);
            if (!membership.has_value() || membership->cuda_major == expected ||
                reported.count(soname) != 0)
                continue;
            found.push_back({{"soname", soname},
                             {"cuda_major", membership->cuda_major},
                             {"distribution", names[i]}});
        }
    }
    if (found.empty())
        return;
    check::Problem problem;
    problem.kind = "cuda-major-mismatch";
    problem.fields = {
        {"expected_major", expected}, {"torch_cuda", recipe.torch->cuda}, {"libraries", found}};
    report.problems.push_back(std::move(problem));
    report.ok = false;
    check::sort_problems(report.problems);
}

}  // namespace

std::vector<recipe::IndexSection> effective_indexes(const recipe::Recipe& recipe) {
    if (!recipe.indexes.empty())
        return recipe.indexes;
    std::vector<recipe::IndexSection> out;
    if (recipe.torch.has_value()) {
        const std::string tag = cuda_tag(recipe.torch->cuda);
        out.push_back({"pytorch-" + tag,
                       "https://download.pytorch.org/whl/" + tag,
                       {"torch", "triton", "pytorch-triton", "nvidia-*"}});
    }
    out.push_back({"pypi", "https://pypi.org/simple", {}});
    return out;
}

util::Result<std::vector<std::string>> root_requirements(const recipe::Recipe& recipe) {
    std::vector<std::string> out;
    if (recipe.torch.has_value())
        out.push_back("torch==" + recipe.torch->version + "+" + cuda_tag(recipe.torch->cuda));
    for (const auto& text : recipe.requirements) {
        auto parsed = python::parse_requirement(text);
        if (!parsed.ok())
            return util::make_error("[packages] requires", parsed.error().text());
        if (recipe.torch.has_value() && parsed->normalized_name == "torch")
            return util::make_error("[packages] requires",
                                    "\"" + text + "\": torch is chosen by the [torch] table");
        out.push_back(python::to_string(*parsed));
    }
    return out;
}

util::Result<check::CheckReport> check_final_tree(const fs::FileTree& tree,
                                                  const fs::FileTree& base,
                                                  const FinalCheckOptions& final_options) {
    check::CheckOptions options;
    for (const auto& [name, value] : final_options.environment) {
        if (name == "LD_LIBRARY_PATH")
            options.model.ld_library_path = loader::split_path_list(value, true);
    }
    options.model.extra_host_provided = final_options.host_provides;
    options.cuda = final_options.cuda;
    options.driver = final_options.driver;
    ROOTLOCK_TRY(report, check::run_check(tree, options));
    for (auto& problem : check::tree_problems(base)) {
        report.problems.push_back(std::move(problem));
        report.ok = false;
    }
    if (!final_options.cache_dir.empty())
        add_cached_builds(final_options.cache_dir, report.problems);
    check::sort_problems(report.problems);
    return std::move(report);
}

std::string recipe_digest(std::string_view recipe_text) {
    return util::sha256_hex(recipe_text);
}

util::Result<LockOutcome> make_lock(const recipe::Recipe& recipe, const LockOptions& options) {
    LockOutcome outcome;
    using Clock = std::chrono::steady_clock;
    auto since = [](Clock::time_point start) {
        return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    };
    auto step = Clock::now();
    index::HttpClient http(options.http);
    index::ContentStore store(options.cache_dir);
    index::PageCache pages(options.cache_dir);

    // 1. The base, and the target it implies.
    BaseOptions base_options;
    base_options.recipe_dir = directory_of(options.recipe_path);
    base_options.offline = options.offline;
    ROOTLOCK_TRY(base, acquire_base(recipe.base, base_options, http, store, pages));
    ROOTLOCK_TRY(facts, read_base_facts(*base.tree, recipe.python.version, base.tree->describe()));
    const int minor = std::atoi(recipe.python.version.substr(2).c_str());
    int micro = 0;
    if (!facts.python_full.empty())
        micro = std::atoi(facts.python_full.substr(facts.python_full.rfind('.') + 1).c_str());
    const std::string python_full =
        facts.python_full.empty() ? recipe.python.version : facts.python_full;
    ROOTLOCK_TRY(python_version, python::parse_version(python_full));
    python::TargetTags target_tags{3,    minor, facts.arch, facts.glibc_major, facts.glibc_minor,
                                   false};
    python::SupportedTags tags(target_tags);

    outcome.stats.base_ms = since(step);
    step = Clock::now();

    // 2. Resolution over the indexes, for the declared target only.
    ROOTLOCK_TRY(root_texts, root_requirements(recipe));
    std::vector<python::Requirement> roots;
    for (const auto& text : root_texts) {
        ROOTLOCK_TRY(requirement, python::parse_requirement(text));
        roots.push_back(std::move(requirement));
    }
    std::vector<SourceIndex> indexes;
    for (const auto& section : effective_indexes(recipe))
        indexes.push_back({section.name, section.url, section.packages});
    index::IndexClient client(http, pages, store, options.offline);
    WheelFetcher fetcher(http, store, pages, options.offline, options.threads);
    IndexSource source(client, indexes, tags, python_version,
                       [&fetcher](const ChosenFile& file) { return fetcher.metadata(file); });
    resolve::ResolveOptions resolve_options;
    resolve_options.environment = python::linux_cpython(3, minor, micro, facts.arch);
    resolve_options.upgrade_all = options.upgrade_all;
    resolve_options.upgrade = options.upgrade;
    if (options.previous.has_value()) {
        for (const auto& package : options.previous->packages) {
            auto version = python::parse_version(package.version);
            if (version.ok())
                resolve_options.preferences.emplace(package.name, *version);
        }
    }
    std::vector<std::string> root_names;
    for (const auto& root : roots)
        root_names.push_back(root.normalized_name);
    source.prefetch_projects(root_names);
    ROOTLOCK_TRY(resolution, resolve::resolve(roots, source, resolve_options));

    outcome.stats.resolve_ms = since(step);
    step = Clock::now();

    // 3. The chosen wheels, fetched and scanned.
    std::vector<const ChosenFile*> chosen;
    std::vector<std::string> names;
    for (const auto& package : resolution.packages) {
        const ChosenFile* file = source.chosen(package.name, package.version);
        if (file == nullptr)
            return util::make_error(package.name,
                                    "the resolver chose a version the index did not offer");
        chosen.push_back(file);
        names.push_back(package.name);
    }
    auto fetched_results = fetcher.fetch(chosen);
    std::vector<FetchedWheel> wheels;
    for (auto& result : fetched_results) {
        if (!result.ok())
            return result.error();
        wheels.push_back(std::move(*result));
    }

    outcome.stats.fetch_ms = since(step);
    step = Clock::now();

    // 4. The closure of base plus wheels, installed where the image will have them.
    auto overlay = std::make_shared<fs::OverlayTree>(base.tree);
    python::InstallScheme scheme{recipe.python.venv, recipe.python.version};
    ROOTLOCK_TRY(venv_added, python::add_venv(*overlay, scheme, facts.python_interpreter));
    (void)venv_added;
    for (size_t i = 0; i < wheels.size(); ++i) {
        ROOTLOCK_TRY(added,
                     python::add_wheel(*overlay, *wheels[i].scan, scheme,
                                       resolution.packages[i].direct, facts.python_interpreter));
        (void)added;
    }
    if (auto extras = add_recipe_extras(*overlay, recipe.library_paths, recipe.files); !extras.ok())
        return extras.error();
    FinalCheckOptions final_check;
    final_check.environment = recipe.environment;
    final_check.host_provides = recipe.host_provides;
    final_check.cuda = recipe.torch.has_value() ? recipe.torch->cuda : "";
    final_check.driver = recipe.cuda.has_value() ? recipe.cuda->driver : "";
    final_check.cache_dir = options.cache_dir;
    ROOTLOCK_TRY(report, check_final_tree(*overlay, *base.tree, final_check));
    check_cuda_agreement(recipe, wheels, names, report);
    outcome.report = std::move(report);
    outcome.stats.check_ms = since(step);

    // 5. The lock.
    Lock& lock = outcome.lock;
    lock.requires_python = "==" + recipe.python.version + ".*";
    lock.environments.push_back("platform_machine == \"" + facts.arch +
                                "\" and python_version == \"" + recipe.python.version +
                                "\" and sys_platform == \"linux\"");
    std::optional<uint64_t> newest_upload;
    for (size_t i = 0; i < wheels.size(); ++i) {
        const auto& package = resolution.packages[i];
        const ChosenFile& file = *chosen[i];
        LockPackage out;
        out.name = package.name;
        out.version = python::to_string(package.version);
        out.requires_python = file.file.requires_python;
        out.index = file.index_url;
        for (const auto& dependency : package.dependencies) {
            auto found = std::find_if(resolution.packages.begin(), resolution.packages.end(),
                                      [&](const auto& p) { return p.name == dependency; });
            PackageDependency entry{dependency, std::nullopt};
            if (found != resolution.packages.end())
                entry.version = python::to_string(found->version);
            out.dependencies.push_back(std::move(entry));
        }
        LockWheel wheel;
        wheel.name = file.file.filename;
        wheel.url = file.file.url;
        wheel.size = wheels[i].size;
        wheel.upload_time = file.file.upload_time;
        wheel.hashes["sha256"] = wheels[i].sha256;
        if (file.file.upload_time.has_value()) {
            auto seconds = parse_upload_time(*file.file.upload_time);
            if (seconds.has_value() && (!newest_upload || *seconds > *newest_upload))
                newest_upload = seconds;
        }
        out.wheels.push_back(std::move(wheel));
        PackageRootlockData data;
        data.provides = wheels[i].scan->provides;
        data.needs = wheels[i].scan->needs;
        data.needs_versions = python::needed_versions(*wheels[i].scan);
        data.requested = package.direct;
        out.rootlock = std::move(data);
        lock.packages.push_back(std::move(out));
    }
    std::sort(lock.packages.begin(), lock.packages.end(), [](const auto& a, const auto& b) {
        return std::tie(a.name, a.version) < std::tie(b.name, b.version);
    });

    LockRootlockData data;
    data.recipe = options.recipe_record.empty() ? options.recipe_path : options.recipe_record;
    data.recipe_sha256 = recipe_digest(options.recipe_text);
    data.image_name = recipe.image.name;
    data.output = recipe.image.output;
    data.venv = recipe.python.venv;
    data.source_date_epoch = options.source_date_epoch.value_or(
        newest_upload.value_or(static_cast<uint64_t>(std::stoull(base_options.debian_epoch))));
    data.target.python = recipe.python.version;
    data.target.python_full = facts.python_full;
    data.target.glibc = facts.glibc();
    data.target.arch = facts.arch;
    if (recipe.torch.has_value()) {
        data.target.cuda = recipe.torch->cuda;
        data.target.torch = recipe.torch->version + "+" + cuda_tag(recipe.torch->cuda);
    }
    if (recipe.cuda.has_value())
        data.target.driver = recipe.cuda->driver;
    data.base = base.record;
    for (const auto& section : effective_indexes(recipe))
        data.indexes.push_back({section.name, section.url, section.packages});
    data.requirements = root_texts;
    data.environment = recipe.environment;
    data.host_provides = recipe.host_provides;
    data.library_paths = recipe.library_paths;
    data.files = recipe.files;
    data.compile_bytecode = recipe.python.compile_bytecode;
    data.closure_ok = outcome.report.ok;
    data.closure_objects = outcome.report.objects;
    for (const auto& problem : outcome.report.problems) {
        if (problem.severity != check::Severity::error)
            continue;
        data.problems.push_back({problem.kind, problem_subject(problem), problem.fields.dump()});
    }
    lock.rootlock = std::move(data);
    outcome.text = write_pylock(lock);

    outcome.target_summary =
        "CPython " + python_full + ", glibc " + facts.glibc() + ", " + facts.arch;
    if (recipe.torch.has_value())
        outcome.target_summary += ", torch " + lock.rootlock->target.torch;
    if (recipe.cuda.has_value())
        outcome.target_summary += ", driver " + recipe.cuda->driver;

    LockStats& stats = outcome.stats;
    stats.packages = lock.packages.size();
    stats.resolver_steps = resolution.steps;
    stats.backtracks = resolution.backtracks;
    stats.pages_fetched = client.stats().pages_fetched;
    stats.pages_revalidated = client.stats().pages_revalidated;
    stats.pages_from_cache = client.stats().pages_from_cache;
    stats.metadata_fetched = client.stats().metadata_fetched;
    stats.wheels_downloaded = fetcher.stats().downloaded;
    stats.wheels_scanned = fetcher.stats().scanned;
    stats.scans_from_cache = fetcher.stats().scans_from_cache;
    stats.http_requests = http.requests_made();
    return outcome;
}

}  // namespace rootlock::lock
