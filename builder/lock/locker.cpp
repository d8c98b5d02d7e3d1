// The lock pipeline, step by step. Each step's failure is returned as it is (located by the step
// that found it); the closure verdict travels in the outcome so that the CLI can print the full
// report and decide whether the lock may be written.
#include "lock/locker.hpp"

#include <algorithm>
#include <chrono>
#include <ctime>

#include "assemble/cached_builds.hpp"
#include "assemble/final_check.hpp"
#include "assemble/machine_hygiene.hpp"
#include "assemble/recipe_extras.hpp"
#include "check/cuda_family.hpp"
#include "check/gpu_coverage.hpp"
#include "fetch/base_facts.hpp"
#include "fetch/base_source.hpp"
#include "fetch/wheel_fetcher.hpp"
#include "fs/overlay_tree.hpp"
#include "fs/path_resolve.hpp"
#include "index/content_store.hpp"
#include "index/index_client.hpp"
#include "index/page_cache.hpp"
#include "loader/dst.hpp"
#include "lock/index_source.hpp"
#include "python/metadata.hpp"
#include "python/pep508.hpp"
#include "python/wheel_install.hpp"
#include "python/wheel_scan.hpp"
#include "python/wheel_tags.hpp"
#include "resolve/resolver.hpp"
#include "util/json_text.hpp"
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
void check_cuda_agreement(const recipe::Recipe& recipe,
                          const std::vector<fetch::FetchedWheel>& wheels,
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

std::string recipe_digest(std::string_view recipe_text) {
    return util::sha256_hex(recipe_text);
}

namespace {

using Clock = std::chrono::steady_clock;

double milliseconds_since(Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// What one run of the pipeline carries from step to step.
struct LockRun {
    const recipe::Recipe& recipe;
    const LockOptions& options;
    index::HttpClient http;
    index::ContentStore store;
    index::PageCache pages;
    index::IndexClient client;
    fetch::WheelFetcher fetcher;
    fetch::BaseOptions base_options;

    check::StreamedDeviceCode base_device_code;  // read as the base streams, for [cuda] gpus
    std::optional<fetch::AcquiredBase> base;
    fetch::BaseFacts facts;
    std::string python_full;  // the base's interpreter, or the recipe's "3.N" when unknown
    std::optional<python::SupportedTags> tags;
    std::vector<std::string> root_texts;
    std::optional<IndexSource> source;
    resolve::Resolution resolution;
    std::vector<const ChosenFile*> chosen;  // in the resolution's order
    std::vector<fetch::FetchedWheel> wheels;

    LockRun(const recipe::Recipe& recipe_in, const LockOptions& options_in)
        : recipe(recipe_in),
          options(options_in),
          http(options_in.http),
          store(options_in.cache_dir),
          pages(options_in.cache_dir),
          client(http, pages, store, options_in.offline),
          fetcher(http, store, pages, options_in.offline, options_in.threads) {
        base_options.recipe_dir = directory_of(options.recipe_path);
        base_options.offline = options.offline;
        base_options.cache_dir = options.cache_dir;
        store.set_offline(options.offline);  // a damaged entry cannot be fetched again
        pages.set_offline(options.offline);
        if (options.previous.has_value() && options.previous->rootlock.has_value())
            base_options.previous = &options.previous->rootlock->base;
        base_options.upgrade = options.upgrade_all;
        if (recipe.cuda.has_value() && !recipe.cuda->gpus.empty())
            base_options.observe_elf = base_device_code.observer();
    }

    int python_minor() const { return std::atoi(recipe.python.version.substr(2).c_str()); }
};

// 1. The base, and the target it implies: never the machine running rootlock.
util::Status acquire_base_and_target(LockRun& run) {
    ROOTLOCK_TRY(base, fetch::acquire_base(run.recipe.base, run.base_options, run.http, run.store,
                                           run.pages));
    run.base = std::move(base);
    ROOTLOCK_TRY(facts, fetch::read_base_facts(*run.base->tree, run.recipe.python.version,
                                               run.base->tree->describe()));
    run.facts = std::move(facts);
    run.python_full =
        run.facts.python_full.empty() ? run.recipe.python.version : run.facts.python_full;
    python::TargetTags target_tags{
        3, run.python_minor(), run.facts.arch, run.facts.glibc_major, run.facts.glibc_minor, false};
    run.tags.emplace(target_tags);
    return util::ok_status();
}

// 2. Resolution over the indexes, for the declared target only; the previous lock's versions
// are preferred unless upgraded.
util::Status resolve_requirements(LockRun& run) {
    ROOTLOCK_TRY(root_texts, root_requirements(run.recipe));
    run.root_texts = std::move(root_texts);
    std::vector<python::Requirement> roots;
    for (const auto& text : run.root_texts) {
        ROOTLOCK_TRY(requirement, python::parse_requirement(text));
        roots.push_back(std::move(requirement));
    }
    std::vector<SourceIndex> indexes;
    for (const auto& section : effective_indexes(run.recipe))
        indexes.push_back({section.name, section.url, section.packages});
    ROOTLOCK_TRY(python_version, python::parse_version(run.python_full));
    int micro = 0;
    if (!run.facts.python_full.empty())
        micro =
            std::atoi(run.facts.python_full.substr(run.facts.python_full.rfind('.') + 1).c_str());
    resolve::ResolveOptions resolve_options;
    resolve_options.environment =
        python::linux_cpython(3, run.python_minor(), micro, run.facts.arch);
    run.source.emplace(run.client, indexes, *run.tags, python_version, resolve_options.environment,
                       [&run](const ChosenFile& file) { return run.fetcher.metadata(file); });
    resolve_options.upgrade_all = run.options.upgrade_all;
    resolve_options.upgrade = run.options.upgrade;
    if (run.options.previous.has_value()) {
        for (const auto& package : run.options.previous->packages) {
            auto version = python::parse_version(package.version);
            if (version.ok())
                resolve_options.preferences.emplace(package.name, *version);
        }
    }
    run.source->prefetch_requirements(roots);
    ROOTLOCK_TRY(resolution, resolve::resolve(roots, *run.source, resolve_options));
    run.resolution = std::move(resolution);
    return util::ok_status();
}

// 3. The chosen wheels, fetched in parallel and scanned (scans come from the cache when known).
util::Status fetch_chosen_wheels(LockRun& run) {
    for (const auto& package : run.resolution.packages) {
        const ChosenFile* file = run.source->chosen(package.name, package.version);
        if (file == nullptr)
            return util::make_error(package.name,
                                    "the resolver chose a version the index did not offer");
        run.chosen.push_back(file);
    }
    for (auto& result : run.fetcher.fetch(run.chosen)) {
        if (!result.ok())
            return result.error();
        run.wheels.push_back(std::move(*result));
    }
    return util::ok_status();
}

// 4. The closure of base plus wheels, installed where the image will have them, checked as the
// build will check it; then the recipe's CUDA major against the wheels' libraries.
util::Result<check::CheckReport> check_final_root(LockRun& run) {
    auto overlay = std::make_shared<fs::OverlayTree>(run.base->tree);
    python::InstallScheme scheme{run.recipe.python.venv, run.recipe.python.version};
    ROOTLOCK_TRY(venv_added, python::add_venv(*overlay, scheme, run.facts.python_interpreter));
    (void)venv_added;
    std::vector<std::string> names;
    std::vector<python::InstalledDeviceCode> device_code;
    for (size_t i = 0; i < run.wheels.size(); ++i) {
        const auto& package = run.resolution.packages[i];
        ROOTLOCK_TRY(added, python::add_wheel(*overlay, *run.wheels[i].scan, scheme, package.direct,
                                              run.facts.python_interpreter, &device_code));
        (void)added;
        names.push_back(package.name);
    }
    // Before the recipe's [files], which may set any of them on purpose.
    if (auto fixed = assemble::add_fixed_machine_files(*overlay); !fixed.ok())
        return fixed.error();
    if (auto extras =
            assemble::add_recipe_extras(*overlay, run.recipe.library_paths, run.recipe.files);
        !extras.ok())
        return extras.error();
    assemble::FinalCheckOptions final_check;
    final_check.environment = run.recipe.environment;
    final_check.host_provides = run.recipe.host_provides;
    final_check.cuda = run.recipe.torch.has_value() ? run.recipe.torch->cuda : "";
    final_check.driver = run.recipe.cuda.has_value() ? run.recipe.cuda->driver : "";
    final_check.cache_dir = run.options.cache_dir;
    final_check.gpus =
        run.recipe.cuda.has_value() ? run.recipe.cuda->gpus : std::vector<std::string>{};
    for (const auto& object : device_code)
        final_check.device_code.emplace(object.path, object.entry->architectures);
    final_check.base_device_code = run.base_device_code.found();
    ROOTLOCK_TRY(report, assemble::check_final_tree(*overlay, *run.base->tree, final_check));
    check_cuda_agreement(run.recipe, run.wheels, names, report);
    return std::move(report);
}

// 5a. One [[packages]] entry per chosen wheel, sorted; returns the newest upload time seen (the
// default SOURCE_DATE_EPOCH).
std::optional<uint64_t> lock_packages(const LockRun& run, pylock::Lock& lock) {
    const auto& packages = run.resolution.packages;
    std::optional<uint64_t> newest_upload;
    for (size_t i = 0; i < run.wheels.size(); ++i) {
        const auto& package = packages[i];
        const ChosenFile& file = *run.chosen[i];
        pylock::LockPackage out;
        out.name = package.name;
        out.version = python::to_string(package.version);
        out.requires_python = file.file.requires_python;
        out.index = file.index_url;
        for (const auto& dependency : package.dependencies) {
            auto found = std::find_if(packages.begin(), packages.end(),
                                      [&](const auto& p) { return p.name == dependency; });
            pylock::PackageDependency entry{dependency, std::nullopt};
            if (found != packages.end())
                entry.version = python::to_string(found->version);
            out.dependencies.push_back(std::move(entry));
        }
        pylock::LockWheel wheel;
        wheel.name = file.file.filename;
        wheel.url = file.file.url;
        wheel.size = run.wheels[i].size;
        wheel.upload_time = file.file.upload_time;
        wheel.hashes["sha256"] = run.wheels[i].sha256;
        if (file.file.upload_time.has_value()) {
            auto seconds = pylock::upload_time_seconds(*file.file.upload_time);
            if (seconds.has_value() && (!newest_upload || *seconds > *newest_upload))
                newest_upload = seconds;
        }
        out.wheels.push_back(std::move(wheel));
        pylock::PackageRootlockData data;
        data.provides = run.wheels[i].scan->provides;
        data.needs = run.wheels[i].scan->needs;
        data.needs_versions = python::needed_versions(*run.wheels[i].scan);
        data.architectures = python::wheel_architectures(*run.wheels[i].scan);
        data.requested = package.direct;
        if (file.file.yanked)
            data.yanked = file.file.yanked_reason;
        out.rootlock = std::move(data);
        lock.packages.push_back(std::move(out));
    }
    std::sort(lock.packages.begin(), lock.packages.end(), [](const auto& a, const auto& b) {
        return std::tie(a.name, a.version) < std::tie(b.name, b.version);
    });
    return newest_upload;
}

// 5b. [tool.rootlock]: what the recipe asked for, the target, the base and the closure verdict.
pylock::LockRootlockData lock_tool_data(const LockRun& run, std::optional<uint64_t> newest_upload,
                                        const check::CheckReport& report) {
    const recipe::Recipe& recipe = run.recipe;
    pylock::LockRootlockData data;
    data.recipe =
        run.options.recipe_record.empty() ? run.options.recipe_path : run.options.recipe_record;
    data.recipe_sha256 = recipe_digest(run.options.recipe_text);
    data.image_name = recipe.image.name;
    data.output = recipe.image.output;
    data.venv = recipe.python.venv;
    data.source_date_epoch = run.options.source_date_epoch.value_or(
        newest_upload.value_or(static_cast<uint64_t>(std::stoull(run.base_options.debian_epoch))));
    data.target.python = recipe.python.version;
    data.target.python_full = run.facts.python_full;
    data.target.glibc = run.facts.glibc();
    data.target.arch = run.facts.arch;
    if (recipe.torch.has_value()) {
        data.target.cuda = recipe.torch->cuda;
        data.target.torch = recipe.torch->version + "+" + cuda_tag(recipe.torch->cuda);
    }
    if (recipe.cuda.has_value()) {
        data.target.driver = recipe.cuda->driver;
        data.target.gpus = recipe.cuda->gpus;
    }
    data.base = run.base->record;
    for (const auto& section : effective_indexes(recipe))
        data.indexes.push_back({section.name, section.url, section.packages});
    data.requirements = run.root_texts;
    data.environment = recipe.environment;
    data.host_provides = recipe.host_provides;
    data.library_paths = recipe.library_paths;
    data.files = recipe.files;
    data.compile_bytecode = recipe.python.compile_bytecode;
    data.entrypoint = recipe.image.entrypoint;
    data.cmd = recipe.image.cmd;
    data.closure_ok = report.ok;
    data.closure_objects = report.objects;
    for (const auto& problem : report.problems) {
        if (problem.severity != check::Severity::error)
            continue;
        data.problems.push_back(
            {problem.kind, problem_subject(problem), util::json_text(problem.fields)});
    }
    return data;
}

// "CPython 3.11.2, glibc 2.36, x86_64, torch 2.8.0+cu128, driver 570.133.07"
std::string target_summary(const LockRun& run, const pylock::Lock& lock) {
    std::string out =
        "CPython " + run.python_full + ", glibc " + run.facts.glibc() + ", " + run.facts.arch;
    if (run.recipe.torch.has_value())
        out += ", torch " + lock.rootlock->target.torch;
    if (run.recipe.cuda.has_value())
        out += ", driver " + run.recipe.cuda->driver;
    return out;
}

// The yanked wheels chosen, with the pins that chose them, for the CLI's warnings.
std::vector<YankedChoice> yanked_choices(const LockRun& run) {
    std::vector<YankedChoice> out;
    for (size_t i = 0; i < run.chosen.size(); ++i) {
        const auto& package = run.resolution.packages[i];
        if (!run.chosen[i]->file.yanked)
            continue;
        out.push_back({package.name, python::to_string(package.version),
                       run.chosen[i]->file.yanked_reason, package.yanked_by});
    }
    return out;
}

void count_work(const LockRun& run, const pylock::Lock& lock, LockStats& stats) {
    stats.packages = lock.packages.size();
    stats.resolver_steps = run.resolution.steps;
    stats.backtracks = run.resolution.backtracks;
    stats.pages_fetched = run.client.stats().pages_fetched;
    stats.pages_revalidated = run.client.stats().pages_revalidated;
    stats.pages_from_cache = run.client.stats().pages_from_cache;
    stats.metadata_fetched = run.client.stats().metadata_fetched;
    stats.wheels_downloaded = run.fetcher.stats().downloaded;
    stats.wheels_scanned = run.fetcher.stats().scanned;
    stats.scans_from_cache = run.fetcher.stats().scans_from_cache;
    stats.http_requests = run.http.requests_made();
}

}  // namespace

util::Result<LockOutcome> make_lock(const recipe::Recipe& recipe, const LockOptions& options) {
    // One lock, one target: a recipe of several architectures is expanded by the caller.
    if (recipe.base.debian.has_value() && recipe.base.debian->architectures.size() > 1)
        return util::make_error(options.recipe_path,
                                "names " +
                                    std::to_string(recipe.base.debian->architectures.size()) +
                                    " architectures; a lock is made for one of them at a time");
    LockRun run(recipe, options);
    LockOutcome outcome;
    auto timed = [](double& into, auto&& step) {
        const auto start = Clock::now();
        auto status = step();
        into = milliseconds_since(start);
        return status;
    };
    if (auto s = timed(outcome.stats.base_ms, [&] { return acquire_base_and_target(run); });
        !s.ok())
        return s.error();
    if (auto s = timed(outcome.stats.resolve_ms, [&] { return resolve_requirements(run); });
        !s.ok())
        return s.error();
    if (auto s = timed(outcome.stats.fetch_ms, [&] { return fetch_chosen_wheels(run); }); !s.ok())
        return s.error();
    auto report = timed(outcome.stats.check_ms, [&] { return check_final_root(run); });
    if (!report.ok())
        return report.error();
    outcome.report = std::move(*report);

    pylock::Lock& lock = outcome.lock;
    lock.requires_python = "==" + recipe.python.version + ".*";
    lock.environments.push_back("platform_machine == \"" + run.facts.arch +
                                "\" and python_version == \"" + recipe.python.version +
                                "\" and sys_platform == \"linux\"");
    const auto newest_upload = lock_packages(run, lock);
    lock.rootlock = lock_tool_data(run, newest_upload, outcome.report);
    outcome.text = pylock::write_pylock(lock);
    outcome.target_summary = target_summary(run, lock);
    outcome.yanked = yanked_choices(run);
    outcome.downgrades = run.resolution.downgrades;
    count_work(run, lock, outcome.stats);
    return outcome;
}

}  // namespace rootlock::lock
