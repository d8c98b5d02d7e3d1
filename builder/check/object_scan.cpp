// Walks the checked paths once, probing every regular file as ELF; see object_scan.hpp.
#include "check/object_scan.hpp"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <memory_resource>
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
bool under(std::string_view path, std::string_view dir) {
    return path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
           (dir == "/" || path[dir.size()] == '/');
}
// The walk's regular files, probed as ELF (dynamic symbols included) on a worker thread
// while the walk goes on, then on the walking thread as well: the walk is directory reads and the
// probes are mostly open/read/close, so each keeps a core busy. Files go in batches of one
// directory's consecutive files, which a tree over the host reads with one system call each
// (FileTree::probe_regular_elf_batch). Files, probes and batches sit in deques, which keep their
// elements in place as the walk appends, so a worker reads its paths and writes its probes
// unlocked once it has taken their addresses. FileTree's probes are thread-safe. All of it
// lives in the scan's arena (allocated by the walking thread alone), so that the 43,000 paths
// and probes a torch root holds go back whole when the scan ends, not as small holes between
// the symbol tables that stay.
class ProbePipeline {
  public:
    ProbePipeline(const fs::FileTree& tree, std::pmr::memory_resource* arena)
        : m_tree(tree), m_files(arena), m_probes(arena), m_batches(arena) {
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
    std::string_view add(std::string_view path) {
        const size_t slash = path.rfind('/');
        const std::string_view dir = path.substr(0, slash == 0 ? 1 : slash);
        std::lock_guard lock(m_mutex);
        const bool same_dir =
            m_open_count > 0 && m_open_dir_size == dir.size() &&
            std::string_view(m_files[m_open_first]).substr(0, m_open_dir_size) == dir;
        if (m_open_count == k_batch_files || (m_open_count > 0 && !same_dir))
            close_batch();
        if (m_open_count == 0) {
            m_open_first = m_files.size();
            m_open_dir_size = dir.size();
        }
        m_files.emplace_back(path);
        m_probes.emplace_back();
        ++m_open_count;
        return m_files.back();
    }
    // Waits for every probe; then files() and probes() are the walk's files and their probes.
    void finish() {
        {
            std::lock_guard lock(m_mutex);
            if (m_open_count > 0)
                close_batch();
            m_walked = true;
        }
        m_ready.notify_all();
        work();
        for (auto& worker : m_workers)
            worker.join();
        m_workers.clear();
    }
    const std::pmr::deque<std::pmr::string>& files() const { return m_files; }
    std::pmr::deque<fs::ElfProbe>& probes() { return m_probes; }

  private:
    // Files a batch holds at most: enough to spare the kernel calls, few enough that the
    // worker starts while the walk is still in the first directories.
    static constexpr size_t k_batch_files = 64;

    struct Batch {
        size_t first = 0;  // index into m_files
        size_t count = 0;
        size_t dir_size = 0;  // the directory's length in each of the batch's paths
    };

    void close_batch() {  // m_mutex held
        m_batches.push_back(Batch{m_open_first, m_open_count, m_open_dir_size});
        m_open_count = 0;
        m_ready.notify_one();
    }

    void work() {
        std::vector<std::string_view> names;
        std::vector<fs::ElfProbe*> probes;
        while (true) {
            std::string_view dir;
            names.clear();
            probes.clear();
            {
                std::unique_lock lock(m_mutex);
                m_ready.wait(lock, [&] { return m_walked || m_next < m_batches.size(); });
                if (m_next == m_batches.size())
                    return;  // walked, and nothing left
                const Batch batch = m_batches[m_next++];
                const std::pmr::string& first = m_files[batch.first];
                dir = std::string_view(first).substr(0, batch.dir_size);
                const size_t name_at = batch.dir_size == 1 ? 1 : batch.dir_size + 1;
                for (size_t f = batch.first; f < batch.first + batch.count; ++f) {
                    names.push_back(std::string_view(m_files[f]).substr(name_at));
                    probes.push_back(&m_probes[f]);
                }
            }
            auto found = m_tree.probe_regular_elf_batch(dir, names, true);
            for (size_t i = 0; i < probes.size(); ++i)
                *probes[i] = std::move(found[i]);
        }
    }

    const fs::FileTree& m_tree;
    std::mutex m_mutex;
    std::condition_variable m_ready;
    std::pmr::deque<std::pmr::string> m_files;
    std::pmr::deque<fs::ElfProbe> m_probes;
    std::pmr::deque<Batch> m_batches;
    size_t m_next = 0;  // the next batch a worker takes
    // The batch the walk is filling: its first file, its size, its directory's length.
    size_t m_open_first = 0;
    size_t m_open_count = 0;
    size_t m_open_dir_size = 0;
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
    std::pmr::monotonic_buffer_resource arena;
    ProbePipeline pipeline(tree, &arena);
    {
        std::pmr::unordered_set<std::string_view> seen(&arena);
        std::pmr::unordered_set<uint64_t> seen_identity(&arena);
        // Buckets for a large root at once: growing from a few rehashed every identity about
        // fifteen times on the torch root's 43,000 files, each rehash left in the arena.
        seen_identity.reserve(size_t{1} << 16);
        for (const auto& start : paths) {
            fs::walk(tree, start, [&](const std::string& path, const fs::NodeStat& stat) {
                // Shorter than an ELF header: nothing the loader could load or run.
                if (stat.kind != fs::NodeKind::regular || stat.size < 64)
                    return;
                // A file reached twice, through hard links or from two starting paths, is one
                // object: its identity says so where the tree knows it (a path refused here
                // need not be remembered: met again, it has the same identity), its path
                // where it does not.
                if (stat.identity != 0) {
                    if (seen_identity.insert(stat.identity).second)
                        pipeline.add(path);
                    return;
                }
                if (seen.count(path) == 0)
                    seen.insert(pipeline.add(path));
            });
        }
    }
    pipeline.finish();
    const std::pmr::deque<std::pmr::string>& files = pipeline.files();
    std::pmr::deque<fs::ElfProbe>& probes = pipeline.probes();

    for (size_t f = 0; f < files.size(); ++f) {
        const std::string_view path = files[f];
        fs::ElfProbe& probe = probes[f];
        {
            if (probe.outcome == fs::ElfProbe::Outcome::malformed) {
                scan.bad_objects.emplace_back(std::string(path), probe.error);
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
                scan.foreign_by_name[fs::basename(path)].emplace_back(std::string(path), what);
                if (!info.soname.empty() && info.soname != fs::basename(path))
                    scan.foreign_by_name[info.soname].emplace_back(std::string(path), what);
                continue;
            }
            if (!info.soname.empty())
                scan.by_soname[info.soname].emplace_back(path);
            scan.by_filename[fs::basename(path)].emplace_back(path);
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
