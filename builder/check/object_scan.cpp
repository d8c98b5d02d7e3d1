// Walks the checked paths once, probing every regular file as ELF; see object_scan.hpp.
#include "check/object_scan.hpp"

#include <algorithm>
#include <atomic>
#include <deque>
#include <thread>
#include <unordered_set>

#include "fs/path_resolve.hpp"
#include "fs/walk.hpp"

namespace rootlock::check {

bool is_extension_name(std::string_view name) {
    if (name.size() < 4 || name.substr(name.size() - 3) != ".so")
        return false;
    std::string_view stem = name.substr(0, name.size() - 3);
    size_t dot = stem.find('.');
    std::string_view module = stem.substr(0, dot);
    if (module.empty())
        return false;
    for (char c : module) {
        bool ident =
            (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
        if (!ident)
            return false;
    }
    if (dot == std::string_view::npos)
        return true;
    std::string_view tag = stem.substr(dot + 1);
    return tag == "abi3" || tag.substr(0, 8) == "cpython-" || tag.substr(0, 5) == "pypy3";
}

namespace {
bool under(const std::string& path, const std::string& dir) {
    return path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
           (dir == "/" || path[dir.size()] == '/');
}
// Probes every file as ELF (each one the walk saw as a regular file), dynamic symbols included,
// on up to two threads (the machines rootlock targets have few cores and the work is system
// calls); FileTree's probes are thread-safe.
std::vector<fs::ElfProbe> probe_all(const fs::FileTree& tree,
                                    const std::deque<std::string>& files) {
    std::vector<fs::ElfProbe> probes(files.size());
    std::atomic<size_t> next{0};
    auto work = [&] {
        for (size_t i = next++; i < files.size(); i = next++)
            probes[i] = tree.probe_regular_elf(files[i], true);
    };
    const unsigned threads =
        files.size() < 64 ? 1U : std::clamp(std::thread::hardware_concurrency(), 1U, 2U);
    std::vector<std::thread> pool;
    for (unsigned t = 1; t < threads; ++t)
        pool.emplace_back(work);
    work();
    for (auto& thread : pool)
        thread.join();
    return probes;
}
}  // namespace

Scan scan_objects(const fs::FileTree& tree, const std::vector<std::string>& paths,
                  const loader::Target& target, const std::vector<std::string>& site_dirs) {
    Scan scan;
    // First the candidate files, in walk order; then their headers, read on every core (the
    // probes are mostly open/pread/close, so this is where a scan spends its time); then the
    // classification, in walk order again so that the result does not depend on threads.
    // A deque, so that `seen` can hold views of its paths (43,000 on the torch root) rather
    // than copies; both sets go before the probes fill memory with symbols.
    std::deque<std::string> files;
    {
        std::unordered_set<std::string_view> seen;
        std::unordered_set<uint64_t> seen_identity;
        for (const auto& start : paths) {
            fs::walk(tree, start, [&](const std::string& path, const fs::NodeStat& stat) {
                // Shorter than an ELF header: nothing the loader could load or run.
                if (stat.kind != fs::NodeKind::regular || stat.size < 64)
                    return;
                if (seen.count(path) != 0)
                    return;
                // A file reached twice through hard links is one object. (A path refused
                // here need not be remembered: met again, it has the same identity.)
                if (stat.identity != 0 && !seen_identity.insert(stat.identity).second)
                    return;
                files.push_back(path);
                seen.insert(files.back());
            });
        }
    }
    std::vector<fs::ElfProbe> probes = probe_all(tree, files);

    for (size_t f = 0; f < files.size(); ++f) {
        const std::string& path = files[f];
        fs::ElfProbe& probe = probes[f];
        {
            if (probe.outcome == fs::ElfProbe::Outcome::malformed) {
                scan.bad_objects.emplace_back(path, probe.error);
                continue;
            }
            if (probe.outcome != fs::ElfProbe::Outcome::elf)
                continue;
            const elf::ElfInfo& info = *probe.info;
            if (info.type != elf::k_type_dyn && info.type != elf::k_type_exec)
                continue;
            if (info.elf_class != target.elf_class || info.machine != target.machine) {
                ++scan.foreign;
                const std::string what =
                    elf::machine_name(info.machine) + " " + elf::class_name(info.elf_class);
                scan.foreign_by_name[fs::basename(path)].emplace_back(path, what);
                if (!info.soname.empty() && info.soname != fs::basename(path))
                    scan.foreign_by_name[info.soname].emplace_back(path, what);
                continue;
            }
            if (!info.soname.empty())
                scan.by_soname[info.soname].push_back(path);
            scan.by_filename[fs::basename(path)].push_back(path);
            if (!info.has_dynamic)
                continue;  // static: nothing to resolve
            ScannedObject object;
            object.path = path;
            object.info = probe.info;
            for (size_t i = 0; i < site_dirs.size(); ++i) {
                if (under(path, site_dirs[i]))
                    object.environment = static_cast<int>(i);
            }
            if (!info.interpreter.empty()) {
                object.role = Role::program;
            } else if (object.environment >= 0 && is_extension_name(fs::basename(path)) &&
                       (info.soname.empty() ||
                        fs::basename(path).find('.') != fs::basename(path).rfind('.'))) {
                // "name.cpython-311-....so" is always an extension; a plain "name.so" only
                // without a SONAME, since "libfoo.so" libraries look the same.
                object.role = Role::extension;
            }
            scan.objects.push_back(std::move(object));
        }
    }
    std::sort(scan.objects.begin(), scan.objects.end(),
              [](const ScannedObject& a, const ScannedObject& b) { return a.path < b.path; });
    for (auto& [name, list] : scan.by_soname)
        std::sort(list.begin(), list.end());
    for (auto& [name, list] : scan.by_filename)
        std::sort(list.begin(), list.end());
    return scan;
}

}  // namespace rootlock::check
