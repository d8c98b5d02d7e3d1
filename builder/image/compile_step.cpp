// compile_plans: gathers the sources (generated content or the wheel member's bytes), runs the
// compiler once for all wheels (one interpreter start, not one per wheel) and hands the results
// back to each plan.
#include "image/compile_step.hpp"

#include <utility>

#include "fs/zip_index.hpp"
#include "python/bytecode.hpp"

namespace rootlock::image {

namespace {

util::Result<std::string> read_member(const fs::ZipIndex& zip, const std::string& name) {
    const fs::ZipMember* member = zip.find(name);
    if (member == nullptr)
        return util::make_error(zip.name, name + ": not in the wheel");
    auto stream = fs::open_member(zip, *member);
    std::string out;
    std::vector<std::byte> buffer(1U << 16);
    while (true) {
        ROOTLOCK_TRY(count, stream->read(buffer));
        if (count == 0)
            return out;
        out.append(reinterpret_cast<const char*>(buffer.data()), count);
    }
}

}  // namespace

util::Result<size_t> compile_plans(std::vector<std::vector<python::InstalledFile>>& plans,
                                   const CompileStepInput& input) {
    const std::string site = python::site_packages(input.scheme) + "/";
    std::vector<python::BytecodeJob> jobs;
    std::vector<size_t> owner;  // the plan of each job
    for (size_t i = 0; i < plans.size(); ++i) {
        std::unique_ptr<fs::ZipIndex> zip;
        for (const python::InstalledFile& file : plans[i]) {
            if (!file.path.starts_with(site) || !file.path.ends_with(".py"))
                continue;
            python::BytecodeJob job;
            job.path = file.path;
            if (file.has_content) {
                job.source = file.content;
            } else if (file.source != nullptr) {
                if (!zip) {
                    ROOTLOCK_TRY(opened, fs::index_zip(input.wheel_paths[i], input.wheel_names[i]));
                    zip = std::make_unique<fs::ZipIndex>(std::move(opened));
                }
                ROOTLOCK_TRY(source, read_member(*zip, file.source->path));
                job.source = std::move(source);
            } else {
                continue;
            }
            jobs.push_back(std::move(job));
            owner.push_back(i);
        }
    }
    python::BytecodeOptions options;
    options.python_version = python::python_major_minor(input.scheme);
    options.python_full = input.python_full;
    options.temp_dir = input.temp_dir;
    ROOTLOCK_TRY(results, python::compile_bytecode(jobs, options));
    std::vector<std::vector<std::pair<std::string, std::string>>> pycs(plans.size());
    size_t compiled = 0;
    for (size_t j = 0; j < jobs.size(); ++j) {
        if (!results[j])
            continue;
        pycs[owner[j]].emplace_back(python::pyc_path_for(jobs[j].path, options.python_version),
                                    std::move(*results[j]));
        ++compiled;
    }
    for (size_t i = 0; i < plans.size(); ++i) {
        if (auto status = python::add_compiled(plans[i], input.scheme, std::move(pycs[i]));
            !status.ok())
            return status.error();
    }
    return compiled;
}

}  // namespace rootlock::image
