// Walks the checked paths once, probing every regular file as ELF; see object_scan.hpp.
#include "check/object_scan.hpp"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <mutex>
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
// The walk's regular files, probed as ELF (dynamic symbols included) on a worker thread
// while the walk goes on, then on the walking thread as well: the walk is directory reads and the
// probes are mostly open/pread/close, so each keeps a core busy. Files and their probes sit in
// deques, which keep their elements in place as the walk appends, so a worker reads its path and
// writes its probe unlocked. FileTree's probes are thread-safe.
class ProbePipeline {
  public:
    explicit ProbePipeline(const fs::FileTree& tree) : m_tree(tree) {
        // One worker while the walk runs, the walking thread too once it is done: no more
        // threads (each with a malloc arena of its own) than cores.
        const unsigned threads = std::clamp(std::thread::hardware_concurrency(), 1U, 2U);
        for (unsigned t = 1; t < threads; ++t)
            m_workers.emplace_back([this] { work(); });
    }
    ProbePipeline(const ProbePipeline&) = delete;
    ProbePipeline& operator=(const ProbePipeline&) = delete;
    ~ProbePipeline() { finish(); }

    // Appends a file to probe; the returned path stays in place until the pipeline goes.
    const std::string& add(std::string path) {
        std::lock_guard lock(m_mutex);
        m_files.push_back(std::move(path));
        m_probes.emplace_back();
        m_ready.notify_one();
        return m_files.back();
    }
    // Waits for every probe; then files() and probes() are the walk's files and their probes.
    void finish() {
        {
            std::lock_guard lock(m_mutex);
            m_walked = true;
        }
        m_ready.notify_all();
        work();
        for (auto& worker : m_workers)
            worker.join();
        m_workers.clear();
    }
    const std::deque<std::string>& files() const { return m_files; }
    std::deque<fs::ElfProbe>& probes() { return m_probes; }

  private:
    void work() {
        while (true) {
            const std::string* path = nullptr;
            fs::ElfProbe* probe = nullptr;
            {
                std::unique_lock lock(m_mutex);
                m_ready.wait(lock, [&] { return m_walked || m_next < m_files.size(); });
                if (m_next == m_files.size())
                    return;  // walked, and nothing left
                path = &m_files[m_next];
                probe = &m_probes[m_next];
                ++m_next;
            }
            *probe = m_tree.probe_regular_elf(*path, true);
        }
    }

    const fs::FileTree& m_tree;
    std::mutex m_mutex;
    std::condition_variable m_ready;
    std::deque<std::string> m_files;
    std::deque<fs::ElfProbe> m_probes;
    size_t m_next = 0;  // the next file a worker takes
    bool m_walked = false;
    std::vector<std::thread> m_workers;
};
}  // namespace

Scan scan_objects(const fs::FileTree& tree, const std::vector<std::string>& paths,
                  const loader::Target& target, const std::vector<std::string>& site_dirs) {
    Scan scan;
    // The candidate files in walk order, probed while the walk goes on; then the
    // classification, in walk order again so that the result does not depend on threads.
    // `seen` holds views of the pipeline's paths (43,000 on the torch root) rather than copies;
    // both sets go before the classification.
    ProbePipeline pipeline(tree);
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
                seen.insert(pipeline.add(path));
            });
        }
    }
    pipeline.finish();
    const std::deque<std::string>& files = pipeline.files();
    std::deque<fs::ElfProbe>& probes = pipeline.probes();

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
